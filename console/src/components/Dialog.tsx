import { useEffect, useId, useRef, type ReactNode } from 'react';

const focusable =
  'a[href], button:not([disabled]), input:not([disabled]):not([type="hidden"]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

interface DialogProps {
  title: string;
  /** alertdialog for confirmations of destructive actions. */
  role?: 'dialog' | 'alertdialog';
  /** Escape and the × button call this. */
  onClose(): void;
  children: ReactNode;
  /** An element id inside the dialog that describes it (aria-describedby). */
  describedBy?: string;
  /** The element to focus first (a CSS selector within the dialog); default the first field or button. */
  initialFocus?: string;
}

/**
 * A modal dialog on the native <dialog> element (showModal makes the rest of the page inert), with focus
 * kept inside on Tab, Escape to close, and focus returned to what opened it.
 */
export function Dialog({ title, role = 'dialog', onClose, children, describedBy, initialFocus }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const onCloseRef = useRef(onClose);
  onCloseRef.current = onClose;

  useEffect(() => {
    const dialog = ref.current!;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (!dialog.open) dialog.showModal();
    const first =
      (initialFocus ? dialog.querySelector<HTMLElement>(initialFocus) : null) ??
      dialog.querySelector<HTMLElement>(`.dialog-body ${focusable}`) ??
      dialog.querySelector<HTMLElement>(focusable);
    first?.focus();
    return () => {
      if (dialog.open) dialog.close();
      if (opener && opener.isConnected) opener.focus();
    };
  }, []);

  return (
    <dialog
      ref={ref}
      role={role === 'alertdialog' ? 'alertdialog' : undefined}
      aria-modal="true"
      aria-labelledby={titleId}
      aria-describedby={describedBy}
      className="dialog"
      onCancel={(event) => {
        event.preventDefault();
        onCloseRef.current();
      }}
      onKeyDown={(event) => {
        if (event.key === 'Escape') {
          event.preventDefault();
          onCloseRef.current();
          return;
        }
        if (event.key !== 'Tab') return;
        const items = Array.from(ref.current!.querySelectorAll<HTMLElement>(focusable)).filter(
          (el) => el.offsetParent !== null || el === document.activeElement,
        );
        if (items.length === 0) return;
        const firstItem = items[0]!;
        const lastItem = items[items.length - 1]!;
        if (event.shiftKey && (document.activeElement === firstItem || !ref.current!.contains(document.activeElement))) {
          event.preventDefault();
          lastItem.focus();
        } else if (!event.shiftKey && document.activeElement === lastItem) {
          event.preventDefault();
          firstItem.focus();
        }
      }}
    >
      <div className="dialog-header">
        <h2 id={titleId}>{title}</h2>
      </div>
      <div className="dialog-body">{children}</div>
    </dialog>
  );
}
