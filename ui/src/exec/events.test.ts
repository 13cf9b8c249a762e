import { describe, expect, it } from "vitest";
import { emptyState, type AgentState, type Item, type ToolItem } from "../lib/agent/state";
import { EventTracker, type ExecEvent } from "./events";
import { utf8 } from "./globals";

const card = (status: ToolItem["status"], input: Record<string, unknown> = {}): ToolItem => ({
  kind: "tool",
  id: "c1",
  callId: "call_1",
  name: "write_file",
  input,
  risk: "write",
  status,
  ...(status === "waiting" ? { reason: "writes a.txt" } : {}),
});

const state = (...items: Item[]): AgentState => ({ ...emptyState(), items });

describe("EventTracker", () => {
  it("tells a call once its input is whole, its approval, and its end", () => {
    const events: ExecEvent[] = [];
    const waiting: string[] = [];
    const tracker = new EventTracker((e) => events.push(e), (c) => waiting.push(c.id), emptyState());
    tracker.update(state(card("queued")));
    tracker.update(state(card("waiting", { path: "a.txt" })));
    tracker.update(state(card("waiting", { path: "a.txt" })));
    tracker.update(state({ ...card("denied", { path: "a.txt" }), reason: "denied by the user" }));
    expect(events).toEqual([
      { type: "tool_call", id: "c1", name: "write_file", input: { path: "a.txt" } },
      { type: "approval_asked", id: "c1", name: "write_file", reason: "writes a.txt" },
      { type: "tool_result", id: "c1", name: "write_file", status: "denied", reason: "denied by the user" },
    ]);
    expect(waiting).toEqual(["c1"]);
  });

  it("tells what the model received of a result cut to fit, after its end, and of a message sent in parts, once each", () => {
    const events: ExecEvent[] = [];
    const tracker = new EventTracker((e) => events.push(e), () => undefined, emptyState());
    const read: ToolItem = { ...card("done"), name: "read_file", input: { path: "big.txt" } };
    const cut = { received: 1_024, total: 43_310, rest: "read_file with start_line and end_line" };
    const pasted: Item = { kind: "user", id: "u1", text: "log", cut: { received: 3_000, total: 12_000, rest: "read_paste, parts 2 to 5" } };
    tracker.update(state(pasted, read));
    tracker.update(state(pasted, { ...read, cut }));
    tracker.update(state(pasted, { ...read, cut }));
    expect(events).toEqual([
      { type: "cut", id: "u1", received: 3_000, total: 12_000, rest: "read_paste, parts 2 to 5" },
      { type: "tool_call", id: "c1", name: "read_file", input: { path: "big.txt" } },
      { type: "tool_result", id: "c1", name: "read_file", status: "done" },
      { type: "cut", id: "c1", name: "read_file", received: 1_024, total: 43_310, rest: "read_file with start_line and end_line" },
    ]);
    // A conversation resumed: its cuts were told in their run.
    const again: ExecEvent[] = [];
    new EventTracker((e) => again.push(e), () => undefined, state(pasted, { ...read, cut })).update(state(pasted, { ...read, cut }));
    expect(again).toEqual([]);
  });

  it("streams a thinking model's reasoning as the text it adds, apart from its answer", () => {
    const events: ExecEvent[] = [];
    const tracker = new EventTracker((e) => events.push(e), () => undefined, emptyState());
    const reply = (reasoning: string, text: string): Item => ({ kind: "assistant", id: "a1", text, reasoning, streaming: true });
    tracker.update(state(reply("Look", "")));
    tracker.update(state(reply("Look at main.", "")));
    tracker.update(state(reply("Look at main.", "It prints.")));
    expect(events).toEqual([
      { type: "reasoning_delta", id: "a1", text: "Look" },
      { type: "reasoning_delta", id: "a1", text: " at main." },
      { type: "text_delta", id: "a1", text: "It prints." },
    ]);
  });

  it("streams an answer as the text it adds, and leaves a resumed conversation's items untold", () => {
    const events: ExecEvent[] = [];
    const old: Item = { kind: "assistant", id: "a0", text: "before", streaming: false };
    const tracker = new EventTracker((e) => events.push(e), () => undefined, state(old));
    tracker.update(state(old, { kind: "assistant", id: "a1", text: "Hel", streaming: true }));
    tracker.update(state(old, { kind: "assistant", id: "a1", text: "Hello", streaming: false }));
    expect(events).toEqual([
      { type: "text_delta", id: "a1", text: "Hel" },
      { type: "text_delta", id: "a1", text: "lo" },
    ]);
  });
});

describe("utf8", () => {
  it("encodes as TextEncoder does", () => {
    for (const text of ["", "plain", "héllo", "€", "🦀 crab", "\u{10FFFF}"]) {
      expect(Array.from(utf8(text))).toEqual(Array.from(new TextEncoder().encode(text)));
    }
  });

  it("tells a subagent's calls under its task card, and asks for their approval", () => {
    const events: ExecEvent[] = [];
    const waiting: string[] = [];
    const tracker = new EventTracker((e) => events.push(e), (c) => waiting.push(c.id), emptyState());
    const inner = { ...card("waiting", { path: "a.txt" }), id: "s1" };
    const task = (items: Item[]): ToolItem => ({ ...card("running", { subagent_type: "fixer" }), name: "task", subagent: { type: "fixer", items, usage: { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 0 } } });
    tracker.update(state(task([{ kind: "user", id: "u1", text: "Fix a.txt." }, inner])));
    expect(events).toContainEqual({ type: "tool_call", id: "s1", name: "write_file", input: { path: "a.txt" } });
    expect(events).toContainEqual({ type: "approval_asked", id: "s1", name: "write_file", reason: "writes a.txt" });
    expect(waiting).toEqual(["s1"]);
  });
});
