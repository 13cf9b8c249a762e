// One line of command output as HTML: ANSI colours as classes, text escaped
// (ansi_up escapes HTML itself). A carriage return redraws the line, as a
// terminal would show a progress bar. Lines render lazily and out of order
// in the virtual list, so each starts from the SGR state (colour, bold...)
// that the lines before it left, carried by OutputBuffer as `carrySgr` finds it.
import { AnsiUp } from "ansi_up";

/** Where the visible part of a line starts: after its last redraw. */
function redrawPoint(line: string): number {
  return line.lastIndexOf("\r", line.length - 2) + 1;
}

export function visibleText(line: string): string {
  return line.slice(redrawPoint(line)).replace(/\r$/, "");
}

// Every OSC sequence (ESC ] … BEL or ESC \\, or its C1 form; OSC 8 links,
// window titles, clipboard writes) and every other string sequence (DCS,
// SOS, PM, APC) is dropped, up to the next terminator or escape, and again
// until nothing changes: a marker nested in another cannot reassemble into
// one. A link's text stays, its target never reaches the window.
// eslint-disable-next-line no-control-regex
const STRING_SEQUENCE = /(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?/g;

export function stripStringSequences(text: string): string {
  let previous: string;
  do {
    previous = text;
    text = text.replace(STRING_SEQUENCE, "");
  } while (text !== previous);
  return text;
}

/** `sgr`: the escape sequence of the state the line starts in (see carrySgr). */
export function ansiLineToHtml(line: string, sgr = ""): string {
  const converter = new AnsiUp();
  converter.use_classes = true;
  // Belt and braces: no URL scheme may become an <a href>. No prototype, so
  // `__proto__` or `constructor` is not a scheme it knows either.
  converter.url_allowlist = Object.create(null) as Record<string, never>;
  const visible = redrawPoint(line);
  const start = carrySgr(sgr, line.slice(0, visible));
  return converter.ansi_to_html(start + stripStringSequences(visibleText(line)));
}

// The part of ansi_up's SGR handling that outlives a line, mirrored so the
// state can be written down as one escape sequence per line (ansi_up keeps
// its state private).
type Sgr = { bold: boolean; faint: boolean; italic: boolean; underline: boolean; fg: string | null; bg: string | null };
// eslint-disable-next-line no-control-regex
const SGR_SEQUENCE = /\x1b\[([0-9;]*)m/g;

/**
 * The SGR state after `text`, starting in `sgr`, as the escape sequence that
 * sets it ("" for plain). Text without escapes leaves it as it was.
 */
export function carrySgr(sgr: string, text: string): string {
  if (!text.includes("\x1b[")) return sgr;
  const state: Sgr = { bold: false, faint: false, italic: false, underline: false, fg: null, bg: null };
  for (const match of (sgr + text).matchAll(SGR_SEQUENCE)) applySgr(state, match[1].split(";"));
  const codes = [
    ...(state.bold ? ["1"] : []),
    ...(state.faint ? ["2"] : []),
    ...(state.italic ? ["3"] : []),
    ...(state.underline ? ["4"] : []),
    ...(state.fg ? [state.fg] : []),
    ...(state.bg ? [state.bg] : []),
  ];
  return codes.length === 0 ? "" : `\x1b[${codes.join(";")}m`;
}

function applySgr(state: Sgr, params: string[]): void {
  while (params.length > 0) {
    const param = params.shift() ?? "";
    const code = parseInt(param, 10);
    if (isNaN(code) || code === 0) Object.assign(state, { bold: false, faint: false, italic: false, underline: false, fg: null, bg: null });
    else if (code === 1) state.bold = true;
    else if (code === 2) state.faint = true;
    else if (code === 3) state.italic = true;
    else if (code === 4) state.underline = true;
    else if (code === 21) state.bold = false;
    else if (code === 22) Object.assign(state, { bold: false, faint: false });
    else if (code === 23) state.italic = false;
    else if (code === 24) state.underline = false;
    else if (code === 39) state.fg = null;
    else if (code === 49) state.bg = null;
    else if ((code >= 30 && code < 38) || (code >= 90 && code < 98)) state.fg = String(code);
    else if ((code >= 40 && code < 48) || (code >= 100 && code < 108)) state.bg = String(code);
    else if (code === 38 || code === 48) {
      // 38;5;n (256 colours) or 38;2;r;g;b (true colour); 48 likewise for the background.
      const mode = params.shift();
      const wanted = mode === "5" ? 1 : mode === "2" ? 3 : 0;
      const taken = params.splice(0, wanted);
      if (wanted > 0 && taken.length === wanted) state[code === 38 ? "fg" : "bg"] = [code, mode, ...taken].join(";");
    }
  }
}
