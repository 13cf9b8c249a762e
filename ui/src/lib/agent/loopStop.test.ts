// Stop, turn cap, provider errors and restore: the transcript stays one the
// provider accepts on the next turn.
import { describe, expect, it, vi } from "vitest";
import { assertConsistent, callTools, fakeIpc, hangingShell, say, serverDisplay, type Turn, TICKET, use } from "../../test/fakeIpc";
import type { ToolResultBlock } from "../types";
import { AgentLoop } from "./loop";
import type { ToolItem } from "./state";
import { CANCELLED_TEXT } from "./transcript";
import { NO_INSTRUCTIONS } from "./instructions";

function setup(turns: Turn[], maxTurns?: number) {
  const fake = fakeIpc(turns);
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, maxTurns, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  const cards = () => loop.state.get().items.filter((i): i is ToolItem => i.kind === "tool");
  const results = () => loop.transcript.flatMap((m) => m.content.filter((b): b is ToolResultBlock => b.type === "tool_result"));
  return { ...fake, loop, cards, results };
}

describe("AgentLoop stop", () => {
  it("drops a half tool call when stopped mid-stream, keeping the text", async () => {
    const streaming: Turn = async (emit, { cancelled }) => {
      emit({ type: "text_delta", text: "Let me write " });
      emit({ type: "tool_call_start", id: "toolu_half", name: "write_file" });
      emit({ type: "tool_call_delta", id: "toolu_half", json: '{"path": "a' });
      await cancelled;
      emit({ type: "done", stop_reason: "cancelled" });
    };
    const t = setup([streaming, say("fine")]);
    const sent = t.loop.send("write a");
    await vi.waitFor(() => expect(t.cards()).toHaveLength(1));
    t.loop.stop();
    await sent;
    expect(t.ipc.cancel).toHaveBeenCalledWith(t.ipc.llmStream.mock.calls[0][0]);
    expect(t.cards()).toHaveLength(0);
    expect(t.loop.transcript).toEqual([
      { role: "user", content: [{ type: "text", text: "write a" }] },
      { role: "assistant", content: [{ type: "text", text: "Let me write " }] },
    ]);
    await t.loop.send("go on");
    assertConsistent(t.loop.transcript);
    expect(t.loop.state.get().busy).toBe(false);
  });

  it("answers finished tool calls with 'cancelled' when stopped before the stream ends", async () => {
    const read = use("read_file", { path: "a" });
    const streaming: Turn = async (emit, { cancelled }) => {
      emit({ type: "tool_call_start", id: read.id, name: read.name });
      emit({ type: "tool_call_end", id: read.id, name: read.name, input: read.input });
      await cancelled;
    };
    const t = setup([streaming]);
    const sent = t.loop.send("read a");
    await vi.waitFor(() => expect(t.cards()).toHaveLength(1));
    t.loop.stop();
    await sent;
    expect(t.ipc.callTool).not.toHaveBeenCalled();
    expect(t.results()).toEqual([{ type: "tool_result", tool_use_id: read.id, content: CANCELLED_TEXT, is_error: true }]);
    expect(t.cards()[0]).toMatchObject({ status: "cancelled", error: { code: "cancelled" } });
    assertConsistent(t.loop.transcript);
  });

  it("answers every call of the turn when stopped at an approval card", async () => {
    const w = use("write_file", { path: "a", content: "x" });
    const r = use("read_file", { path: "b" });
    const t = setup([callTools(w, r), say("next")]);
    t.ipc.checkCall.mockImplementation(async (tool) =>
      tool === "write_file" ? { ticket: TICKET, decision: "ask", reason: "writes ask" } : { ticket: TICKET, decision: "allow" },
    );
    const sent = t.loop.send("go");
    await vi.waitFor(() => expect(t.cards()[0]?.status).toBe("waiting"));
    t.loop.stop();
    await sent;
    expect(t.results().map((x) => [x.tool_use_id, x.content])).toEqual([
      [w.id, CANCELLED_TEXT],
      [r.id, CANCELLED_TEXT],
    ]);
    expect(t.ipc.callTool).not.toHaveBeenCalledWith("read_file", { path: "b" }, expect.anything());
    await t.loop.send("try again later");
    assertConsistent(t.loop.transcript);
    // The next user text joins the tool results in one user message.
    expect(t.loop.transcript.at(-2)?.content.map((b) => b.type)).toEqual(["tool_result", "tool_result", "text"]);
  });

  it("cancels a running command: the card is cancelled and the model gets the error with the partial output", async () => {
    const sh = use("exec_shell", { command: "cargo", args: ["build"] });
    const t = setup([callTools(sh)]);
    const shellRun = hangingShell(t.ipc, [{ stream: "stderr", data: "Compiling corral\n" }], 800);
    const sent = t.loop.send("build");
    await vi.waitFor(() => expect(t.cards()[0]?.runId).toBeTruthy());
    t.loop.stop();
    await sent;
    expect(t.ipc.cancel).toHaveBeenCalledWith(shellRun());
    const card = t.cards()[0];
    expect(card).toMatchObject({ status: "cancelled", runId: undefined, error: { code: "cancelled", details: { duration_ms: 800 } } });
    expect(t.loop.outputFor(card.id)?.lines).toEqual([{ stream: "stderr", text: "Compiling corral", sgr: "" }]);
    expect(t.results()[0].is_error).toBe(true);
    expect(JSON.parse(t.results()[0].content)).toMatchObject({
      code: "cancelled",
      message: "`cargo` was stopped by the user",
      details: { stderr: "Compiling corral\n", duration_ms: 800 },
    });
    expect(t.loop.state.get().items.at(-1)).toMatchObject({ kind: "notice", text: "Stopped." });
    assertConsistent(t.loop.transcript);
  });

  it("Stop ends a running call of an MCP server's tool through its run id", async () => {
    const mcp = use("github__search", { query: "flaky test" });
    const t = setup([callTools(mcp)]);
    const builtIn = await t.ipc.toolSpecs();
    t.ipc.toolSpecs.mockResolvedValue([...builtIn, { name: "github__search", description: "[MCP server `github`] Search.", input_schema: { type: "object" }, risk: "shell", display: serverDisplay("github", "search") }]);
    t.ipc.checkCall.mockResolvedValue({ ticket: TICKET, decision: "allow" });
    let runId = "";
    t.ipc.callTool.mockImplementation(
      (_name, _input, _approval, _tag, id) =>
        new Promise((_resolve, reject) => {
          runId = id ?? "";
          t.ipc.cancel.mockImplementation(async (cancelled) => {
            if (cancelled === runId) reject({ code: "cancelled", message: "`search` of the MCP server `github` was stopped by the user", hint: "", retryable: false, details: {} });
            return null;
          });
        }),
    );
    const sent = t.loop.send("search");
    await vi.waitFor(() => expect(runId).not.toBe(""));
    expect(t.ipc.callTool).toHaveBeenCalledWith("github__search", { query: "flaky test" }, { ticket: TICKET }, expect.objectContaining({ call_id: expect.any(String) }), runId);
    t.loop.stop();
    await sent;
    expect(t.ipc.cancel).toHaveBeenCalledWith(runId);
    expect(t.cards()[0]).toMatchObject({ status: "cancelled", error: { code: "cancelled" } });
    expect(t.results()[0].is_error).toBe(true);
    assertConsistent(t.loop.transcript);
  });

  it("stops one command from its panel and goes on with the next turn", async () => {
    const sh = use("exec_shell", { command: "npm", args: ["run", "dev"] });
    const t = setup([callTools(sh), say("The dev server was stopped.")]);
    hangingShell(t.ipc, [{ stream: "stdout", data: "listening on 5173\n" }], 12_000);
    const sent = t.loop.send("start it");
    await vi.waitFor(() => expect(t.cards()[0]?.runId).toBeTruthy());
    t.loop.stopCommand(t.cards()[0].id);
    await sent;
    expect(t.cards()[0].status).toBe("cancelled");
    expect(JSON.parse(t.results()[0].content)).toMatchObject({ code: "cancelled", details: { stdout: "listening on 5173\n" } });
    expect(t.ipc.llmStream).toHaveBeenCalledTimes(2);
    expect(t.loop.transcript.at(-1)).toEqual({ role: "assistant", content: [{ type: "text", text: "The dev server was stopped." }] });
    assertConsistent(t.loop.transcript);
  });

  it("stops after the turn cap with every tool call answered", async () => {
    const forever: Turn[] = Array.from({ length: 10 }, () => callTools(use("list_directory", { path: "." })));
    const t = setup(forever, 3);
    await t.loop.send("loop forever");
    expect(t.ipc.llmStream).toHaveBeenCalledTimes(3);
    expect(t.results()).toHaveLength(3);
    const last = t.loop.state.get().items.at(-1);
    expect(last).toMatchObject({ kind: "notice" });
    expect(last?.kind === "notice" && last.text).toContain("3 model turns");
    assertConsistent(t.loop.transcript);
  });
});

