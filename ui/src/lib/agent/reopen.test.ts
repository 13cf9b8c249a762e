// Going back to a conversation: its context meter starts at its size (an
// estimate, nothing sent) with its token totals, and appends that failed
// to be stored are sent again when the window leaves the conversation,
// never dropped.
import { describe, expect, it, vi } from "vitest";
import { fakeIpc, say, SPECS, type Turn } from "../../test/fakeIpc";
import type { Appended, ConversationSummary, NewEntry, StoredEntry } from "../types";
import { TokenEstimate } from "./context";
import { BUILT_IN_AGENTS, taskTool } from "./subagentTypes";
import { NO_INSTRUCTIONS } from "./instructions";
import { AgentLoop } from "./loop";
import { systemPrompt } from "./systemPrompt";

function setup(turns: Turn[]) {
  const fake = fakeIpc(turns);
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  const stored = (): StoredEntry[] =>
    fake.ipc.appendEntry.mock.calls.map(([, entry], seq) => {
      const json = JSON.parse(JSON.stringify(entry)) as NewEntry;
      return { seq, message: json.message ?? null, items: json.items };
    });
  return { ...fake, loop, stored };
}

const summary = (id: string, entries: number, input_tokens = 0, output_tokens = 0): ConversationSummary => ({
  id,
  project: "/p/app",
  title: "t",
  first_line: "t",
  created_ms: 0,
  updated_ms: 0,
  model: "m",
  input_tokens,
  output_tokens,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  cost_usd: input_tokens > 0 ? 0.42 : 0,
  unpriced: 0,
  entries,
});

const LOCKED = { code: "io", message: "another Corral window is using the conversation history", hint: "", retryable: true, details: {} };

