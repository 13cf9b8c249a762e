// The project view's actions: one list that the command palette shows and
// the keyboard handler reads, so a shortcut and its entry cannot disagree.
import { writable } from "svelte/store";
import { rank } from "./fuzzy";

export type ActionId = "palette" | "new-task" | "new-conversation" | "stop" | "pick-file" | "focus-input" | "settings" | "close-project" | "changes";

/** A key combination: `key` as KeyboardEvent.key gives it (letters lower-case). */
export type Shortcut = { key: string; ctrl?: boolean; shift?: boolean };

export type Action = {
  id: ActionId;
  title: string;
  /** The first is the one shown; all of them work. */
  shortcuts: Shortcut[];
  /** Shown, but handled elsewhere (Esc stops in the chat). */
  handledElsewhere?: boolean;
};

export const ACTIONS: readonly Action[] = [
  { id: "new-conversation", title: "New conversation", shortcuts: [{ key: "n", ctrl: true, shift: true }] },
  { id: "new-task", title: "New task (in a worktree of its own)", shortcuts: [{ key: "t", ctrl: true, shift: true }] },
  { id: "stop", title: "Stop", shortcuts: [{ key: "Escape" }], handledElsewhere: true },
  { id: "pick-file", title: "Pick a file", shortcuts: [{ key: "p", ctrl: true }] },
  { id: "focus-input", title: "Focus the message box", shortcuts: [{ key: "l", ctrl: true }] },
  { id: "settings", title: "Settings", shortcuts: [{ key: ",", ctrl: true }] },
  { id: "changes", title: "Changes in this conversation", shortcuts: [] },
  { id: "close-project", title: "Close project", shortcuts: [] },
  { id: "palette", title: "Command palette", shortcuts: [{ key: "k", ctrl: true }, { key: "p", ctrl: true, shift: true }] },
];

/** How a shortcut is written: `Ctrl+Shift+P`, `Esc`. */
export function describeShortcut(shortcut: Shortcut): string {
  const key = shortcut.key === "Escape" ? "Esc" : shortcut.key.length === 1 ? shortcut.key.toUpperCase() : shortcut.key;
  return [shortcut.ctrl ? "Ctrl" : "", shortcut.shift ? "Shift" : "", key].filter(Boolean).join("+");
}

type KeyInput = Pick<KeyboardEvent, "key" | "ctrlKey" | "metaKey" | "shiftKey" | "altKey"> & { isComposing?: boolean };

function matches(shortcut: Shortcut, event: KeyInput): boolean {
  // Ctrl, or Cmd on a Mac keyboard; Shift changes a letter's case.
  const ctrl = event.ctrlKey || event.metaKey;
  return (
    event.key.toLowerCase() === shortcut.key.toLowerCase() &&
    ctrl === !!shortcut.ctrl &&
    event.shiftKey === !!shortcut.shift &&
    !event.altKey
  );
}

/** The action a key press runs here, or null (Esc and plain keys are left to the page). */
export function actionFor(event: KeyInput, actions: readonly Action[] = ACTIONS): Action | null {
  if (event.isComposing) return null;
  return actions.find((action) => !action.handledElsewhere && action.shortcuts.some((s) => matches(s, event))) ?? null;
}

/** The palette's entries for what is typed: every action but the palette itself, best match first. */
export function filterActions(query: string, actions: readonly Action[] = ACTIONS): Action[] {
  const listed = actions.filter((action) => action.id !== "palette");
  return rank(query.trim(), listed, (action) => action.title);
}

/**
 * Asks the composer to open its file picker or take the focus, with `text`
 * put in the box (a slash command chosen in the palette) (the palette and
 * the shortcuts live in the project view, the composer inside the chat).
 */
export const composerRequests = writable<{ kind: "pick" | "focus"; seq: number; text?: string } | null>(null);
let seq = 0;
export function requestComposer(kind: "pick" | "focus", text?: string): void {
  composerRequests.set({ kind, seq: ++seq, ...(text === undefined ? {} : { text }) });
}
