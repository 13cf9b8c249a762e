import { describe, expect, it, vi } from "vitest";
import { assertConsistent, callTools, deferred, fakeIpc, say, TICKET, type Turn, use } from "../../test/fakeIpc";
import type { LlmRequest, NewEntry, ToolResultBlock } from "../types";
import { NO_INSTRUCTIONS } from "./instructions";
import { AgentLoop } from "./loop";
import type { ToolItem } from "./state";
import { BUILT_IN_AGENTS, EXPLORE, taskTool, TYPE_LIST_CHARS } from "./subagentTypes";
import { compactTool } from "./promptBudget";

function setup(turns: Turn[]) {
  const fake = fakeIpc(turns);
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  const cards = () => loop.state.get().items.filter((i): i is ToolItem => i.kind === "tool");
  return { ...fake, loop, cards };
}

const text = (request: LlmRequest): string => JSON.stringify(request.messages);

/** A subagent's reply to `request`: picked by the task it was given, so either request may take the turn. */
function answerByTask(request: LlmRequest | undefined, answers: Record<string, string>, usage = { input_tokens: 0, output_tokens: 0 }): Turn {
  return (emit) => {
    const found = Object.entries(answers).find(([task]) => request && text(request).includes(task));
    emit({ type: "text_delta", text: found ? found[1] : "no task matched" });
    emit({ type: "usage", ...usage });
    emit({ type: "done", stop_reason: "end_turn" });
  };
}

