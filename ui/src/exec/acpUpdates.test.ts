import { describe, expect, it } from "vitest";
import { emptyState, type AgentState, type Item, type ToolItem } from "../lib/agent/state";
import { UpdateTracker, type SessionUpdate } from "./acpUpdates";

const ROOT = "/home/me/app";

const write = (status: ToolItem["status"]): ToolItem => ({
  kind: "tool",
  id: "c1",
  callId: "call_1",
  name: "write_file",
  input: { path: "src/a.txt", content: "new\n" },
  risk: "write",
  display: { subject: "path", result: "written" },
  status,
  paths: [{ typed: "src/a.txt", inside: "src/a.txt" }],
  preview: { kind: "diff", path: "src/a.txt", before: "old\n", after: "new\n" },
});

const state = (...items: Item[]): AgentState => ({ ...emptyState(), items });

function track(seen: Item[] = []): { updates: SessionUpdate[]; tracker: UpdateTracker } {
  const updates: SessionUpdate[] = [];
  return { updates, tracker: new UpdateTracker((u) => updates.push(u), ROOT, seen) };
}

describe("UpdateTracker", () => {
  it("streams the reasoning and the answer as chunks, each piece once", () => {
    const { updates, tracker } = track();
    tracker.update(state({ kind: "assistant", id: "a1", text: "", streaming: true, reasoning: "Let me" }));
    tracker.update(state({ kind: "assistant", id: "a1", text: "Hi", streaming: true, reasoning: "Let me think" }));
    tracker.update(state({ kind: "assistant", id: "a1", text: "Hi there", streaming: false, reasoning: "Let me think" }));
    expect(updates).toEqual([
      { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "Let me" } },
      { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: " think" } },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Hi" } },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: " there" } },
    ]);
  });

  it("tells an edit with its absolute location and diff, then its end", () => {
    const { updates, tracker } = track();
    tracker.update(state(write("queued")));
    expect(updates).toEqual([]);
    tracker.update(state(write("running")));
    tracker.update(state({ ...write("done"), result: { path: "src/a.txt" } }));
    const diff = { type: "diff", path: `${ROOT}/src/a.txt`, oldText: "old\n", newText: "new\n" };
    expect(updates).toEqual([
      {
        sessionUpdate: "tool_call",
        toolCallId: "c1",
        title: "write_file src/a.txt",
        kind: "edit",
        status: "pending",
        rawInput: { path: "src/a.txt", content: "new\n" },
        locations: [{ path: `${ROOT}/src/a.txt` }],
        content: [diff],
      },
      { sessionUpdate: "tool_call_update", toolCallId: "c1", status: "in_progress" },
      { sessionUpdate: "tool_call_update", toolCallId: "c1", status: "completed", content: [diff], rawOutput: { path: "src/a.txt" } },
    ]);
  });

  it("gives update_plan's steps as the plan", () => {
    const { updates, tracker } = track();
    const plan: ToolItem = {
      kind: "tool",
      id: "p1",
      callId: "call_p",
      name: "update_plan",
      input: {},
      risk: null,
      display: { subject: "arguments", result: "plan" },
      status: "done",
      result: { steps: [{ step: "Read", status: "completed" }, { step: "Fix", status: "in_progress" }] },
    };
    tracker.update(state(plan));
    expect(updates.at(-1)).toEqual({
      sessionUpdate: "plan",
      entries: [
        { content: "Read", priority: "medium", status: "completed" },
        { content: "Fix", priority: "medium", status: "in_progress" },
      ],
    });
  });

  it("replays the user's messages only when nothing was seen, and never what was", () => {
    const user: Item = { kind: "user", id: "u1", text: "hello" };
    const replay = track();
    replay.tracker.update(state(user, write("denied")));
    expect(replay.updates[0]).toEqual({ sessionUpdate: "user_message_chunk", content: { type: "text", text: "hello" } });
    expect(replay.updates.at(-1)).toMatchObject({ sessionUpdate: "tool_call_update", status: "failed" });

    const live = track([user, write("denied")]);
    live.tracker.update(state(user, write("denied")));
    expect(live.updates).toEqual([]);
  });

  it("reports a subagent's calls as tool calls of the turn", () => {
    const { updates, tracker } = track();
    const inner = { ...write("running"), id: "s1" };
    const task: ToolItem = {
      kind: "tool",
      id: "t1",
      callId: "call_t",
      name: "task",
      input: { subagent_type: "fixer", prompt: "Fix a.txt." },
      risk: null,
      status: "running",
      subagent: { type: "fixer", items: [{ kind: "user", id: "u1", text: "Fix a.txt." }, inner], usage: { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 0 } },
    };
    tracker.update(state(task));
    expect(updates.map((u) => ("toolCallId" in u ? u.toolCallId : null))).toContain("s1");
  });
});