describe("AgentLoop errors and restore", () => {
  it("keeps the conversation on a provider error and re-sends it on retry", async () => {
    const failing: Turn = (emit) => {
      emit({ type: "text_delta", text: "partial" });
      emit({ type: "error", error: { code: "llm_rate_limited", message: "Too many requests", hint: "Wait a minute.", retryable: true, details: {} } });
    };
    const t = setup([say("first answer"), failing, say("second answer")]);
    await t.loop.send("one");
    await t.loop.send("two");
    expect(t.loop.state.get().error).toMatchObject({ code: "llm_rate_limited", hint: "Wait a minute." });
    expect(t.loop.state.get().items.map((i) => i.kind)).toEqual(["user", "assistant", "user"]);
    await t.loop.retry();
    expect(t.requests[2].messages).toEqual(t.requests[1].messages);
    expect(t.loop.state.get().error).toBeNull();
    expect(t.loop.transcript.at(-1)).toEqual({ role: "assistant", content: [{ type: "text", text: "second answer" }] });
  });

  it("treats a rejected llm_stream like an error event", async () => {
    const t = setup([]);
    t.ipc.llmStream.mockRejectedValue({ code: "llm_auth", message: "Invalid API key", hint: "Set a key in Settings.", retryable: false, details: {} });
    await t.loop.send("hello");
    expect(t.loop.state.get().error?.code).toBe("llm_auth");
    expect(t.loop.state.get().busy).toBe(false);
  });

  it("restores a saved conversation and repairs a dangling tool call", () => {
    const t = setup([]);
    t.loop.load({
      summary: {
        id: "c9", project: "/p/app", title: "hi", first_line: "hi", created_ms: 0, updated_ms: 0,
        model: "m", input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 0, entries: 2,
      },
      entries: [
        { seq: 0, message: { role: "user", content: [{ type: "text", text: "hi" }] }, items: [{ kind: "user", id: "u1", text: "hi" }] },
        {
          seq: 1,
          message: { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "read_file", input: { path: "a" } }] },
          items: [{ kind: "tool", id: "c1", callId: "t1", name: "read_file", input: { path: "a" }, risk: "read", status: "running" }],
        },
      ],
    });
    assertConsistent(t.loop.transcript);
    expect(t.cards()[0]).toMatchObject({ status: "failed", error: { code: "cancelled" } });
    expect(t.loop.conversationId).toBe("c9");
    expect(t.loop.forkPoint("u1", "edit")).toBe(0);
  });
});
