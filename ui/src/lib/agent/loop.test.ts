import { describe, expect, it, vi } from "vitest";
import { assertConsistent, callTools, deferred, fakeIpc, say, TICKET, use } from "../../test/fakeIpc";
import { wireError } from "../errors";
import type { ToolResultBlock } from "../types";
import { AgentLoop } from "./loop";
import type { ToolItem } from "./state";
import { DENIED_TEXT } from "./transcript";
import { NO_INSTRUCTIONS } from "./instructions";

function setup(turns: Parameters<typeof fakeIpc>[0]) {
  const fake = fakeIpc(turns);
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  const cards = () => loop.state.get().items.filter((i): i is ToolItem => i.kind === "tool");
  const results = () => loop.transcript.flatMap((m) => m.content.filter((b): b is ToolResultBlock => b.type === "tool_result"));
  return { ...fake, loop, cards, results };
}

describe("AgentLoop", () => {
  it("streams a plain answer and appends each message to the history", async () => {
    const t = setup([say("Hello "), say("again")]);
    await t.loop.send("hi");
    const items = t.loop.state.get().items;
    expect(items.map((i) => i.kind)).toEqual(["user", "assistant"]);
    expect(items[1]).toMatchObject({ text: "Hello ", streaming: false });
    expect(t.loop.transcript).toEqual([
      { role: "user", content: [{ type: "text", text: "hi" }] },
      { role: "assistant", content: [{ type: "text", text: "Hello " }] },
    ]);
    expect(t.requests[0].system).toContain("/p/app");
    expect(t.requests[0].tools.map((x) => x.name)).toContain("read_file");
    // The user's message, then the reply with its item and what it cost; the
    // first append starts the conversation, the next go to it.
    expect(t.ipc.appendEntry.mock.calls).toEqual([
      [null, { message: { role: "user", content: [{ type: "text", text: "hi" }] }, items: [items[0]] }],
      ["c1", { message: { role: "assistant", content: [{ type: "text", text: "Hello " }] }, items: [items[1]] }],
    ]);
    expect(t.loop.conversationId).toBe("c1");
    expect(t.loop.state.get().busy).toBe(false);
  });

  it("runs a tool call and feeds its result back to the model", async () => {
    const read = use("read_file", { path: "src/main.rs" });
    const t = setup([callTools(read), say("It prints hello.")]);
    await t.loop.send("what does main do?");
    expect(t.ipc.callTool).toHaveBeenCalledWith("read_file", { path: "src/main.rs" }, { ticket: TICKET });
    expect(t.requests).toHaveLength(2);
    const fed = t.requests[1].messages.at(-1);
    expect(fed).toEqual({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: read.id, content: JSON.stringify({ tool: "read_file", path: "src/main.rs", ok: true }) }],
    });
    expect(t.cards()).toMatchObject([{ name: "read_file", status: "done", callId: read.id }]);
    assertConsistent(t.loop.transcript);
  });

  it("runs read-only calls in parallel", async () => {
    const a = use("read_file", { path: "a.txt" });
    const b = use("read_file", { path: "b.txt" });
    const t = setup([callTools(a, b), say("done")]);
    const held = [deferred<unknown>(), deferred<unknown>()];
    let inFlight = 0;
    let maxInFlight = 0;
    t.ipc.callTool.mockImplementation(async (_name, input) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const out = await held[input.path === "a.txt" ? 0 : 1].promise;
      inFlight--;
      return out;
    });
    const sent = t.loop.send("read both");
    await vi.waitFor(() => expect(inFlight).toBe(2));
    held[1].resolve({ path: "b.txt" });
    held[0].resolve({ path: "a.txt" });
    await sent;
    expect(maxInFlight).toBe(2);
    // Results keep the model's order even when b finished first.
    expect(t.results().map((r) => r.tool_use_id)).toEqual([a.id, b.id]);
  });

  it("runs writes one at a time, in the model's order", async () => {
    const w1 = use("write_file", { path: "one.txt", content: "1" });
    const w2 = use("write_file", { path: "two.txt", content: "2" });
    const t = setup([callTools(w1, w2), say("written")]);
    const order: string[] = [];
    let inFlight = 0;
    t.ipc.callTool.mockImplementation(async (name, input) => {
      if (name === "read_file") throw wireError("not_found", "no such file");
      inFlight++;
      expect(inFlight).toBe(1);
      order.push(String(input.path));
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      return { path: input.path, bytes: 1, created: true };
    });
    await t.loop.send("write two files");
    expect(order).toEqual(["one.txt", "two.txt"]);
    expect(t.cards().map((c) => c.status)).toEqual(["done", "done"]);
  });

  it("asks before a write, shows the would-be diff, and approves once by its ticket", async () => {
    const w = use("write_file", { path: "notes.md", content: "new\n" });
    const t = setup([callTools(w), say("ok")]);
    t.ipc.checkCall.mockResolvedValue({
      ticket: TICKET,
      decision: "ask",
      reason: "writes need approval",
      preview: { path: "notes.md", before: "old\n", after: "new\n", diff: "--- a/notes.md\n+++ b/notes.md\n@@ -1 +1 @@\n-old\n+new\n", base: "blake3:01" },
    });
    t.ipc.callTool.mockImplementation(async (_name, input) => ({ path: input.path, bytes: 4, created: false }));
    const sent = t.loop.send("update notes");
    await vi.waitFor(() => expect(t.cards()[0]?.status).toBe("waiting"));
    const card = t.cards()[0];
    expect(card.reason).toBe("writes need approval");
    expect(card.preview).toEqual({ kind: "diff", path: "notes.md", before: "old\n", after: "new\n" });
    expect(t.ipc.callTool).not.toHaveBeenCalledWith("write_file", expect.anything(), expect.anything());
    t.loop.decide(card.id, "once");
    await sent;
    // The answer goes with the ticket it answers (Rust kept the preview shown with it, and
    // writes only over those bytes); tagged with the user's message and the card: the
    // checkpoint before it carries them.
    const turn = t.loop.state.get().items[0].id;
    expect(t.ipc.callTool).toHaveBeenCalledWith("write_file", w.input, { ticket: TICKET, approval: { scope: "once" } }, { call_id: card.id, turn_id: turn });
    expect(t.cards()[0].status).toBe("done");
  });

  it("allows in the conversation exactly the grant chosen, under the conversation's key", async () => {
    const sh = use("exec_shell", { command: "cargo", args: ["test"] });
    const t = setup([callTools(sh), say("tests pass")]);
    t.ipc.checkCall.mockResolvedValue({ ticket: TICKET, decision: "ask", reason: "commands need approval" });
    const sent = t.loop.send("run tests");
    await vi.waitFor(() => expect(t.cards()[0]?.status).toBe("waiting"));
    const key = t.loop.grantsKey;
    const grant = { kind: "command" as const, command: "cargo", args: ["test"], more: false };
    t.loop.decide(t.cards()[0].id, { grant });
    await sent;
    expect(t.ipc.checkCall).toHaveBeenCalledWith("exec_shell", sh.input, key);
    expect(t.ipc.execShell).toHaveBeenCalledWith(sh.input, { ticket: TICKET, approval: { scope: "conversation", grant } }, expect.any(String), expect.any(Function), {
      call_id: t.cards()[0].id,
      turn_id: t.loop.state.get().items[0].id,
    });
    await vi.waitFor(() => expect(t.loop.state.get().grants).toEqual([{ id: "grant-1", grant }]));
  });

  it("tells the model when the user denies a call, and does not run it", async () => {
    const w = use("write_file", { path: "x.txt", content: "x" });
    const t = setup([callTools(w), say("understood")]);
    t.ipc.checkCall.mockResolvedValue({ ticket: TICKET, decision: "ask", reason: "writes need approval" });
    const sent = t.loop.send("write x");
    await vi.waitFor(() => expect(t.cards()[0]?.status).toBe("waiting"));
    t.loop.decide(t.cards()[0].id, "deny");
    await sent;
    expect(t.ipc.callTool).not.toHaveBeenCalledWith("write_file", expect.anything(), expect.anything());
    expect(t.results()).toEqual([{ type: "tool_result", tool_use_id: w.id, content: DENIED_TEXT, is_error: true }]);
    expect(t.cards()[0].status).toBe("denied");
  });

  it("feeds a policy denial back as a denied error", async () => {
    const sh = use("exec_shell", { command: "rm", args: ["-rf", "."] });
    const t = setup([callTools(sh), say("ok")]);
    t.ipc.checkCall.mockResolvedValue({ ticket: TICKET, decision: "deny", reason: "read-only mode" });
    await t.loop.send("clean up");
    expect(t.ipc.execShell).not.toHaveBeenCalled();
    const [result] = t.results();
    expect(result.is_error).toBe(true);
    expect(JSON.parse(result.content)).toMatchObject({ code: "denied", message: "read-only mode" });
    expect(t.cards()[0]).toMatchObject({ status: "denied", reason: "read-only mode" });
  });

  it("feeds a tool's standardized error back as an error tool_result", async () => {
    const read = use("read_file", { path: "../secrets.txt" });
    const t = setup([callTools(read), say("that path is outside")]);
    const error = {
      code: "path_outside_root",
      message: "`../secrets.txt` resolves outside the project folder",
      hint: "Use a path inside the project, relative to its root.",
      retryable: false,
      details: { path: "../secrets.txt" },
    };
    t.ipc.callTool.mockRejectedValue(error);
    await t.loop.send("read it");
    expect(t.results()).toEqual([{ type: "tool_result", tool_use_id: read.id, content: JSON.stringify(error), is_error: true }]);
    expect(t.cards()[0]).toMatchObject({ status: "failed", error });
  });

  it("answers an unknown tool with invalid_input instead of calling Rust", async () => {
    const bad = use("launch_rockets", {});
    const t = setup([callTools(bad), say("sorry")]);
    await t.loop.send("go");
    expect(t.ipc.checkCall).not.toHaveBeenCalled();
    expect(JSON.parse(t.results()[0].content)).toMatchObject({ code: "invalid_input" });
  });

  it("gives a garbled tool input's error back to the model without running the call", async () => {
    const bad = use("read_file", {});
    const good = use("read_file", { path: "a.txt" });
    const inputError = wireError("invalid_input", "the input for tool `read_file` is not a JSON object: EOF", "Call the tool again.");
    const t = setup([
      (emit) => {
        emit({ type: "tool_call_start", id: bad.id, name: bad.name });
        emit({ type: "tool_call_delta", id: bad.id, json: '{"path": ' });
        emit({ type: "tool_call_end", id: bad.id, name: bad.name, input: {}, input_error: inputError });
        emit({ type: "tool_call_start", id: good.id, name: good.name });
        emit({ type: "tool_call_end", id: good.id, name: good.name, input: good.input });
        emit({ type: "done", stop_reason: "tool_use" });
      },
      say("retrying"),
    ]);
    await t.loop.send("read a.txt");
    expect(t.ipc.callTool).toHaveBeenCalledTimes(1);
    expect(t.ipc.callTool).toHaveBeenCalledWith("read_file", { path: "a.txt" }, { ticket: TICKET });
    expect(t.results()[0]).toEqual({ type: "tool_result", tool_use_id: bad.id, content: JSON.stringify(inputError), is_error: true });
    expect(t.results()[1]).toMatchObject({ tool_use_id: good.id });
    expect(t.cards()[0]).toMatchObject({ status: "failed", error: inputError });
    expect(t.requests).toHaveLength(2);
    assertConsistent(t.loop.transcript);
  });

  it("streams shell output into the card's buffer", async () => {
    const sh = use("exec_shell", { command: "npm", args: ["test"] });
    const t = setup([callTools(sh), say("ok")]);
    t.ipc.execShell.mockImplementation(async (input, _approval, _runId, onOutput) => {
      onOutput({ stream: "stdout", data: "line 1\nline " });
      onOutput({ stream: "stdout", data: "2\n" });
      onOutput({ stream: "stderr", data: "warn\n" });
      return { command: "npm", args: input.args as string[], stdout: "line 1\nline 2\n", stderr: "warn\n", exit_code: 1, timed_out: false, duration_ms: 12, stdout_truncated_bytes: 0, stderr_truncated_bytes: 0, profile: "build", sandbox: "namespaces", sandboxed: true };
    });
    await t.loop.send("test");
    const buffer = t.loop.outputFor(t.cards()[0].id);
    expect(buffer?.lines).toEqual([
      { stream: "stdout", text: "line 1", sgr: "" },
      { stream: "stdout", text: "line 2", sgr: "" },
      { stream: "stderr", text: "warn", sgr: "" },
    ]);
    expect(t.cards()[0]).toMatchObject({ status: "done", result: { exit_code: 1 } });
    // A new conversation lets go of it: the old card shows what was saved.
    const card = t.cards()[0].id;
    await t.loop.clear();
    expect(t.loop.outputFor(card)).toBeUndefined();
  });
});
