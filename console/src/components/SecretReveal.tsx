import { useId, useState, type ReactNode } from 'react';

/**
 * A secret shown once (an API key, a password reset token): a read-only field with Copy, the warning that it will
 * not be shown again, and Done. Linepack keeps only a hash of each, so what is not copied now is gone.
 */
export function SecretReveal({
  secret,
  label,
  heading,
  warning,
  children,
  onDone,
}: {
  secret: string;
  /** The field's label, e.g. "New API key secret". */
  label: string;
  /** A heading above it, when the dialog's own title does not say it already. */
  heading?: string;
  /** What the secret is and why to copy it now (after the bold "not shown again"). */
  warning: ReactNode;
  /** More to say below the field (e.g. where to use it). */
  children?: ReactNode;
  onDone(): void;
}) {
  const fieldId = useId();
  const warningId = useId();
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('yes');
    } catch {
      const field = document.getElementById(fieldId) as HTMLInputElement | null;
      field?.focus();
      field?.select();
      setCopied('failed');
    }
  };
  return (
    <div className="secret">
      {heading ? <h3>{heading}</h3> : null}
      <p id={warningId} className="warning">
        <strong>Copy this now: it will not be shown again.</strong> {warning}
      </p>
      <div className="field">
        <label htmlFor={fieldId}>{label}</label>
        <div className="secret-row">
          <input
            id={fieldId}
            type="text"
            readOnly
            value={secret}
            className="mono"
            aria-describedby={warningId}
            spellCheck={false}
            autoComplete="off"
            onFocus={(e) => e.target.select()}
          />
          <button type="button" className="button" onClick={() => void copy()}>
            {copied === 'yes' ? 'Copied' : 'Copy'}
          </button>
        </div>
        {copied === 'failed' ? <p className="hint">The browser did not allow copying: the text is selected, press Ctrl+C (⌘C on a Mac).</p> : null}
      </div>
      {children}
      <div className="dialog-actions">
        <button type="button" className="button button-primary" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
