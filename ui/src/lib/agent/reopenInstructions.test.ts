// A conversation opened again shows the project's instructions once: the
// card it already holds is not added again, not when it opens and not with
// each message sent after.
import { describe, expect, it } from "vitest";
import { fakeIpc, say, type Turn } from "../../test/fakeIpc";
import type { ConversationSummary, StoredEntry } from "../types";
import type { InstructionSource, Instructions } from "./instructions";
import { AgentLoop } from "./loop";

const AGENTS: Instructions = { path: "AGENTS.md", text: "Run the tests with python3 -m unittest.", bytes: 39, cut: false, notice: "Instructions: AGENTS.md" };
const SOURCE: InstructionSource = { root: async () => AGENTS, folder: async () => [] };

function setup(turns: Turn[]) {
  const fake = fakeIpc(turns);
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: SOURCE });
  const stored = (): StoredEntry[] =>
    fake.ipc.appendEntry.mock.calls.map(([, entry], seq) => {
      const json = JSON.parse(JSON.stringify(entry)) as StoredEntry;
      return { seq, message: json.message ?? null, items: json.items };
    });
  return { ...fake, loop, stored };
}

const summary = (entries: number): ConversationSummary => ({ id: "c1", project: "/p/app", title: "t", first_line: "t", created_ms: 0, updated_ms: 0, model: "m", input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 0, entries });

const cards = (loop: AgentLoop): number => loop.state.get().items.filter((item) => item.kind === "notice" && item.text === AGENTS.notice).length;

describe("the instructions card", () => {
  it("is shown once in a conversation, also after it is opened again and goes on", async () => {
    const first = setup([say("One."), say("Two.")]);
    await first.loop.send("first");
    await first.loop.send("second");
    expect(cards(first.loop)).toBe(1);
    const entries = first.stored();

    const again = setup([say("Three."), say("Four.")]);
    again.loop.load({ summary: summary(entries.length), entries });
    expect(cards(again.loop)).toBe(1);
    await again.loop.send("third");
    await again.loop.send("fourth");
    expect(cards(again.loop)).toBe(1);
    // The model still gets them: they are in the system prompt of each request.
    expect(again.requests.every((request) => JSON.stringify(request).includes(AGENTS.text))).toBe(true);

    // And so once more after a second reopening.
    const entries2 = again.stored();
    const third = setup([say("Five.")]);
    third.loop.load({ summary: summary(entries.length + entries2.length), entries: [...entries, ...entries2.map((e) => ({ ...e, seq: e.seq + entries.length }))] });
    await third.loop.send("fifth");
    expect(cards(third.loop)).toBe(1);
  });
});
