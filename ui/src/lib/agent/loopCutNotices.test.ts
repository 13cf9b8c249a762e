// What the model saw, said to the user: a result cut to fit a small window
// puts on its card how many of its characters the model received and how
// it can read the rest; a message split into parts says the same under it.
// The figures are checked against what the model was really sent.
import { describe, expect, it } from "vitest";
import { callTools, fakeIpc, say, use } from "../../test/fakeIpc";
import specsJson from "../../test/toolSpecs.json";
import type { TextBlock, ToolResultBlock, ToolSpec } from "../types";
import { cutSentence } from "./cutNotices";
import { CUT_NOTE } from "./fitting";
import { NO_INSTRUCTIONS } from "./instructions";
import { AgentLoop } from "./loop";
import type { ToolItem, UserItem } from "./state";

const SPECS = specsJson as ToolSpec[];

function setup(turns: Parameters<typeof fakeIpc>[0], window: number) {
  const fake = fakeIpc(turns);
  fake.ipc.toolSpecs.mockResolvedValue(SPECS);
  fake.ipc.modelInfo.mockResolvedValue({ context_window: window, source: "server" });
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  const cards = () => loop.state.get().items.filter((i): i is ToolItem => i.kind === "tool");
  return { ...fake, loop, cards };
}

describe("what the model saw of a cut result", () => {
  it.each([2_048, 4_096])("a 43 KB read cut to fit says on its card how much the model received (%i window)", async (window) => {
    const read = use("read_file", { path: "big.txt" });
    const t = setup([callTools(read), say("Read the start and the end.")], window);
    const big = Array.from({ length: 900 }, (_, i) => `line ${i}: ${"the quick brown fox ".repeat(2)}`).join("\n");
    const output = { path: "big.txt", content: big, truncated: false };
    t.ipc.callTool.mockResolvedValue(output);
    await t.loop.send("read big.txt");
    expect(t.loop.state.get().error).toBeNull();
    const whole = JSON.stringify(output);
    const sent = (t.requests[1].messages.at(-1)!.content[0] as ToolResultBlock).content;
    const note = /\n\[\.\.\. \d+ [^\]]*\]\n/.exec(sent)!;
    expect(note[0]).toContain(CUT_NOTE);
    const [card] = t.cards();
    expect(card.status).toBe("done");
    // The figures are the real ones: what was sent, less the note, is the
    // whole result's head and tail, `received` characters of its `total`.
    const { received, total } = card.cut!;
    expect(total).toBe(whole.length);
    expect(received).toBe(sent.length - note[0].length);
    expect(received).toBeLessThan(total / 5);
    const head = note.index;
    expect(sent.slice(0, head) + sent.slice(head + note[0].length)).toBe(whole.slice(0, head) + whole.slice(total - (received - head)));
    expect(card.cut!.rest).toBe("read_file with start_line and end_line");
    expect(sent).toContain("read_file with start_line and end_line");
    expect(cutSentence(card.cut!)).toBe(
      `The model received ${received.toLocaleString("en")} of ${total.toLocaleString("en")} characters; it can read the rest with read_file with start_line and end_line.`,
    );
  });

  it("a result that fits has no cut on its card; a search's says to search narrower", async () => {
    const small = use("read_file", { path: "small.txt" });
    const search = use("search_files", { pattern: "word" });
    const t = setup([callTools(small, search), say("Done.")], 4_096);
    const matches = Array.from({ length: 600 }, (_, i) => ({ path: `src/f${i}.ts`, line: i + 1, text: "a word here" }));
    t.ipc.callTool.mockImplementation(async (name: string) => (name === "read_file" ? { path: "small.txt", content: "short", truncated: false } : { matches }));
    await t.loop.send("read and search");
    const [read, searched] = t.cards();
    expect(read.cut).toBeUndefined();
    expect(searched.cut).toMatchObject({ total: JSON.stringify({ matches }).length, rest: "a narrower search_files" });
    expect(searched.cut!.received).toBeLessThan(searched.cut!.total);
  });
});

describe("what the model saw of a message split into parts", () => {
  it.each([2_048, 4_096])("a 12k paste says under it how much the model received, and in how many parts (%i window)", async (window) => {
    const paste = Array.from({ length: 400 }, (_, i) => `row ${String(i).padStart(3, "0")}: a line of pasted log\n`).join("");
    const t = setup([say("I see the start of the log.")], window);
    await t.loop.send(paste);
    const sent = (t.requests[0].messages[0].content[0] as TextBlock).text;
    const parts = Number(/in (\d+) parts; part 1 follows/.exec(sent)![1]);
    const first = sent.slice(sent.indexOf("row 000"));
    expect(paste.startsWith(first)).toBe(true);
    const user = t.loop.state.get().items[0] as UserItem;
    expect(user.text).toBe(paste);
    expect(user.cut).toEqual({ received: first.length, total: 12_000, rest: `read_paste, parts 2 to ${parts}` });
    expect(cutSentence(user.cut!)).toBe(`The model received ${first.length.toLocaleString("en")} of 12,000 characters; it can read the rest with read_paste, parts 2 to ${parts}.`);
  });

  it("a message that fits says nothing", async () => {
    const t = setup([say("Hello.")], 4_096);
    await t.loop.send("hello");
    expect((t.loop.state.get().items[0] as UserItem).cut).toBeUndefined();
  });
});