describe("a conversation opened again", () => {
  it("shows its size in the meter at once, against the model's window, with its token totals", async () => {
    const first = setup([say("The otter lives by the river. ".repeat(200))]);
    await first.loop.send("Where does the otter live?");
    const entries = first.stored();

    const t = setup([]);
    t.ipc.modelInfo.mockResolvedValue({ context_window: 16_384, source: "server" });
    expect(t.loop.state.get().context).toBeNull();
    t.loop.load({ summary: summary("c1", entries.length, 1234, 567), entries });
    expect(t.loop.state.get().usage).toEqual({ input_tokens: 1234, output_tokens: 567, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.42, unpriced: 0 });
    await vi.waitFor(() => expect(t.loop.state.get().context).not.toBeNull());
    // What the next request would send, estimated as before a send; nothing was sent.
    const expected = new TokenEstimate().tokens({
      system: systemPrompt("/p/app", SPECS, null),
      messages: first.loop.transcript,
      tools: [...SPECS.map(({ name, description, input_schema }) => ({ name, description, input_schema })), taskTool(BUILT_IN_AGENTS)],
    });
    expect(t.loop.state.get().context).toEqual({ used: expected, window: 16_384, known: true });
    expect(expected).toBeGreaterThan(1500);
    expect(t.ipc.llmStream).not.toHaveBeenCalled();
    expect(t.ipc.appendEntry).not.toHaveBeenCalled();

    // Another conversation: its own size; a new one: no meter until it sends.
    t.loop.load({ summary: summary("c2", 1), entries: [{ seq: 0, message: { role: "user", content: [{ type: "text", text: "hi" }] }, items: [{ kind: "user", id: "u", text: "hi" }] }] });
    await vi.waitFor(() => expect(t.loop.state.get().context?.used).toBeLessThan(expected));
    expect(t.loop.state.get().usage).toEqual({ input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 0 });
    await t.loop.clear();
    expect(t.loop.state.get().context).toBeNull();
    // The server was asked about the model once for all of it.
    expect(t.ipc.modelInfo).toHaveBeenCalledTimes(1);
  });

  it("grows the estimate once a conversation opened brief is whole", async () => {
    const long = "x".repeat(20_000);
    const whole: StoredEntry[] = [
      { seq: 0, message: { role: "user", content: [{ type: "text", text: "read it" }] }, items: [{ kind: "user", id: "u", text: "read it" }] },
      { seq: 1, message: { role: "assistant", content: [{ type: "tool_use", id: "r", name: "read_file", input: { path: "big" } }] }, items: [] },
      { seq: 2, message: { role: "user", content: [{ type: "tool_result", tool_use_id: "r", content: long }] }, items: [] },
    ];
    const brief = whole.map((entry) => (entry.seq === 2 ? { ...entry, message: { role: "user" as const, content: [{ type: "tool_result" as const, tool_use_id: "r", content: "" }] }, elided: ["r"] } : entry));
    const t = setup([]);
    t.ipc.openConversation.mockResolvedValue({ summary: summary("c3", 3), entries: whole });
    vi.useFakeTimers();
    try {
      t.loop.load({ summary: summary("c3", 3), entries: brief });
      await vi.waitFor(() => expect(t.loop.state.get().context).not.toBeNull());
      const briefSize = t.loop.state.get().context?.used ?? 0;
      await vi.advanceTimersByTimeAsync(1500);
      await vi.waitFor(() => expect(t.loop.state.get().context?.used).toBeGreaterThan(briefSize + 4000));
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("appends that failed, when the conversation is left", () => {
  it("are sent again on leaving, and until they are stored, never dropped", async () => {
    const t = setup([say("one"), say("two")]);
    let failing = true;
    const appended: [string | null, string | undefined][] = [];
    t.ipc.appendEntry.mockImplementation(async (id: string | null, entry: NewEntry): Promise<Appended> => {
      const text = entry.message?.content.map((b) => (b.type === "text" ? b.text : "")).join("");
      if (failing && id === "a") throw LOCKED;
      appended.push([id, text]);
      return { conversation: id ?? "a", seq: appended.length - 1 };
    });
    await t.loop.send("first");
    failing = true;
    // Every append to "a" after its first fails: the reply waits, said once.
    expect(appended).toEqual([[null, "first"]]);
    expect(t.loop.state.get().items.filter((i) => i.kind === "notice").map((i) => i.kind === "notice" && i.text)).toEqual([
      "Could not save the conversation (io): another Corral window is using the conversation history",
    ]);
    expect(t.loop.unsaved).toBe(1);

    // Leaving for another conversation tries it again at once; it still fails, so it is kept.
    t.loop.load({ summary: summary("b", 1), entries: [{ seq: 0, message: { role: "user", content: [{ type: "text", text: "hi" }] }, items: [{ kind: "user", id: "u", text: "hi" }] }] });
    await vi.waitFor(() => expect(t.ipc.appendEntry).toHaveBeenCalledTimes(3));
    expect(t.loop.unsaved).toBe(1);
    // Nothing of "a" is said in "b".
    expect(t.loop.state.get().items.some((i) => i.kind === "notice")).toBe(false);

    // It lands with the next save, in "a", and "b" gets only its own.
    failing = false;
    await t.loop.send("second");
    expect(appended).toEqual([
      [null, "first"],
      ["b", "second"],
      ["b", "two"],
      ["a", "one"],
    ]);
    expect(t.loop.unsaved).toBe(0);
  });

  it("are stored before another conversation is opened (saveAll) and on New conversation", async () => {
    const t = setup([say("one")]);
    let failing = false;
    t.ipc.appendEntry.mockImplementation(async (id: string | null): Promise<Appended> => {
      if (failing) throw LOCKED;
      return { conversation: id ?? "a", seq: 0 };
    });
    await t.loop.send("first");
    failing = true;
    t.loop.dismissError();
    // A notice of its own (an instruction file, say) fails to be stored.
    (t.loop as unknown as { board: { notice: (text: string) => void } }).board.notice("something to keep");
    await t.loop.saveAll();
    expect(t.loop.unsaved).toBe(1);
    failing = false;
    await t.loop.saveAll();
    expect(t.loop.unsaved).toBe(0);
    const last = t.ipc.appendEntry.mock.calls.at(-1);
    expect(last?.[0]).toBe("a");
    expect(last?.[1].items).toEqual([expect.objectContaining({ kind: "notice", text: "something to keep" })]);

    // New conversation: the failed entry goes again on leaving, and lands.
    failing = true;
    (t.loop as unknown as { board: { notice: (text: string) => void } }).board.notice("another");
    await t.loop.saveAll();
    failing = false;
    await t.loop.clear();
    expect(t.loop.unsaved).toBe(0);
    expect(t.ipc.appendEntry.mock.calls.at(-1)?.[1].items).toEqual([expect.objectContaining({ text: "another" })]);
  });
});
