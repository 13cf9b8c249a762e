// @-mentions in the composer: the `@query` being typed, the files a message
// mentions, and the text the model receives with each attached file (the
// window shows a chip for each in its place).

/** The `@` mention the caret is in (`@` at the start or after a space), with what follows it so far. */
export function mentionAt(text: string, caret: number): { start: number; query: string } | null {
  const before = text.slice(0, caret);
  const match = /(^|\s)@(\S*)$/.exec(before);
  if (!match) return null;
  return { start: before.length - match[2].length - 1, query: match[2] };
}

/** The text with the mention at `start` (up to the caret) replaced by `@path `, and where the caret goes. */
export function insertMention(text: string, start: number, caret: number, path: string): { text: string; caret: number } {
  const token = `@${path} `;
  const rest = text.slice(caret).replace(/^\S*/, "").replace(/^ /, "");
  return { text: text.slice(0, start) + token + rest, caret: start + token.length };
}

/** The type a file dragged from the tree carries its path under. */
export const DRAGGED_PATH = "application/x-corral-path";

/** `@path ` added at the end of `text` (a file dropped on the box), with a space before it when needed. */
export function appendMention(text: string, path: string): string {
  const space = text === "" || /\s$/.test(text) ? "" : " ";
  return `${text}${space}@${path} `;
}

/** Which of `picked` the text still mentions as `@path`, in the order picked, once each. */
export function mentionedIn(text: string, picked: readonly string[]): string[] {
  const tokens = new Set([...text.matchAll(/(?:^|\s)@(\S+)/g)].map((m) => m[1].replace(/[.,;:!?)]+$/, "")));
  return [...new Set(picked)].filter((path) => tokens.has(path));
}

/** A file read for a message: its text, or why it could not be. */
export type Attachment = { path: string; content: string; note?: string };

const MARKER = "\n\nAttached file ";

/** Backticks enough that nothing in `content` closes the block early. */
function fenceFor(content: string): string {
  const longest = Math.max(0, ...[...content.matchAll(/`+/g)].map((m) => m[0].length));
  return "`".repeat(Math.max(3, longest + 1));
}

/** The message the model receives: the text, then each file in a fenced block. */
export function withAttachments(text: string, attachments: readonly Attachment[]): string {
  let out = text;
  for (const file of attachments) {
    const fence = fenceFor(file.content);
    const note = file.note ? ` (${file.note})` : "";
    const body = file.content.endsWith("\n") ? file.content.slice(0, -1) : file.content;
    out += `${MARKER}${file.path}${note}:\n${fence}\n${body}\n${fence}`;
  }
  return out;
}

/** Parses the blocks from `at` to the end of `text`, or null when they do not run to the end. */
function blocksFrom(text: string, at: number): string[] | null {
  const paths: string[] = [];
  const block = /\n\nAttached file ([^\n]+?)(?: \([^\n)]*\))?:\n(`{3,})\n/y;
  let pos = at;
  while (pos < text.length) {
    block.lastIndex = pos;
    const head = block.exec(text);
    if (!head) return null;
    const fence = head[2];
    const bodyStart = block.lastIndex;
    // The body holds no run of backticks as long as its fence.
    let close = text.indexOf(`\n${fence}`, bodyStart);
    while (close >= 0 && text[close + 1 + fence.length] === "`") close = text.indexOf(`\n${fence}`, close + 1);
    if (close < 0) return null;
    const end = close + 1 + fence.length;
    if (end !== text.length && !text.startsWith(MARKER, end)) return null;
    paths.push(head[1]);
    pos = end;
  }
  return paths;
}

/** A message sent with attachments as the user typed it, and the files attached (for chips). */
export function splitAttachments(message: string): { text: string; files: string[] } {
  for (let at = message.indexOf(MARKER); at >= 0; at = message.indexOf(MARKER, at + 1)) {
    const files = blocksFrom(message, at);
    if (files && files.length > 0) return { text: message.slice(0, at), files };
  }
  return { text: message, files: [] };
}
