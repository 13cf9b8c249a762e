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
