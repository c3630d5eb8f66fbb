import { type ReactNode, useEffect, useId, useRef } from 'react';
import { useT } from '../store';

interface DialogProps {
  title: string;
  onClose: () => void;
  children: ReactNode;
  /** Wider dialogs for editors. */
  wide?: boolean;
  /** When given, Escape and × call it instead of closing (an editor asks before dropping edits). */
  onRequestClose?: () => void;
}

/**
 * A modal dialog on the native <dialog>: focus moves in and is trapped, Escape closes it, and focus
 * returns to where it was when it closes.
 */
export function Dialog({ title, onClose, children, wide, onRequestClose }: DialogProps) {
  const t = useT();
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const onCloseRef = useRef(onClose);
  onCloseRef.current = onClose;
  const requestRef = useRef(onRequestClose);
  requestRef.current = onRequestClose;

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const previous = document.activeElement as HTMLElement | null;
    dialog.showModal();
    const closed = () => onCloseRef.current();
    const cancel = (event: Event) => {
      if (!requestRef.current) return;
      event.preventDefault();
      requestRef.current();
    };
    dialog.addEventListener('close', closed);
    dialog.addEventListener('cancel', cancel);
    return () => {
      dialog.removeEventListener('close', closed);
      dialog.removeEventListener('cancel', cancel);
      if (dialog.open) dialog.close();
      previous?.focus?.();
    };
  }, []);

  return (
    <dialog ref={ref} className={wide ? 'dialog dialog-wide' : 'dialog'} aria-labelledby={titleId}>
      <div className="dialog-header">
        <h2 id={titleId}>{title}</h2>
        <button
          type="button"
          className="icon-button"
          aria-label={t('common.close')}
          onClick={() => (requestRef.current ? requestRef.current() : ref.current?.close())}
        >
          ×
        </button>
      </div>
      <div className="dialog-body">{children}</div>
    </dialog>
  );
}
