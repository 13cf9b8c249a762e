// The loop sums what each model request used and cost: each request priced
// at the model's price as it ends, the conversation's totals on the board,
// and each stored entry carrying what was used since the one before, so
// the history's sums are the window's.
import { describe, expect, it } from "vitest";
import { callTools, fakeIpc, say, type Turn, use } from "../../test/fakeIpc";
import type { LlmEvent, NewEntry } from "../types";
import { NO_INSTRUCTIONS } from "./instructions";
import { AgentLoop } from "./loop";
import { addUsage, noUsage, type Usage } from "./usage";

const PRICE = { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 };

function setup(turns: Turn[], price: typeof PRICE | null) {
  const fake = fakeIpc(turns);
  fake.ipc.modelInfo.mockResolvedValue(price ? { context_window: 200_000, source: "known_model", price } : { context_window: 200_000, source: "server" });
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  const stored = () => fake.ipc.appendEntry.mock.calls.map((call) => call[1] as NewEntry);
  return { ...fake, loop, stored };
}

const counted = (turn: Turn, usage: Extract<LlmEvent, { type: "usage" }>): Turn => (emit, ctx) => {
  emit(usage);
  return turn(emit, ctx);
};

const storedSum = (entries: NewEntry[]): Usage => entries.reduce((sum, entry) => (entry.usage ? addUsage(sum, entry.usage) : sum), noUsage());

describe("the loop's usage", () => {
  it("prices each request, cache reads and writes at their rates, and stores each with its entry", async () => {
    const first = { type: "usage", input_tokens: 1000, output_tokens: 100, cache_read_tokens: 600, cache_write_tokens: 200 } as const;
    const second = { type: "usage", input_tokens: 2000, output_tokens: 50 } as const;
    const t = setup([counted(callTools(use("read_file", { path: "a.txt" })), first), counted(say("It says hi."), second)], PRICE);
    await t.loop.send("what does a.txt say?");

    const usage = t.loop.state.get().usage;
    const firstCost = (200 * 3 + 600 * 0.3 + 200 * 3.75 + 100 * 15) / 1e6;
    const secondCost = (2000 * 3 + 50 * 15) / 1e6;
    expect(usage).toMatchObject({ input_tokens: 3000, output_tokens: 150, cache_read_tokens: 600, cache_write_tokens: 200, unpriced: 0 });
    expect(usage.cost_usd).toBeCloseTo(firstCost + secondCost, 12);

    const entries = t.stored();
    const replies = entries.filter((e) => e.message?.role === "assistant");
    expect(replies.map((e) => e.usage?.input_tokens)).toEqual([1000, 2000]);
    expect(replies[0].usage?.cost_usd).toBeCloseTo(firstCost, 12);
    // Nothing is stored twice or left out.
    const sum = storedSum(entries);
    expect(sum).toMatchObject({ input_tokens: 3000, output_tokens: 150, cache_read_tokens: 600, cache_write_tokens: 200, unpriced: 0 });
    expect(sum.cost_usd).toBeCloseTo(usage.cost_usd, 12);
  });

  it("counts a request of a model with no known price as such, its tokens still summed", async () => {
    const t = setup([counted(say("hi"), { type: "usage", input_tokens: 40, output_tokens: 2 })], null);
    await t.loop.send("hi");
    expect(t.loop.state.get().usage).toEqual({ ...noUsage(), input_tokens: 40, output_tokens: 2, unpriced: 1 });
    expect(storedSum(t.stored())).toEqual(t.loop.state.get().usage);
  });

  it("adds a compaction's summary request to the conversation's, stored with its notice", async () => {
    const turns: Turn[] = [];
    for (let i = 0; i < 4; i++) turns.push(counted(say(`answer ${i}`), { type: "usage", input_tokens: 100, output_tokens: 10 }));
    turns.push(counted(say("The user asked four things."), { type: "usage", input_tokens: 500, output_tokens: 20 }));
    const t = setup(turns, PRICE);
    for (let i = 0; i < 4; i++) await t.loop.send(`question ${i}`);
    const before = t.loop.state.get().usage;
    await t.loop.compact();
    await t.loop.saveAll();
    const after = t.loop.state.get().usage;
    expect(t.loop.state.get().items.some((i) => i.kind === "notice" && i.text.startsWith("Compacted"))).toBe(true);
    expect(after.input_tokens - before.input_tokens).toBe(500);
    expect(after.cost_usd - before.cost_usd).toBeCloseTo((500 * 3 + 20 * 15) / 1e6, 12);
    const sum = storedSum(t.stored());
    expect(sum.input_tokens).toBe(900);
    expect(sum.cost_usd).toBeCloseTo(after.cost_usd, 12);
  });
});
