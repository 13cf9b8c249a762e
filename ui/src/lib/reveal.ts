// What a call will do, shown whole: every character that is not visibly
// drawn becomes a visible marker, a run of empty lines becomes one row of
// markers instead of a screenful of nothing, and a long run of the same
// marked character says how long it is. `invoice\u202Etxt.exe` reads
// `invoice⟨U+202E⟩txt.exe`, not `invoiceexe.txt`; 8,000 object
// replacement characters read `⟨U+FFFC ×8000⟩`.
//
// What is drawn as it is, is decided by inclusion, from the character's
// Unicode properties: letters (L*), numbers (N*), punctuation (P*),
// symbols (S*), U+0020 SPACE, and the marks that sit on one of those
// (Mn, Mc), at most MAX_MARKS in a row (a longer stack, "Zalgo" text that
// paints over the lines around it, is counted). Everything else is a
// marker: the other separators (Zs, Zl, Zp), controls (Cc: a line feed is
// `↵`, a tab `⇥`), format characters (Cf: bidi, zero-width), private use,
// lone surrogates, unassigned code points and noncharacters (Co, Cs, Cn),
// and enclosing marks (Me). So is every Default_Ignorable_Code_Point
// whatever its category (variation selectors and U+034F are Mn), and the
// few assigned characters whose glyph is blank: BLANK_GLYPHS. A character
// this engine's Unicode does not know yet is unassigned here, so marked.
// crates/corral-mcp/src/question.rs applies the same rule to the MCP
// server's question; reveal.cases.json is the table both are tested on.

export type Piece = { text: string; mark?: string };

/** Names for a marker's tooltip only; which characters are marked is isHidden's business. */
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
  0x115f: "Hangul choseong filler",
  0x1160: "Hangul jungseong filler",
  0x2800: "braille pattern blank",
  0x3164: "Hangul filler",
  0xffa0: "halfwidth Hangul filler",
  0xfffc: "object replacement character",
  0x1d159: "musical symbol null notehead",
};

/** Drawn as they are: letters, numbers, punctuation, symbols (assigned ones only: Cn is none of these). */
const DRAWN = /^[\p{L}\p{N}\p{P}\p{S}]$/u;
/** Drawn on the character before them (not Me: an enclosing mark can cover a whole line). */
const COMBINING = /^[\p{Mn}\p{Mc}]$/u;
/** Drawn as nothing by definition, whatever their category says (variation selectors are Mn, Hangul fillers Lo). */
const IGNORABLE = /^\p{Default_Ignorable_Code_Point}$/u;
/**
 * Assigned letters and symbols whose glyph is blank: their category says
 * drawn, the screen shows an empty space. Kept short, each one why:
 * U+115F, U+1160, U+3164, U+FFA0 Hangul fillers (Lo; also default
 * ignorable): stand for a missing jamo and have no ink. U+2800 braille
 * pattern blank (So): the cell with no dots. U+FFFC object replacement
 * character (So): stands for an embedded object, so fonts draw an empty
 * gap. U+1D159 musical symbol null notehead (So): a notehead with no ink.
 */
const BLANK_GLYPHS = /^[\u115F\u1160\u2800\u3164\uFFA0\uFFFC\u{1D159}]$/u;
/** Spaces (and tabs) past this many in a row are counted instead of drawn. */
export const LONG_SPACES = 16;
/** Combining marks one character may carry before they are counted (Vietnamese stacks two, some scripts three). */
export const MAX_MARKS = 3;

/** Whether `char` (one code point) is drawn as a marker: neither drawn as it is nor a mark on a base, nor U+0020. */
export function isHidden(char: string): boolean {
  if (char === " ") return false;
  return !(DRAWN.test(char) || COMBINING.test(char)) || IGNORABLE.test(char) || BLANK_GLYPHS.test(char);
}

/** What a marker's tooltip says of a character with no name in NAMES. */
function kindOf(char: string): string {
  const cp = char.codePointAt(0) ?? 0;
  if ((cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) === 0xfffe) return "noncharacter";
  if (/^\p{Cn}$/u.test(char)) return "unassigned";
  if (/^\p{Co}$/u.test(char)) return "private use";
  if (/^\p{Cs}$/u.test(char)) return "lone surrogate";
  if (/^\p{Me}$/u.test(char)) return "enclosing mark";
  return "";
}

function codePoint(char: string): string {
  return `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
}

function titleOf(char: string): string {
  const name = NAMES[char.codePointAt(0) ?? 0] ?? kindOf(char);
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
