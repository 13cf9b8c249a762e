// What a call will do, shown whole: every character that draws nothing,
// looks blank or reorders what follows becomes a visible marker, a run of
// empty lines becomes one row of markers instead of a screenful of nothing,
// and a long run of the same hidden character says how long it is.
// `invoice\u202Etxt.exe` reads `invoice⟨U+202E⟩txt.exe`, not
// `invoiceexe.txt`; 6,000 braille blanks read `⟨U+2800 ×6000⟩`.
//
// Which characters are hidden is decided by their Unicode properties, not
// by a list: controls (Cc), format characters (Cf: bidi, zero-width),
// line and paragraph separators (Zl, Zp), space separators other than
// U+0020 (Zs), private use and lone surrogates (Co, Cs), and every
// Default_Ignorable_Code_Point (variation selectors, Hangul fillers,
// U+034F, U+17B4, tags...). Only the glyphs that are drawn blank although
// their properties say they are symbols are named (U+2800). A run of more
// than MAX_MARKS combining marks on one character (stacked "Zalgo" text
// that paints over the lines around it) is counted instead of drawn.

export type Piece = { text: string; mark?: string };

/** Names for a marker's tooltip only; which characters are marked is HIDDEN's business. */
const NAMES: Record<number, string> = {
  0x09: "tab",
  0x0a: "line feed",
  0x0d: "carriage return",
  0x1b: "escape",
  0xa0: "no-break space",
  0x2028: "line separator",
  0x2029: "paragraph separator",
  0x202a: "left-to-right embedding",
  0x202b: "right-to-left embedding",
  0x202c: "pop directional formatting",
  0x202d: "left-to-right override",
  0x202e: "right-to-left override",
  0x2066: "left-to-right isolate",
  0x2067: "right-to-left isolate",
  0x2068: "first strong isolate",
  0x2069: "pop directional isolate",
  0x2800: "braille pattern blank",
};

/** Characters that draw nothing, look blank, break the line or reorder what follows. */
const HIDDEN = /^(?:[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cs}\p{Default_Ignorable_Code_Point}]|(?! )\p{Zs})$/u;
/** Symbols whose glyph is blank by design: their properties do not say so. */
const BLANK_GLYPHS = /^\u2800$/u;
const COMBINING = /^\p{M}$/u;
/** Spaces (and tabs) past this many in a row are counted instead of drawn. */
export const LONG_SPACES = 16;
/** Combining marks one character may carry before they are counted (Vietnamese stacks two, some scripts three). */
export const MAX_MARKS = 3;

/** Whether `char` (one code point) is drawn as a marker. */
export function isHidden(char: string): boolean {
  return HIDDEN.test(char) || BLANK_GLYPHS.test(char);
}

function codePoint(char: string): string {
  return `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
}

function titleOf(char: string): string {
  const name = NAMES[char.codePointAt(0) ?? 0];
  return `${codePoint(char)}${name ? ` ${name}` : ""}`;
}

/** The marker of one hidden character: `↵` for a line feed, `⇥` for a tab, else `⟨U+XXXX⟩`. */
export function markerOf(char: string): Piece {
  const cp = char.codePointAt(0) ?? 0;
  if (cp === 0x0a) return { text: "↵", mark: titleOf(char) };
  if (cp === 0x09) return { text: "⇥", mark: titleOf(char) };
  return { text: `⟨${codePoint(char)}⟩`, mark: titleOf(char) };
}

/** A run of `count` of the same hidden character. */
function runOf(char: string, count: number): Piece[] {
  if (count === 1) return [markerOf(char)];
  if (char === "\t" && count <= LONG_SPACES) return Array.from({ length: count }, () => markerOf(char));
  return [{ text: `⟨${codePoint(char)} ×${count}⟩`, mark: `${count} × ${titleOf(char)}` }];
}

function pushText(pieces: Piece[], text: string): void {
  const last = pieces.at(-1);
  if (last && last.mark === undefined) last.text += text;
  else if (text !== "") pieces.push({ text });
}

/** One line (no line feeds) as text and markers. `ended`: a line feed follows it. */
function revealLine(pieces: Piece[], line: string, ended: boolean): void {
  const chars = Array.from(line);
  let i = 0;
  while (i < chars.length) {
    const char = chars[i];
    let run = 1;
    while (i + run < chars.length && chars[i + run] === char) run++;
    if (char === " ") {
      if (run > LONG_SPACES) pieces.push({ text: `⟨${run} spaces⟩`, mark: `${run} spaces` });
      else pushText(pieces, " ".repeat(run));
    } else if (char === "\r" && run === 1 && i + 1 === chars.length && ended) {
      // The CR of a CRLF line end: marked, but quieter than a lone CR, which hides what follows it.
      pieces.push({ text: "␍", mark: "U+000D carriage return (CRLF line end)" });
    } else if (isHidden(char)) {
      pieces.push(...runOf(char, run));
    } else if (COMBINING.test(char)) {
      // A mark with nothing to sit on (line start, after a space or a marker) is drawn on its own.
      const base = i > 0 && !isHidden(chars[i - 1]) && chars[i - 1] !== " ";
      let marks = 0;
      while (i + marks < chars.length && COMBINING.test(chars[i + marks]) && !isHidden(chars[i + marks])) marks++;
      const stack = chars.slice(i, i + marks);
      if (!base) {
        for (const mark of stack) pieces.push({ text: `⟨${codePoint(mark)}⟩`, mark: `${titleOf(mark)} combining mark with nothing to sit on` });
      } else if (marks > MAX_MARKS) {
        const same = stack.every((m) => m === stack[0]);
        const text = same ? `⟨${codePoint(stack[0])} ×${marks}⟩` : `⟨${marks} combining marks⟩`;
        pieces.push({ text, mark: `${marks} combining marks: ${[...new Set(stack)].slice(0, 8).map(codePoint).join(" ")}` });
      } else pushText(pieces, stack.join(""));
      i += marks;
      continue;
    } else pushText(pieces, char.repeat(run));
    i += run;
  }
}

/**
 * `text` as pieces to draw: plain text, and markers (`mark` says what the
 * character is). A line feed is a `↵` marker; a real line break ("\n" in
 * plain text) follows it only when the next line has something to show,
 * so empty lines cannot push the rest of a value out of sight. `endsLine`:
 * the text is one line of a file whose line feed is not in it (a diff
 * row), so a CR at its end is a CRLF line end.
 */
export function reveal(text: string, endsLine = false): Piece[] {
  const pieces: Piece[] = [];
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (i > 0) {
      pieces.push(markerOf("\n"));
      if (Array.from(line).some((c) => c !== " " && !isHidden(c))) pushText(pieces, "\n");
    }
    revealLine(pieces, line, endsLine || i + 1 < lines.length);
  });
  return pieces;
}

/** Whether `reveal` would draw `text` as it is (no marker, no counted run): the common case, drawn without splitting. */
export function isPlain(text: string): boolean {
  return !/[^\x21-\x7E ]| {17}/.test(text) || reveal(text).every((p) => p.mark === undefined && !p.text.includes("\n"));
}

/** The text `reveal` draws, as one string (markers included). */
export function revealed(text: string, endsLine = false): string {
  return reveal(text, endsLine)
    .map((p) => p.text)
    .join("");
}
