// A paste sent as an attachment in parts stays readable when its
// conversation is opened again: the history keeps the whole text with the
// message, and the parts are cut again from it.
import { describe, expect, it } from "vitest";
import { callTools, fakeIpc, say, use, type Turn } from "../../test/fakeIpc";
import type { NewEntry, StoredEntry, ToolResultBlock } from "../types";
import { NO_INSTRUCTIONS } from "./instructions";
import { AgentLoop } from "./loop";
import { PasteShelf } from "./pastes";

function setup(turns: Turn[]) {
  const fake = fakeIpc(turns);
  fake.ipc.modelInfo.mockResolvedValue({ context_window: 4_096, source: "server" });
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  const stored = (): StoredEntry[] =>
    fake.ipc.appendEntry.mock.calls.map(([, entry], seq) => {
      const json = JSON.parse(JSON.stringify(entry)) as NewEntry;
      return { seq, message: json.message ?? null, items: json.items };
    });
  return { ...fake, loop, stored };
}

const summary = (entries: number) => ({ id: "c1", project: "/p/app", title: "t", first_line: "t", created_ms: 0, updated_ms: 0, model: "m", input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 0, entries });
const paste = Array.from({ length: 700 }, (_, i) => `row ${String(i).padStart(3, "0")}: a line of pasted log\n`).join("");

describe("a paste in a conversation opened again", () => {
  it("is read in the same parts as before it was closed", async () => {
    const first = setup([say("Noted; I will read the rest when needed.")]);
    await first.loop.send(paste);
    const entries = first.stored();

    const readLast = use("read_paste", { paste: 1, part: 3 });
    const t = setup([callTools(readLast), say("Read it.")]);
    // A larger window now (another server): the parts are still those the note announced.
    t.ipc.modelInfo.mockResolvedValue({ context_window: 8_192, source: "server" });
    t.loop.load({ summary: summary(entries.length), entries });
    await t.loop.send("What does part 3 say?");
    const [request, after] = t.requests;
    expect(request.tools.some((tool) => tool.name === "read_paste")).toBe(true);
    const part = after.messages.at(-1)!.content[0] as ToolResultBlock;
    expect(part.is_error).toBeUndefined();
    expect(part.content).toMatch(/^\[Attachment 1, part 3 of \d+\]\n/);
    // The very part the first window would have given: parts of the size of the first one sent.
    const sent = (first.requests[0].messages[0].content[0] as { text: string }).text;
    const size = sent.length - sent.indexOf("row 000");
    expect(size).toBeLessThan(paste.length / 3);
    expect(part.content.slice(part.content.indexOf("\n") + 1)).toBe(paste.slice(2 * size, 3 * size));
  });

  it("a message that only looks like a paste's note restores nothing", () => {
    const note = "[The user's message is 99 characters, more than fits the model's context window at once. It is attachment 1, in 2 parts; part 1 follows. Read the others with read_paste {\"paste\": 1, \"part\": N}, one at a time, keeping notes of what matters.]\n\nsomething else";
    const shelf = PasteShelf.fromEntries([{ seq: 0, message: { role: "user", content: [{ type: "text", text: note }] }, items: [{ kind: "user", id: "u", text: note }] }]);
    expect(shelf.isEmpty).toBe(true);
  });
});
