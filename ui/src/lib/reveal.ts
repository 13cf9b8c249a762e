// What a call will do, shown whole: the characters that draw nothing or
// reorder what follows (controls, bidi overrides, zero-width and odd
// spaces) become visible markers, a run of empty lines becomes one row of
// markers instead of a screenful of nothing, and a long run of spaces says
// how long it is. `invoice\u202Etxt.exe` reads `invoice⟨U+202E⟩txt.exe`,
// not `invoiceexe.txt`.

export type Piece = { text: string; mark?: string };

const NAMES: Record<number, string> = {
  0x09: "tab",
  0x0a: "line feed",
  0x0d: "carriage return",
  0x1b: "escape",
  0x7f: "delete",
  0xa0: "no-break space",
  0xad: "soft hyphen",
  0x061c: "Arabic letter mark",
  0x200b: "zero-width space",
  0x200c: "zero-width non-joiner",
  0x200d: "zero-width joiner",
  0x200e: "left-to-right mark",
  0x200f: "right-to-left mark",
  0x2028: "line separator",
  0x2029: "paragraph separator",
  0x202a: "left-to-right embedding",
  0x202b: "right-to-left embedding",
  0x202c: "pop directional formatting",
  0x202d: "left-to-right override",
  0x202e: "right-to-left override",
  0x2060: "word joiner",
  0x2066: "left-to-right isolate",
  0x2067: "right-to-left isolate",
  0x2068: "first strong isolate",
  0x2069: "pop directional isolate",
  0xfeff: "zero-width no-break space",
};

/** Controls, format characters (bidi, zero-width), line/paragraph separators, spaces other than U+0020. */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]|(?! )\p{Zs}/u;
/** Spaces past this many in a row are counted instead of drawn. */
export const LONG_SPACES = 16;

function codePoint(char: string): string {
  return `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
}

/** The marker of one hidden character: `↵` for a line feed, `⇥` for a tab, else `⟨U+XXXX⟩`. */
export function markerOf(char: string): Piece {
  const cp = char.codePointAt(0) ?? 0;
  const name = NAMES[cp];
  const title = `${codePoint(char)}${name ? ` ${name}` : ""}`;
  if (cp === 0x0a) return { text: "↵", mark: title };
  if (cp === 0x09) return { text: "⇥", mark: title };
  return { text: `⟨${codePoint(char)}⟩`, mark: title };
}

function pushText(pieces: Piece[], text: string): void {
  const last = pieces.at(-1);
  if (last && last.mark === undefined) last.text += text;
  else if (text !== "") pieces.push({ text });
}

/** One line (no line feeds) as text and markers. */
function revealLine(pieces: Piece[], line: string): void {
  let spaces = 0;
  const flushSpaces = (): void => {
    if (spaces > LONG_SPACES) pieces.push({ text: `⟨${spaces} spaces⟩`, mark: `${spaces} spaces` });
    else pushText(pieces, " ".repeat(spaces));
    spaces = 0;
  };
  for (const char of line) {
    if (char === " ") {
      spaces++;
      continue;
    }
    flushSpaces();
    if (HIDDEN.test(char)) pieces.push(markerOf(char));
    else pushText(pieces, char);
  }
  flushSpaces();
}

/**
 * `text` as pieces to draw: plain text, and markers (`mark` says what the
 * character is). A line feed is a `↵` marker; a real line break ("\n" in
 * plain text) follows it only when the next line has something to show,
 * so empty lines cannot push the rest of a value out of sight.
 */
export function reveal(text: string): Piece[] {
  const pieces: Piece[] = [];
  text.split("\n").forEach((line, i) => {
    if (i > 0) {
      pieces.push(markerOf("\n"));
      if (/[^\s\p{Cf}]/u.test(line)) pushText(pieces, "\n");
    }
    revealLine(pieces, line);
  });
  return pieces;
}

/** The text `reveal` draws, as one string (markers included). */
export function revealed(text: string): string {
  return reveal(text)
    .map((p) => p.text)
    .join("");
}

export type ResolvedPath = { path: string; outside: boolean };

/**
 * A tool's `path` as the tool resolves it against the project root, in
 * words: `\` is a separator, `.` and empty parts go, `..` climbs, an
 * absolute path under the root becomes relative. Lexical only: symlinks
 * are resolved by the tool (beneath the root's handle), not here.
 */
export function resolvePath(raw: string, root: string): ResolvedPath {
  let path = raw.replace(/\\/g, "/");
  const base = root.replace(/\/+$/, "");
  if (path.startsWith("/")) {
    if (path !== base && !path.startsWith(`${base}/`)) return { path: raw, outside: true };
    path = path.slice(base.length);
  }
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) return { path: raw, outside: true };
      parts.pop();
    } else parts.push(part);
  }
  return { path: parts.length === 0 ? "." : parts.join("/"), outside: false };
}
