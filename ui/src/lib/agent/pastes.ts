// A message larger than what the window leaves is not sent whole (it could
// only fail, and fail again at every later message): it becomes an
// attachment in parts. The model is sent its first part and a note, and
// reads the others with `read_paste`, a tool the loop answers itself from
// the conversation's own text (it touches nothing, so it asks nothing). The
// history keeps that text in the message's item, so a conversation opened
// again cuts its pastes again from it.
import type { StoredEntry, ToolResultBlock, ToolUseBlock } from "../types";
import { pasteCut } from "./cutNotices";
import type { OfferedTool } from "./promptBudget";
import type { Cut } from "./state";
import { count } from "../format";

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

  /**
   * The shelf of a conversation opened again: each message that went as a
   * paste's first part and a note is cut again, in parts of the size it
   * was cut in then, from the whole text its item keeps.
   */
  static fromEntries(entries: readonly StoredEntry[]): PasteShelf {
    const shelf = new PasteShelf();
    for (const entry of entries) {
      if (entry.message?.role !== "user") continue;
      const whole = (entry.items as { kind?: unknown; text?: unknown }[]).find((item) => item.kind === "user")?.text;
      if (typeof whole !== "string") continue;
      for (const block of entry.message.content) {
        const noted = block.type === "text" ? NOTED.exec(block.text) : null;
        if (!noted) continue;
        const [, paste, count] = noted;
        const first = block.type === "text" ? block.text.slice(noted[0].length) : "";
        const parts = cut(whole, first.length);
        if (first === "" || parts[0] !== first || parts.length !== Number(count)) continue;
        shelf.pastes[Number(paste) - 1] = parts;
      }
    }
    // A paste whose message was not kept leaves no hole in the numbering.
    shelf.pastes = Array.from(shelf.pastes, (parts) => parts ?? []);
    return shelf;
  }

  get isEmpty(): boolean {
    return this.pastes.length === 0;
  }

  /**
   * `text` as the model is sent it: whole when it fits in `maxChars`, else
   * kept here in parts of that size and given as its first part and a note;
   * `cut` says then how much of it the model receives.
   */
  shelve(text: string, maxChars: number): { text: string; cut: Cut | null } {
    if (text.length <= maxChars) return { text, cut: null };
    const parts = cut(text, Math.max(200, maxChars - 400));
    this.pastes.push(parts);
    const paste = this.pastes.length;
    const sent = `[The user's message is ${count(text.length)} characters, more than fits the model's context window at once. It is attachment ${paste}, in ${parts.length} parts; part 1 follows. Read the others with ${READ_PASTE} {"paste": ${paste}, "part": N}, ${NOTE_END}${parts[0]}`;
    return { text: sent, cut: pasteCut(text.length, parts[0].length, parts.length) };
  }

  /** The answer to a `read_paste` call. */
  answer(use: ToolUseBlock): ToolResultBlock {
    const paste = Number(use.input.paste);
    const part = Number(use.input.part);
    const parts = this.pastes[paste - 1];
    const text = parts?.[part - 1];
    if (text === undefined) {
      const known = this.pastes.map((p, i) => `attachment ${i + 1}: ${p.length} parts`).join(", ");
      const why = known ? `The attachments: ${known}.` : "The conversation holds no attachment.";
      return { type: "tool_result", tool_use_id: use.id, content: `No part ${String(use.input.part)} of attachment ${String(use.input.paste)}. ${why}`, is_error: true };
    }
    return { type: "tool_result", tool_use_id: use.id, content: `[Attachment ${paste}, part ${part} of ${parts.length}]\n${text}` };
  }
}

/** How the note on a paste ends; its first part follows. */
const NOTE_END = "one at a time, keeping notes of what matters.]\n\n";

/** The note, with the paste's number and its count of parts. */
const NOTED = new RegExp(`^\\[The user's message is [\\d,]+ characters, [^\\]]*? It is attachment (\\d+), in (\\d+) parts; part 1 follows\\. [^\\]]*?${NOTE_END.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`);

/** `text` in parts of `size` characters. */
function cut(text: string, size: number): string[] {
  const parts: string[] = [];
  for (let at = 0; at < text.length; at += Math.max(1, size)) parts.push(text.slice(at, at + Math.max(1, size)));
  return parts;
}
