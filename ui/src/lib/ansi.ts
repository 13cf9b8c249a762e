// One line of command output as HTML: ANSI colours as classes, text escaped
// (ansi_up escapes HTML itself). A carriage return redraws the line, as a
// terminal would show a progress bar.
import { AnsiUp } from "ansi_up";

export function visibleText(line: string): string {
  const cr = line.lastIndexOf("\r", line.length - 2);
  return cr === -1 ? line.replace(/\r$/, "") : line.slice(cr + 1).replace(/\r$/, "");
}

export function ansiLineToHtml(line: string): string {
  // Fresh state per line: rows render out of order in the virtual list.
  const converter = new AnsiUp();
  converter.use_classes = true;
  return converter.ansi_to_html(visibleText(line));
}
