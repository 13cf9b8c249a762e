// A modal dialog for keyboard users: focus starts on its first field, Tab
// and Shift+Tab wrap around its controls instead of reaching the app behind
// it, Esc closes it, and focus goes back to whatever opened it. Used as a
// Svelte action (`use:trapFocus={onClose}`); plain DOM, no framework import.

const FOCUSABLE = [
  "a[href]",
  "button:not([disabled])",
  "input:not([disabled])",
  "select:not([disabled])",
  "textarea:not([disabled])",
  '[tabindex]:not([tabindex="-1"])',
].join(", ");

/** Controls that can take the focus: not hidden, inert or disabled (also by a disabled fieldset around them). */
function focusables(root: HTMLElement, selector = FOCUSABLE): HTMLElement[] {
  return [...root.querySelectorAll<HTMLElement>(selector)].filter((el) => !el.closest("[hidden], [inert]") && !el.matches(":disabled"));
}

export function trapFocus(dialog: HTMLElement, onEscape: () => void): { update: (next: () => void) => void; destroy: () => void } {
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  let escape = onEscape;
  const firstStop = (): HTMLElement => focusables(dialog, "input, select, textarea")[0] ?? focusables(dialog)[0] ?? dialog;
  firstStop().focus();

  // On the document, in the capture phase: it works even when a click on the
  // backdrop left focus on <body>, and Esc here must not also stop the agent
  // (the chat listens for Esc on the window).
  function onKeydown(event: KeyboardEvent): void {
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      escape();
      return;
    }
    if (event.key !== "Tab") return;
    const items = focusables(dialog);
    const first = items[0];
    const last = items.at(-1);
    const active = document.activeElement;
    const outside = !(active instanceof Node) || !dialog.contains(active) || active === dialog;
    if (!first || !last) {
      event.preventDefault();
      dialog.focus();
    } else if (event.shiftKey && (active === first || outside)) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && (active === last || outside)) {
      event.preventDefault();
      first.focus();
    }
  }

  // Focus moved outside by other means (an approval card grabbing it, a
  // stray click) comes back to where it was in the dialog, not to the first
  // field: a keystroke meant for one field must not change another.
  let last: HTMLElement | null =
    document.activeElement instanceof HTMLElement && dialog.contains(document.activeElement) ? document.activeElement : null;
  function onFocusIn(event: FocusEvent): void {
    if (!(event.target instanceof Node)) return;
    if (dialog.contains(event.target)) {
      if (event.target instanceof HTMLElement) last = event.target;
      return;
    }
    (last?.isConnected ? last : firstStop()).focus();
  }

  document.addEventListener("keydown", onKeydown, true);
  document.addEventListener("focusin", onFocusIn);
  return {
    update(next) {
      escape = next;
    },
    destroy() {
      document.removeEventListener("keydown", onKeydown, true);
      document.removeEventListener("focusin", onFocusIn);
      if (opener?.isConnected) opener.focus();
    },
  };
}
