// A message larger than what the window leaves is not sent whole (it could
// only fail, and fail again at every later message): it becomes an
// attachment in parts. The model is sent its first part and a note, and
// reads the others with `read_paste`, a tool the loop answers itself from
// the conversation's own text (it touches nothing, so it asks nothing).
import type { ToolResultBlock, ToolUseBlock } from "../types";
import type { OfferedTool } from "./promptBudget";

export const READ_PASTE = "read_paste";

/** The tool, offered while the conversation holds a paste. */
export const READ_PASTE_TOOL: OfferedTool = {
  name: READ_PASTE,
  description: "Read one part of a long text the user pasted (the message says how many parts it has).",
  input_schema: { type: "object", properties: { paste: { type: "integer" }, part: { type: "integer" } }, required: ["paste", "part"] },
};

/** The pastes of one conversation, each cut in parts. */
export class PasteShelf {
  private pastes: string[][] = [];

  get isEmpty(): boolean {
    return this.pastes.length === 0;
  }

  /**
   * `text` as the model is sent it: whole when it fits in `maxChars`, else
   * kept here in parts of that size and given as its first part and a note.
   */
  shelve(text: string, maxChars: number): string {
    if (text.length <= maxChars) return text;
    const size = Math.max(200, maxChars - 400);
    const parts: string[] = [];
    for (let at = 0; at < text.length; at += size) parts.push(text.slice(at, at + size));
    this.pastes.push(parts);
    const paste = this.pastes.length;
    return `[The user's message is ${text.length.toLocaleString("en")} characters, more than fits the model's context window at once. It is attachment ${paste}, in ${parts.length} parts; part 1 follows. Read the others with ${READ_PASTE} {"paste": ${paste}, "part": N}, one at a time, keeping notes of what matters.]\n\n${parts[0]}`;
  }

  /** The answer to a `read_paste` call. */
  answer(use: ToolUseBlock): ToolResultBlock {
    const paste = Number(use.input.paste);
    const part = Number(use.input.part);
    const parts = this.pastes[paste - 1];
    const text = parts?.[part - 1];
    if (text === undefined) {
      const known = this.pastes.map((p, i) => `attachment ${i + 1}: ${p.length} parts`).join(", ");
      const why = known ? `The attachments: ${known}.` : "The attachment is gone: the conversation was opened again; ask the user to paste it again.";
      return { type: "tool_result", tool_use_id: use.id, content: `No part ${String(use.input.part)} of attachment ${String(use.input.paste)}. ${why}`, is_error: true };
    }
    return { type: "tool_result", tool_use_id: use.id, content: `[Attachment ${paste}, part ${part} of ${parts.length}]\n${text}` };
  }
}