describe("the task tool", () => {
  it("is offered with the subagent types, and never inside a subagent", async () => {
    const t = setup([callTools(use("task", { subagent_type: "explore", prompt: "Where is main?" })), say("In src."), say("It is in src.")]);
    await t.loop.send("where is main?");
    const offered = t.requests[0].tools.find((tool) => tool.name === "task");
    expect(offered?.description).toContain("- explore: ");
    expect(offered?.description).toContain("- plan: ");
    const sub = t.requests[1].tools.map((tool) => tool.name);
    expect(sub).toContain("read_file");
    expect(sub).not.toContain("task");
    expect(sub).not.toContain("write_file");
    expect(sub).not.toContain("exec_shell");
    expect(sub).not.toContain("update_plan");
  });

  it("runs two read-only subagents at once, each with its own context, and gives the parent both answers", async () => {
    const a = use("task", { subagent_type: "explore", description: "find alpha", prompt: "Find where alpha is defined." });
    const b = use("task", { subagent_type: "explore", description: "find beta", prompt: "Find where beta is defined." });
    const bothAsked = deferred<void>();
    let requests: LlmRequest[] = [];
    const answers = { alpha: "alpha is in a.rs:3", beta: "beta is in b.rs:9" };
    // The first subagent's reply waits for the second subagent's request: only overlap ends it.
    const held: Turn = async (emit, ctx) => {
      const mine = requests.at(-1);
      await bothAsked.promise;
      await answerByTask(mine, answers, { input_tokens: 100, output_tokens: 10 })(emit, ctx);
    };
    const second: Turn = (emit, ctx) => {
      bothAsked.resolve();
      return answerByTask(requests.at(-1), answers, { input_tokens: 200, output_tokens: 20 })(emit, ctx);
    };
    const parentFirst: Turn = (emit, ctx) => {
      callTools(a, b)(emit, ctx);
      emit({ type: "usage", input_tokens: 1000, output_tokens: 50 });
    };
    const t = setup([parentFirst, held, second, say("Both found.")]);
    requests = t.requests;
    await t.loop.send("where are alpha and beta?");

    expect(t.requests).toHaveLength(4);
    for (const [i, task] of [[1, "alpha"], [2, "beta"]] as const) {
      const sub = t.requests.find((r, j) => j > 0 && j < 3 && text(r).includes(task))!;
      expect(sub, `request ${i}`).toBeDefined();
      expect(sub.system).toContain("You explore a codebase");
      expect(sub.messages).toEqual([{ role: "user", content: [{ type: "text", text: `Find where ${task} is defined.` }] }]);
      expect(text(sub)).not.toContain("where are alpha and beta?");
    }
    const results = t.requests[3].messages.at(-1)!.content.filter((b): b is ToolResultBlock => b.type === "tool_result");
    expect(results).toEqual([
      { type: "tool_result", tool_use_id: a.id, content: answers.alpha },
      { type: "tool_result", tool_use_id: b.id, content: answers.beta },
    ]);
    const cards = t.cards();
    expect(cards.map((c) => c.status)).toEqual(["done", "done"]);
    expect(cards[0].subagent?.items.map((i) => i.kind)).toEqual(["user", "assistant"]);
    expect(cards[0].subagent?.items[1]).toMatchObject({ kind: "assistant", text: answers.alpha });
    // The subagents' tokens count in the conversation's, and are stored with the round.
    // No price is known here: each request is counted as one without.
    expect(t.loop.state.get().usage).toEqual({ input_tokens: 1300, output_tokens: 80, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 3 });
    const stored = t.ipc.appendEntry.mock.calls.map((call) => call[1] as NewEntry);
    const round = stored.find((entry) => entry.message?.content.some((block) => block.type === "tool_result"));
    expect(round?.usage).toEqual({ input_tokens: 300, output_tokens: 30, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 2 });
    expect(JSON.stringify(round?.items)).toContain(answers.beta);
    assertConsistent(t.loop.transcript);
  });

  it("sends a subagent's tool calls through the same checks, in the parent's conversation", async () => {
    const read = use("read_file", { path: "src/main.rs" });
    const write = use("write_file", { path: "x.txt", content: "x" });
    const t = setup([callTools(use("task", { subagent_type: "explore", prompt: "Read main." })), callTools(read, write), say("main prints."), say("ok")]);
    await t.loop.send("go");
    expect(t.ipc.checkCall).toHaveBeenCalledWith("read_file", { path: "src/main.rs" }, t.loop.grantsKey);
    expect(t.ipc.callTool).toHaveBeenCalledWith("read_file", { path: "src/main.rs" }, { ticket: TICKET });
    // A tool it was not given does not run, whatever the mode.
    expect(t.ipc.checkCall).not.toHaveBeenCalledWith("write_file", expect.anything(), expect.anything());
    const nested = t.cards()[0].subagent!.items.filter((i): i is ToolItem => i.kind === "tool");
    expect(nested.map((c) => [c.name, c.status])).toEqual([
      ["read_file", "done"],
      ["write_file", "failed"],
    ]);
    expect(t.cards()[0]).toMatchObject({ status: "done", result: { subagent: "explore", answer: "main prints." } });
  });

  it("raises the project's hooks for a subagent's calls: a PreToolUse hook that blocks stops its call too", async () => {
    const read = use("read_file", { path: ".env.example" });
    const t = setup([callTools(use("task", { subagent_type: "explore", prompt: "Read the env." })), callTools(read), say("Blocked."), say("ok")]);
    const hookStatus = vi.fn(async () => ({ events: ["PreToolUse"], untrusted: [], problems: [] }));
    const runHooks = vi.fn(async () => ({ verdict: "deny", reason: "no env files", by: "guard.sh", context: [], notices: [], ran: ["guard.sh"] }));
    Object.assign(t.ipc, { hookStatus, runHooks });
    await t.loop.send("go");
    expect(runHooks).toHaveBeenCalledWith(expect.objectContaining({ event: "PreToolUse", tool: "read_file", input: { path: ".env.example" } }));
    expect(t.ipc.callTool).not.toHaveBeenCalledWith("read_file", expect.anything(), expect.anything());
    const nested = t.cards()[0].subagent!.items.filter((i): i is ToolItem => i.kind === "tool");
    expect(nested.map((c) => [c.name, c.status])).toEqual([["read_file", "denied"]]);
    // The subagent's next request tells it why.
    expect(text(t.requests[2])).toContain("no env files");
  });

  it("asks for a subagent's call on its own card, and takes the answer there", async () => {
    const read = use("read_file", { path: ".env" });
    const t = setup([callTools(use("task", { subagent_type: "explore", prompt: "Read .env." })), callTools(read), say("done"), say("ok")]);
    t.ipc.checkCall.mockResolvedValue({ ticket: TICKET, decision: "ask", reason: "a secret-like file" });
    const sent = t.loop.send("go");
    const waiting = () => t.cards()[0]?.subagent?.items.find((i): i is ToolItem => i.kind === "tool" && i.status === "waiting");
    await vi.waitFor(() => expect(waiting()).toBeDefined());
    t.loop.decide(waiting()!.id, "once");
    await sent;
    expect(t.ipc.callTool).toHaveBeenCalledWith("read_file", { path: ".env" }, { ticket: TICKET, approval: { scope: "once" } });
  });

  it("stops its subagents on Stop", async () => {
    const stalled: Turn = (_emit, ctx) => ctx.cancelled;
    const t = setup([callTools(use("task", { subagent_type: "plan", prompt: "Plan it." })), stalled]);
    const sent = t.loop.send("plan");
    await vi.waitFor(() => expect(t.requests).toHaveLength(2));
    t.loop.stop();
    await sent;
    expect(t.ipc.cancel).toHaveBeenCalled();
    expect(t.cards()[0].status).toBe("cancelled");
    assertConsistent(t.loop.transcript);
  });

  it("answers an unknown subagent type with the types there are", async () => {
    const t = setup([callTools(use("task", { subagent_type: "wizard", prompt: "x" })), say("ok")]);
    await t.loop.send("go");
    const result = t.requests[1].messages.at(-1)!.content[0] as ToolResultBlock;
    expect(result.is_error).toBe(true);
    expect(JSON.parse(result.content as string)).toMatchObject({ code: "invalid_input", hint: "Use one of: explore, plan." });
    expect(t.requests).toHaveLength(2);
  });

  it("lists the types within its budget, and only their names in a small window", () => {
    const many = Array.from({ length: 40 }, (_, i) => ({ ...EXPLORE, name: `agent${i}` }));
    const large = taskTool(many);
    expect(large.description).toContain("- agent0: ");
    expect(large.description).toContain("- also: ");
    expect(large.description).toContain("agent39");
    expect(large.description.length).toBeLessThan(TYPE_LIST_CHARS + 800);
    const small = compactTool(taskTool(BUILT_IN_AGENTS));
    expect(small.description).toBe("Starts a subagent on a task; its final report is the result.");
    expect(JSON.stringify(small.input_schema)).toContain('"enum":["explore","plan"]');
  });

  it("is named in more_tools in a small window, and offered once the model calls it", async () => {
    const t = setup([callTools(use("task", {})), say("ok")]);
    t.ipc.modelInfo.mockResolvedValue({ context_window: 4_096, source: "server" });
    await t.loop.send("go");
    const offered = (i: number) => t.requests[i].tools.find((tool) => tool.name === "task");
    expect(offered(0)).toBeUndefined();
    expect(t.requests[0].tools.find((tool) => tool.name === "more_tools")?.description).toContain("task (Starts a subagent on a task; its final report is the result)");
    expect(t.requests[1].messages.at(-1)!.content[0]).toMatchObject({ content: "Not run: task's parameters are offered now. Call it again with them." });
    expect(JSON.stringify(offered(1)?.input_schema)).toContain("subagent_type");
    expect(t.requests).toHaveLength(2);
  });
});
