// One line of command output as HTML: ANSI colours as classes, text escaped
// (ansi_up escapes HTML itself). A carriage return redraws the line, as a
// terminal would show a progress bar.
import { AnsiUp } from "ansi_up";

export function visibleText(line: string): string {
  const cr = line.lastIndexOf("\r", line.length - 2);
  return cr === -1 ? line.replace(/\r$/, "") : line.slice(cr + 1).replace(/\r$/, "");
}

// OSC 8 hyperlink markers (ESC ] 8 ; params ; url ST): dropped, keeping
// the link's text, so command output can never put a link in the window.
// eslint-disable-next-line no-control-regex
const HYPERLINK = /\x1b\]8;[^\x07\x1b]*(?:\x07|\x1b\\)/g;

export function ansiLineToHtml(line: string): string {
  // Fresh state per line: rows render out of order in the virtual list.
  const converter = new AnsiUp();
  converter.use_classes = true;
  // Belt and braces: no URL scheme may become an <a href>.
  converter.url_allowlist = {};
  return converter.ansi_to_html(visibleText(line).replace(HYPERLINK, ""));
}
