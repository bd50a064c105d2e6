import { useState, type FormEvent, type KeyboardEvent, type Ref } from 'react';

export const MAX_MESSAGE_LENGTH = 100_000;

export interface ComposerProps {
  /** A run is going: Stop replaces Send. */
  running: boolean;
  /** Sending is not possible right now (history loading, offline). */
  disabled: boolean;
  onSend: (message: string) => void;
  onStop: () => void;
  /** A stop was asked for and is not answered as failed: Stop says "Stopping…" and is not pressed again. Default false. */
  stopping?: boolean;
  /** The message box, for the chat to move the focus to it. */
  inputRef?: Ref<HTMLTextAreaElement>;
}

/** Focuses the message box and types `text` at its caret, as the person would have: the box's onChange sees it. */
export function focusAndType(box: HTMLTextAreaElement, text: string): void {
  box.focus();
  if (text === '') return;
  const { selectionStart: start, selectionEnd: end, value } = box;
  // React watches the value through the element's own setter and would take this for its own update, not the
  // person's: the prototype's setter leaves the change for the input event to report.
  Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value')?.set?.call(box, value.slice(0, start) + text + value.slice(end));
  box.setSelectionRange(start + text.length, start + text.length);
  box.dispatchEvent(new Event('input', { bubbles: true }));
}

export function Composer({ running, disabled, onSend, onStop, stopping = false, inputRef }: ComposerProps) {
  const [text, setText] = useState('');
  const canSend = !running && !disabled && text.trim() !== '';

  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    if (!canSend) return;
    onSend(text);
    setText('');
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      submit();
    }
  };

  return (
    <form className="composer" onSubmit={submit}>
      <textarea
        ref={inputRef}
        aria-label="Message"
        placeholder={running ? 'The model is working… you can type your next message.' : 'Message (Enter to send, Shift+Enter for a new line)'}
        value={text}
        maxLength={MAX_MESSAGE_LENGTH}
        rows={Math.min(8, Math.max(2, text.split('\n').length))}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={onKeyDown}
      />
      {running ? (
        <button type="button" className="btn btn-stop" onClick={onStop} disabled={stopping} aria-busy={stopping}>
          {stopping ? 'Stopping…' : 'Stop'}
        </button>
      ) : (
        <button type="submit" className="btn btn-primary" disabled={!canSend}>
          Send
        </button>
      )}
    </form>
  );
}
