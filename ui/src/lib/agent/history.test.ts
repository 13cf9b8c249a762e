// The conversation as the history keeps it: what the loop appends, folded
// back on open, gives the same transcript and the same items; appends go in
// order, one at a time, and a failed one is tried again.
import { describe, expect, it, vi } from "vitest";
import { assertConsistent, callTools, deferred, fakeIpc, say, type Turn, use } from "../../test/fakeIpc";
import type { Appended, NewEntry, StoredEntry } from "../types";
import { entryItems, fromEntries } from "./conversation";
import { Journal } from "./journal";
import { AgentLoop } from "./loop";
import type { Item, ToolItem } from "./state";
import { NO_INSTRUCTIONS } from "./instructions";

function setup(turns: Turn[]) {
  const fake = fakeIpc(turns);
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  /** What the history holds: every append, as Rust stores it (JSON). */
  const stored = (): StoredEntry[] =>
    fake.ipc.appendEntry.mock.calls.map(([, entry], seq) => {
      const json = JSON.parse(JSON.stringify(entry)) as NewEntry;
      return { seq, message: json.message ?? null, items: json.items };
    });
  return { ...fake, loop, stored };
}

describe("the history of a conversation", () => {
  it("gives back the transcript and the items of a run with tools, stop and a notice", async () => {
    const read = use("read_file", { path: "src/main.rs" });
    const stopped: Turn = async (emit, { cancelled }) => {
      emit({ type: "text_delta", text: "Working on it" });
      await cancelled;
      emit({ type: "done", stop_reason: "cancelled" });
    };
    const t = setup([callTools(read), say("It prints hello."), stopped, say("ok")]);
    await t.loop.send("what does main do?");
    const run = t.loop.send("now change it");
    await vi.waitFor(() => expect(t.loop.state.get().items.some((i) => i.kind === "assistant" && i.text === "Working on it")).toBe(true));
    t.loop.stop();
    await run;
    await t.loop.send("never mind");

    const opened = fromEntries(t.stored());
    expect(opened.messages).toEqual(t.loop.transcript);
    assertConsistent(opened.messages);
    expect(opened.items).toEqual(t.loop.state.get().items);
    expect(opened.items.map((i) => i.kind)).toEqual(["user", "tool", "assistant", "user", "assistant", "notice", "user", "assistant"]);
    // The card's result was stored once, in the tool_result, and put back.
    const card = opened.items[1] as ToolItem;
    expect(card).toMatchObject({ status: "done", result: { tool: "read_file", path: "src/main.rs", ok: true } });
    const storedCard = t.stored().flatMap((e) => e.items as Record<string, unknown>[]).filter((i) => i.id === card.id).at(-1);
    expect(storedCard).toMatchObject({ resultInMessage: true });
    expect(storedCard).not.toHaveProperty("result");
  });

  it("stores a reply only once it has ended", async () => {
    const gate = deferred<void>();
    const slow: Turn = async (emit) => {
      emit({ type: "text_delta", text: "half a rep" });
      await gate.promise;
      emit({ type: "text_delta", text: "ly" });
      emit({ type: "done", stop_reason: "end_turn" });
    };
    const t = setup([slow]);
    const sent = t.loop.send("hi");
    await vi.waitFor(() => expect(t.loop.state.get().items).toHaveLength(2));
    await vi.waitFor(() => expect(t.ipc.appendEntry).toHaveBeenCalledTimes(1));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(t.stored().map((e) => e.message?.role)).toEqual(["user"]);
    gate.resolve();
    await sent;
    expect(t.stored().at(-1)?.message).toEqual({ role: "assistant", content: [{ type: "text", text: "half a reply" }] });
  });

  it("forks before a user message or after the work it started", async () => {
    const t = setup([say("one"), say("two"), say("three")]);
    await t.loop.send("first");
    await t.loop.send("second");
    await t.loop.send("third");
    const users = t.loop.state.get().items.filter((i) => i.kind === "user");
    // Entries: 0 first, 1 one, 2 second, 3 two, 4 third, 5 three.
    expect(users.map((u) => t.loop.forkPoint(u.id, "edit"))).toEqual([0, 2, 4]);
    expect(users.map((u) => t.loop.forkPoint(u.id, "here"))).toEqual([2, 4, Number.MAX_SAFE_INTEGER]);
    expect(t.loop.forkPoint("no-such-item", "edit")).toBeNull();
  });

  it("opens a conversation and appends to it where it left off", async () => {
    const t = setup([say("again")]);
    const first = setup([say("hello")]);
    await first.loop.send("hi");
    t.loop.load({
      summary: { id: "c7", project: "/p/app", title: "hi", first_line: "hi", created_ms: 0, updated_ms: 0, model: "m", input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 0, entries: 2 },
      entries: first.stored(),
    });
    await t.loop.send("hi again");
    // Only the new message and its reply are appended, to the opened conversation.
    expect(t.ipc.appendEntry.mock.calls.map(([id, entry]) => [id, entry.message?.content])).toEqual([
      ["c7", [{ type: "text", text: "hi again" }]],
      ["c7", [{ type: "text", text: "again" }]],
    ]);
    expect(t.requests[0].messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
  });
});

describe("a conversation opened brief", () => {
  it("is made whole before the next request, its cards get their results, and nothing is appended again", async () => {
    const read = use("read_file", { path: "big.txt" });
    const first = setup([callTools(read), say("It is big.")]);
    first.ipc.callTool.mockResolvedValue({ path: "big.txt", content: "x".repeat(5000) });
    await first.loop.send("read big.txt");
    const whole = first.stored();
    // What Rust answers a brief open: the long result emptied, its id said.
    const brief = whole.map((entry) => {
      const result = entry.message?.content.find((b) => b.type === "tool_result");
      if (!entry.message || !result) return entry;
      return { ...entry, message: { ...entry.message, content: entry.message.content.map((b) => (b.type === "tool_result" ? { ...b, content: "" } : b)) }, elided: [read.id] };
    });
    const summary = { id: "c5", project: "/p/app", title: "t", first_line: "t", created_ms: 0, updated_ms: 0, model: "m", input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 0, entries: whole.length };

    const t = setup([say("Still big.")]);
    const held = deferred<void>();
    t.ipc.openConversation.mockImplementation(async () => {
      await held.promise;
      return { summary, entries: whole };
    });
    t.loop.load({ summary, entries: brief });
    const card = () => t.loop.state.get().items.find((i): i is ToolItem => i.kind === "tool");
    expect(card()?.result).toBeUndefined();

    const sent = t.loop.send("and now?");
    // Going on fetches the whole at once (else it comes a moment after the open).
    await vi.waitFor(() => expect(t.ipc.openConversation).toHaveBeenCalledWith("c5", { last: 500 }));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(t.requests).toHaveLength(0);
    held.resolve();
    await sent;
    // The request carried the whole result, never the emptied one.
    expect(t.requests[0].messages).toEqual([...first.loop.transcript, { role: "user", content: [{ type: "text", text: "and now?" }] }]);
    expect(card()?.result).toEqual({ path: "big.txt", content: "x".repeat(5000) });
    // Only the new message and the reply were appended.
    expect(t.ipc.appendEntry.mock.calls.map(([, entry]) => entry.message?.role)).toEqual(["user", "assistant"]);
    expect(t.ipc.appendEntry.mock.calls.flatMap(([, entry]) => entry.items as Item[]).some((i) => i.kind === "tool")).toBe(false);
  });

  it("does not send when the whole cannot be had, and says why", async () => {
    const t = setup([say("never")]);
    t.ipc.openConversation.mockRejectedValue({ code: "io", message: "locked", hint: "", retryable: true, details: {} });
    const summary = { id: "c6", project: "/p/app", title: "t", first_line: "t", created_ms: 0, updated_ms: 0, model: "m", input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 0, entries: 1 };
    t.loop.load({ summary, entries: [{ seq: 0, message: { role: "user", content: [{ type: "tool_result", tool_use_id: "x", content: "" }] }, items: [], elided: ["x"] }] });
    await t.loop.send("hello");
    expect(t.requests).toHaveLength(0);
    expect(t.loop.state.get().error?.message).toBe("locked");
    expect(t.ipc.openConversation).toHaveBeenCalledTimes(1);
    // The next try fetches it again.
    await t.loop.send("hello");
    expect(t.ipc.openConversation).toHaveBeenCalledTimes(2);
    expect(t.requests).toHaveLength(0);
  });
});

describe("Journal", () => {
  const user = (id: string): Item => ({ kind: "user", id, text: id });

  it("appends in order, one at a time, and tries a failed append again before the next", async () => {
    const calls: [string | null, NewEntry][] = [];
    let fail = true;
    const gate = deferred<void>();
    const appendEntry = vi.fn(async (id: string | null, entry: NewEntry): Promise<Appended> => {
      calls.push([id, entry]);
      if (calls.length === 1) await gate.promise;
      if (calls.length === 2 && fail) {
        fail = false;
        throw { code: "io", message: "another Corral window is using the conversation history", hint: "", retryable: true, details: { reason: "locked" } };
      }
      return { conversation: "c1", seq: calls.length - 1 };
    });
    const errors: string[] = [];
    const journal = new Journal({ appendEntry }, { conversation: null, onError: (e) => errors.push(e.message) });
    const a = user("a");
    const b = user("b");
    journal.record({ role: "user", content: [{ type: "text", text: "a" }] }, [a]);
    journal.recordItems([b]);
    // The second waits for the first: it needs the conversation the first starts.
    await vi.waitFor(() => expect(appendEntry).toHaveBeenCalledTimes(1));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(appendEntry).toHaveBeenCalledTimes(1);
    gate.resolve();
    await journal.flush();
    expect(errors).toEqual(["another Corral window is using the conversation history"]);
    journal.recordItems([user("c")]);
    await journal.flush();
    // The failed one went again before anything after it, to the same conversation.
    expect(calls.map(([id, entry]) => [id, (entry.items as Item[]).map((i) => i.id)])).toEqual([
      [null, ["a"]],
      ["c1", ["b"]],
      ["c1", ["b"]],
      ["c1", ["c"]],
    ]);
    expect([journal.seqOf("a"), journal.seqOf("b"), journal.seqOf("c")]).toEqual([0, 2, 3]);
  });

  it("says why entries are not stored while they wait, and nothing once they are", async () => {
    let full = true;
    const appendEntry = vi.fn(async (): Promise<Appended> => {
      if (full) throw { code: "io", message: "the disk is full", hint: "", retryable: false, details: {} };
      return { conversation: "c1", seq: 0 };
    });
    const journal = new Journal({ appendEntry }, { conversation: null });
    journal.recordItems([user("a")]);
    await journal.flush();
    expect([journal.unsaved, journal.error?.message, journal.conversation]).toEqual([1, "the disk is full", null]);
    full = false;
    await journal.retry();
    expect([journal.unsaved, journal.error, journal.conversation]).toEqual([0, null, "c1"]);
  });

  it("opens around an entry the history found damaged: its results without their call are left out", () => {
    const entries: StoredEntry[] = [
      { seq: 0, message: { role: "user", content: [{ type: "text", text: "read it" }] }, items: [{ kind: "user", id: "u", text: "read it" }] },
      // The assistant's call, damaged: the history gives its notice, no message.
      { seq: 1, message: null, items: [{ kind: "notice", id: "damaged-c-1", text: "Entry 1 of this conversation is damaged" }] },
      { seq: 2, message: { role: "user", content: [{ type: "tool_result", tool_use_id: "x", content: "{}" }] }, items: [] },
      { seq: 3, message: { role: "assistant", content: [{ type: "text", text: "done" }] }, items: [{ kind: "assistant", id: "a", text: "done", streaming: false }] },
    ];
    const opened = fromEntries(entries);
    expect(opened.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "read it" }] },
      { role: "assistant", content: [{ type: "text", text: "done" }] },
    ]);
    expect(opened.items.map((item) => item.kind)).toEqual(["user", "notice", "assistant"]);
  });

  it("appends only items that are new or changed since the last append", async () => {
    const appendEntry = vi.fn(async (): Promise<Appended> => ({ conversation: "c1", seq: 0 }));
    const journal = new Journal({ appendEntry }, { conversation: "c1" });
    const card: ToolItem = { kind: "tool", id: "t", callId: "x", name: "read_file", input: {}, risk: "read", status: "queued" };
    const text: Item = { kind: "assistant", id: "s", text: "streaming", streaming: true };
    journal.record(null, [card, text]);
    journal.record(null, [card]);
    journal.record(null, [{ ...card, status: "done" }]);
    await journal.flush();
    expect(appendEntry.mock.calls.map((c) => (c as unknown as [string, NewEntry])[1].items)).toEqual([[card], [{ ...card, status: "done" }]]);
  });

  it("keeps a result in the item when the message does not hold the same text", () => {
    const card: ToolItem = { kind: "tool", id: "t", callId: "x", name: "read_file", input: {}, risk: "read", status: "done", result: { a: 1 } };
    expect(entryItems([card], null)).toEqual([card]);
    expect(entryItems([card], { role: "user", content: [{ type: "tool_result", tool_use_id: "x", content: "{\"a\":2}" }] })).toEqual([card]);
  });
});
