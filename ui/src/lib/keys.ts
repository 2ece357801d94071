// Keyboard shortcuts shared by the views. Ctrl on Linux and Windows, Cmd on macOS.

/** Whether the key went to a text field, where plain keys (`/`, arrows) are the user's typing
 * and must not trigger shortcuts. */
export function isTyping(event: KeyboardEvent): boolean {
  const target = event.target;
  if (!(target instanceof HTMLElement)) return false;
  return (
    target instanceof HTMLInputElement ||
    target instanceof HTMLTextAreaElement ||
    target instanceof HTMLSelectElement ||
    target.isContentEditable
  );
}

/** Whether `event` is Ctrl+`key` (Cmd+`key` on macOS), without Shift or Alt. */
export function isCommand(event: KeyboardEvent, key: string): boolean {
  return (
    (event.ctrlKey || event.metaKey) &&
    !event.shiftKey &&
    !event.altKey &&
    event.key.toLowerCase() === key
  );
}
