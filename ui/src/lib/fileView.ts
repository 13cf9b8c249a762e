// The file viewer's text: highlighted by the chat's highlighter
// (highlighting.ts: escaped until it has arrived, and always escaped for a
// language it lacks) and passed through the same allowlist as a reply. The
// file is untrusted.
import { highlight } from "./highlighting";
import { sanitizeReply } from "./sanitize";

/** The highlighter's language for a path: its extension (aliases as highlighter.ts has them), or none. */
export function languageOf(path: string): string | undefined {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : undefined;
}

/** Safe HTML for the file's text (highlighted when its language is known and the highlighter has arrived, else escaped). */
export function highlightFile(path: string, content: string): string {
  return sanitizeReply(highlight(content, languageOf(path)));
}

/** The numbers of the lines shown, from `start` (a final newline ends a line, it does not start one). */
export function lineNumbers(content: string, start: number): number[] {
  const body = content.endsWith("\n") ? content.slice(0, -1) : content;
  const count = content === "" ? 0 : body.split("\n").length;
  return Array.from({ length: count }, (_, i) => start + i);
}
