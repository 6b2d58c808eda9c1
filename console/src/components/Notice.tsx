import type { ReactNode } from 'react';

/** An error, said in words, announced to screen readers (role="alert"). */
export function ErrorAlert({ children, onRetry }: { children: ReactNode; onRetry?: () => void }) {
  if (!children) return null;
  return (
    <div role="alert" className="alert alert-error">
      <span>{children}</span>
      {onRetry ? (
        <button type="button" className="button button-small" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

/** A polite status line (loading, empty states, permission notes). */
export function Status({ children, tone = 'info' }: { children: ReactNode; tone?: 'info' | 'muted' | 'success' }) {
  return (
    <p role="status" className={`status status-${tone}`}>
      {children}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p role="status" className="status status-muted status-loading" aria-live="polite">
      Loading {what}…
    </p>
  );
}
