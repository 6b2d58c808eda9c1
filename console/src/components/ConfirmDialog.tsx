import { useId, useState, type ReactNode } from 'react';
import { Dialog } from './Dialog';
import { ErrorAlert } from './Notice';
import { messageOf } from '../errors';

/**
 * A confirmation before an action that cannot be taken back (revoke, rotate, remove, sign out everywhere): an
 * alertdialog that says what will happen, with the focus on Cancel so Enter does nothing rash. `onConfirm` does the
 * action; what it throws is said in the dialog, which stays open for another try.
 */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  tone = 'danger',
  onConfirm,
  onClose,
}: {
  title: string;
  /** What happens, in words. */
  children: ReactNode;
  confirmLabel: string;
  tone?: 'danger' | 'primary';
  onConfirm(): Promise<void>;
  onClose(): void;
}) {
  const descriptionId = useId();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  };
  return (
    <Dialog title={title} role="alertdialog" onClose={onClose} describedBy={descriptionId} initialFocus="[data-cancel]">
      <div id={descriptionId}>{children}</div>
      <ErrorAlert>{error}</ErrorAlert>
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onClose} data-cancel>
          Cancel
        </button>
        <button type="button" className={`button button-${tone}`} onClick={() => void confirm()} disabled={busy}>
          {confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}
