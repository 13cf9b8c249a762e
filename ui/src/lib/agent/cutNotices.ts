// What the model saw: a tool result cut to fit the window (fitting.ts) or
// a message split into parts (pastes.ts) reaches the model smaller than the
// user sees it. The figures are read from what is sent (the cut note says
// how many characters it left out) and kept with the card or the message,
// so the window says "the model received N of M characters" and how the
// model can read the rest.
import type { ToolResultBlock } from "../types";
import { CUT_NOTE } from "./fitting";
import type { Cut } from "./state";
import { count } from "../format";

/** The note `cutLargeResults` puts in the middle of a cut result, with the count it left out. */
const NOTE = new RegExp(`\\n\\[\\.\\.\\. (\\d+) ${CUT_NOTE}\\.[^\\]]*\\]\\n`);

/**
 * How much of `block`, a result of the tool `name`, the model receives:
 * null when it was not cut to fit.
 */
export function resultCut(block: ToolResultBlock, name: string): Cut | null {
  const note = NOTE.exec(block.content);
  if (!note) return null;
  const received = block.content.length - note[0].length;
  return { received, total: received + Number(note[1]), rest: restOf(name) };
}

/** How the model reads the rest of a result of `name` cut to fit, as the cut's note tells it. */
export function restOf(name: string): string {
  switch (name) {
    case "read_file":
      return "read_file with start_line and end_line";
    case "web_fetch":
      return "web_fetch with offset";
    case "command_output":
      return "command_output with since_byte";
    case "exec_shell":
      return "a command with less output, or one run in the background and read with command_output";
    case "search_files":
    case "glob":
    case "list_directory":
      return `a narrower ${name}`;
    default:
      return `${name} again, asking for less`;
  }
}

/** What the model receives of a message split into `parts` of which it is sent the first. */
export function pasteCut(total: number, first: number, parts: number): Cut {
  return { received: first, total, rest: parts === 2 ? "read_paste, part 2" : `read_paste, parts 2 to ${parts}` };
}

/** The sentence the window shows for a cut. */
export function cutSentence(cut: Cut): string {
  const n = count;
  return `The model received ${n(cut.received)} of ${n(cut.total)} characters; it can read the rest with ${cut.rest}.`;
}
