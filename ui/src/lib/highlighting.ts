// Code as safe HTML, highlighted once the highlighter (highlighter.ts, its
// own chunk) has arrived and escaped until then. The first code with a
// language asks for it; `highlighterReady` turns true when it is here, so
// what was shown escaped can render again highlighted.
import { writable, type Readable } from "svelte/store";

type Highlighter = typeof import("./highlighter");

let highlighter: Highlighter | null = null;
let loading: Promise<void> | null = null;
const ready = writable(false);

/** True once the highlighter has arrived (it never turns back). */
export const highlighterReady: Readable<boolean> = { subscribe: ready.subscribe };

/**
 * Imports the highlighter, once; later calls share the first. If its chunk
 * cannot be loaded, code stays escaped (and the store false).
 */
export function loadHighlighter(): Promise<void> {
  loading ??= import("./highlighter").then(
    (module) => {
      highlighter = module;
      ready.set(true);
    },
    () => {},
  );
  return loading;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The code as HTML: highlighted when its language (the first word of `lang`)
 * is known, else escaped. Before the highlighter has arrived it is escaped,
 * and a language asks for the highlighter.
 */
export function highlight(code: string, lang: string | undefined): string {
  const language = lang?.trim().split(/\s+/)[0]?.toLowerCase();
  if (!language) return escapeHtml(code);
  if (!highlighter) {
    void loadHighlighter();
    return escapeHtml(code);
  }
  return highlighter.highlightKnown(code, language) ?? escapeHtml(code);
}
