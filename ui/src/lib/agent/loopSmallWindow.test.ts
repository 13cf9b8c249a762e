// The loop on a small local server (a 2k-8k window) with the registry's real
// tool specs: the short prefix, tools offered on request (more_tools), a fresh result
// too large for the window cut before it is sent, a prefix that cannot fit
// said before anything is sent, and a Stop that leaves the meter honest.
import { describe, expect, it, vi } from "vitest";
import { assertConsistent, callTools, fakeIpc, say, use, type Turn } from "../../test/fakeIpc";
import specsJson from "../../test/toolSpecs.json";
import type { LlmEvent, LlmRequest, ToolResultBlock, ToolSpec } from "../types";
import { TokenEstimate } from "./context";
import { NOTHING_TO_COMPACT } from "./compaction";
import { CUT_NOTE } from "./fitting";
import { NO_INSTRUCTIONS } from "./instructions";
import { AgentLoop } from "./loop";
import type { ToolItem } from "./state";

const SPECS = specsJson as ToolSpec[];

function setup(turns: Turn[], window: number) {
  const fake = fakeIpc(turns);
  fake.ipc.toolSpecs.mockResolvedValue(SPECS);
  fake.ipc.modelInfo.mockResolvedValue({ context_window: window, source: "server" });
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  const notices = () => loop.state.get().items.flatMap((i) => (i.kind === "notice" ? [i.text] : []));
  const cards = () => loop.state.get().items.filter((i): i is ToolItem => i.kind === "tool");
  return { ...fake, loop, notices, cards };
}

const isSummary = (r: LlmRequest) => r.tools.length === 0;
const estimated = (r: LlmRequest) => new TokenEstimate().tokens(r);
const schemaOf = (r: LlmRequest, name: string) => JSON.stringify(r.tools.find((t) => t.name === name)?.input_schema);

describe("the loop in a 4k window", () => {
  it("sends the short prefix, and the tools asked for with more_tools come whole in the next request", async () => {
    const ask = use("more_tools", { names: ["write_file", "no_such_tool"] });
    const write = use("write_file", { path: "a.txt", content: "hi" });
    const t = setup([callTools(ask), callTools(write), say("Written.")], 4_096);
    await t.loop.send("write a.txt");
    const [first, second, third] = t.requests;
    expect(estimated({ ...first, messages: [] })).toBeLessThanOrEqual(1_200);
    expect(first.system).toContain("more_tools");
    expect(first.tools.map((tool) => tool.name)).toEqual(["read_file", "edit_file", "search_files", "exec_shell", "more_tools"]);
    const more = first.tools.find((tool) => tool.name === "more_tools")!;
    expect(more.description).toContain("write_file (Create a file or replace its whole content)");
    expect(more.description).toContain("glob (Find files whose path matches a glob pattern)");
    expect(more.description).toContain("task (Starts a subagent on a task; its final report is the result)");
    // Asking ran nothing; the next request offers write_file whole and names the rest still in more_tools.
    expect(t.ipc.checkCall.mock.calls.map((c) => c[0])).toEqual(["write_file"]);
    const answer = second.messages.at(-1)!.content[0] as ToolResultBlock;
    expect(answer.content).toContain("Offered now with their parameters: write_file.");
    expect(answer.content).toContain("No tool is named no_such_tool.");
    expect(answer.is_error).toBeUndefined();
    expect(schemaOf(second, "write_file")).toContain('"content"');
    expect(second.tools.find((tool) => tool.name === "more_tools")!.description).not.toContain("write_file");
    expect(schemaOf(third, "write_file")).toContain('"content"');
    expect(t.cards().map((c) => c.status)).toEqual(["done", "done"]);
    assertConsistent(third.messages);
  });

  it("a tool named in more_tools and called directly gets its parameters instead of running", async () => {
    const direct = use("glob", {});
    const ok = use("glob", { pattern: "*.md" });
    const t = setup([callTools(direct), callTools(ok), say("Found.")], 4_096);
    await t.loop.send("find the docs");
    const [, second] = t.requests;
    expect(t.ipc.checkCall.mock.calls.map((c) => c[0])).toEqual(["glob"]);
    expect((second.messages.at(-1)!.content[0] as ToolResultBlock).content).toContain("glob's parameters are offered now");
    expect(schemaOf(second, "glob")).toContain('"pattern"');
  });

  it("a more_tools call naming no tool is an error that lists the tools", async () => {
    const t = setup([callTools(use("more_tools", { names: [] })), say("Sorry.")], 4_096);
    await t.loop.send("go");
    const answer = t.requests[1].messages.at(-1)!.content[0] as ToolResultBlock;
    expect(answer.is_error).toBe(true);
    expect(answer.content).toContain("The tools are: read_file, write_file");
    expect(t.cards()[0].status).toBe("failed");
  });

  it("a task of 10 tool calls completes with every request inside the window", async () => {
    const window = 4_096;
    const calls = Array.from({ length: 10 }, (_, i) => use("read_file", { path: `src/f${i}.ts` }));
    const work: Turn[] = [...calls.map((c) => callTools(c)), say("All ten read.")];
    const t = setup([], window);
    t.ipc.llmStream.mockImplementation(async (runId, request, onEvent) => {
      t.requests.push(structuredClone(request));
      const turn = isSummary(request) ? say("Summary: read f0 to f9, nothing changed.") : work.shift();
      if (!turn) throw new Error("no more turns");
      await turn(onEvent, { runId, cancelled: new Promise(() => undefined) });
      return null;
    });
    t.ipc.callTool.mockImplementation(async (_name, input) => ({ path: input.path, content: "export const x = 1;\n".repeat(60) }));
    await t.loop.send("read the ten files");
    expect(t.loop.state.get().error).toBeNull();
    expect(t.loop.state.get().items.at(-1)).toMatchObject({ kind: "assistant", text: "All ten read." });
    for (const request of t.requests) {
      expect(estimated(request) + (request.max_tokens ?? 0)).toBeLessThanOrEqual(window);
      assertConsistent(request.messages);
    }
  });
});

describe("input too large for what is left", () => {
  it.each([2_048, 4_096, 8_192])("a fresh 43 KB read_file result is cut before it is sent (%i window)", async (window) => {
    const read = use("read_file", { path: "big.txt" });
    const t = setup([callTools(read), say("Read the start and the end.")], window);
    const big = Array.from({ length: 900 }, (_, i) => `line ${i}: ${"the quick brown fox ".repeat(2)}`).join("\n");
    expect(big.length).toBeGreaterThan(43_000);
    t.ipc.callTool.mockResolvedValue({ path: "big.txt", content: big, truncated: false });
    await t.loop.send("read big.txt");
    expect(t.loop.state.get().error).toBeNull();
    const after = t.requests[1];
    const result = after.messages.at(-1)!.content[0] as ToolResultBlock;
    expect(result.content).toContain(CUT_NOTE);
    expect(result.content).toContain("start_line");
    expect(result.content).toContain("line 0:");
    expect(result.content).toContain("line 899:");
    expect(estimated(after)).toBeLessThanOrEqual(window * 0.8);
    expect(t.requests.filter(isSummary)).toHaveLength(0);
  });

  it.each([2_048, 4_096, 8_192])("a 12k-character paste becomes an attachment read in parts (%i window)", async (window) => {
    const paste = Array.from({ length: 400 }, (_, i) => `row ${String(i).padStart(3, "0")}: a line of pasted log\n`).join("");
    expect(paste.length).toBe(12_000);
    const readTwo = use("read_paste", { paste: 1, part: 2 });
    const t = setup([], window);
    const work: Turn[] = [callTools(readTwo), say("Read two parts.")];
    t.ipc.llmStream.mockImplementation(async (runId, request, onEvent) => {
      t.requests.push(structuredClone(request));
      const turn = isSummary(request) ? say("Summary: the user pasted a log; part 2 was read.") : work.shift();
      if (!turn) throw new Error("no more turns");
      await turn(onEvent, { runId, cancelled: new Promise(() => undefined) });
      return null;
    });
    await t.loop.send(paste);
    expect(t.loop.state.get().error?.message ?? null).toBeNull();
    const [first, second] = t.requests.filter((r) => !isSummary(r));
    const sent = JSON.stringify(first.messages[0]);
    expect(sent).toContain("12,000 characters");
    expect(sent).toContain("row 000");
    expect(sent).not.toContain("row 399");
    expect(first.tools.some((tool) => tool.name === "read_paste")).toBe(true);
    expect(estimated(first)).toBeLessThanOrEqual(window * 0.8);
    const part = second.messages.at(-1)!.content[0] as ToolResultBlock;
    expect(part.content).toMatch(/^\[Attachment 1, part 2 of \d+\]/);
    expect(t.loop.state.get().items.at(-1)).toMatchObject({ kind: "assistant", text: "Read two parts." });
    expect(part.is_error).toBeUndefined();
    expect(estimated(second) + (second.max_tokens ?? 0)).toBeLessThanOrEqual(window);
    // Nothing reached Rust for it, and the window shows the whole message.
    expect(t.ipc.checkCall).not.toHaveBeenCalled();
    expect(t.loop.state.get().items[0]).toMatchObject({ kind: "user", text: paste });
  });

  it("a prefix the window cannot hold is said once, before anything is sent", async () => {
    const t = setup([say("never")], 384);
    await t.loop.send("hello");
    expect(t.requests).toHaveLength(0);
    const error = t.loop.state.get().error!;
    expect(error.code).toBe("llm_context_overflow");
    expect(error.message).toContain("384 tokens");
    expect(error.hint).toContain("llama-server -c");
    expect(error.hint).toContain("num_ctx");
  });
});

describe("Stop and the meter", () => {
  it("after Stop the meter shows the estimate and the next message compacts nothing", async () => {
    const streaming: Turn = async (emit, { cancelled }) => {
      emit({ type: "text_delta", text: "Let me look" });
      await cancelled;
    };
    const t = setup([streaming, say("Here.")], 4_096);
    const sent = t.loop.send("look at the project");
    await vi.waitFor(() => expect(t.requests).toHaveLength(1));
    t.loop.stop();
    await sent;
    const meter = t.loop.state.get().context!;
    expect(meter.used).toBeGreaterThan(700);
    expect(meter.used).toBeLessThan(1_200);
    await t.loop.send("go on");
    expect(t.requests.filter(isSummary)).toHaveLength(0);
    expect(t.notices().filter((n) => n.startsWith("Compacted"))).toHaveLength(0);
    expect(t.loop.state.get().context!.used).toBeLessThan(1_200);
  });
});

describe("Settings taking effect", () => {
  it("the meter follows a new model's window at once, nothing sent", async () => {
    const t = setup([say("Hi.")], 32_768);
    await t.loop.send("hello");
    expect(t.loop.state.get().context!.window).toBe(32_768);
    t.ipc.modelInfo.mockResolvedValue({ context_window: 4_096, source: "server" });
    await t.loop.refreshModel();
    const meter = t.loop.state.get().context!;
    expect(meter).toMatchObject({ window: 4_096, known: true });
    // The next request's size against the new window: the short prefix.
    expect(meter.used).toBeLessThan(1_400);
    expect(t.requests).toHaveLength(1);
  });

  it("a model whose template indents the tools is estimated so, and a switch away forgets it", async () => {
    const t = setup([say("Hi.")], 4_096);
    await t.loop.send("hello");
    const compact = t.loop.state.get().context!.used;
    t.ipc.modelInfo.mockResolvedValue({ context_window: 4_096, source: "server", indents_tools: true });
    await t.loop.refreshModel();
    const indented = t.loop.state.get().context!.used;
    // Five tools of about thirty lines each: some 150 tokens more than the compact estimate.
    expect(indented - compact).toBeGreaterThan(100);
    t.ipc.modelInfo.mockResolvedValue({ context_window: 4_096, source: "server" });
    await t.loop.refreshModel();
    expect(t.loop.state.get().context!.used).toBeLessThan(indented - 100);
  });
});

describe("while the server reads the prompt", () => {
  it("the state says since when the request waits and how far the server has read, until the first token", async () => {
    const gate = deferredTurn();
    const t = setup([gate.turn], 4_096);
    const sent = t.loop.send("hi");
    await vi.waitFor(() => expect(t.loop.state.get().waiting).not.toBeNull());
    expect(t.loop.state.get().waiting).toEqual({ since: expect.any(Number) });
    gate.emit({ type: "prompt_progress", processed: 512, total: 1_100 });
    expect(t.loop.state.get().waiting).toMatchObject({ processed: 512, total: 1_100 });
    gate.emit({ type: "text_delta", text: "Hello" });
    expect(t.loop.state.get().waiting).toBeNull();
    gate.finish();
    await sent;
    expect(t.loop.state.get().waiting).toBeNull();
  });
});

/** A turn the test drives event by event. */
function deferredTurn() {
  let emitter: ((event: LlmEvent) => void) | null = null;
  let end: () => void = () => undefined;
  const turn: Turn = (emit) =>
    new Promise<void>((resolve) => {
      emitter = emit;
      end = () => {
        emit({ type: "done", stop_reason: "end_turn" });
        resolve();
      };
    });
  return { turn, emit: (event: LlmEvent) => emitter?.(event), finish: () => end() };
}

describe("compaction's notice and its end", () => {
  it("never summarizes a single message, nor a summary alone again", async () => {
    const t = setup([say("Hello."), say("Fine."), say("Summary: the user said hi.")], 32_768);
    await t.loop.send("hi");
    await t.loop.compact();
    expect(t.requests).toHaveLength(1);
    expect(t.notices()).toContain(NOTHING_TO_COMPACT);
    await t.loop.send("how are you");
    await t.loop.compact();
    expect(t.notices().filter((n) => n.startsWith("Compacted"))).toEqual(["Compacted: 2 earlier messages were summarized for the model (they stay shown above)."]);
    await t.loop.compact();
    await t.loop.compact();
    expect(t.requests).toHaveLength(3);
    expect(t.notices().filter((n) => n.startsWith("Compacted"))).toHaveLength(1);
  });
});

describe("an overflow compacting cannot help", () => {
  it("is said at once when the server's window cannot hold the fixed prompt: no summary, no 'compacting' notice", async () => {
    const overflow: Turn = (emit) =>
      emit({
        type: "error",
        error: { code: "llm_context_overflow", message: "request (3900 tokens) exceeds the available context size (384 tokens)", hint: "", retryable: false, details: { prompt_tokens: 3_900, context_window: 384 } },
      });
    const t = setup([overflow, say("never")], 32_768);
    t.ipc.modelInfo.mockResolvedValue({});
    await t.loop.send("hello");
    expect(t.requests).toHaveLength(1);
    const error = t.loop.state.get().error!;
    expect(error.message).toContain("384 tokens");
    expect(error.hint).toContain("llama-server -c");
    expect(t.notices().some((n) => n.includes("compacting it"))).toBe(false);
  });
});

describe("compaction in a 2k window", () => {
  it("asks one summary at most per message of the user, and between summaries each request starts with the one before", async () => {
    const t = setup([], 2_048);
    let current = 0;
    const plan: Record<number, Turn> = {
      1: callTools(use("read_file", { path: "n1.txt" })),
      2: callTools(use("read_paste", { paste: 1, part: 2 })),
      4: callTools(use("read_file", { path: "big.txt" })),
      6: callTools(use("read_file", { path: "n6.txt" })),
      8: callTools(use("read_file", { path: "n8.txt" })),
    };
    t.ipc.callTool.mockImplementation(async (_name, input) => ({ path: input.path, content: input.path === "big.txt" ? "line of big.txt\n".repeat(3_000) : "a line of the note. ".repeat(40) }));
    t.ipc.llmStream.mockImplementation(async (runId, request, onEvent) => {
      t.requests.push(structuredClone(request));
      const last = request.messages.at(-1)!;
      const answered = last.content.some((b) => b.type === "tool_result");
      const turn = isSummary(request) ? say("Summary: questions asked and answered.") : answered ? say(`Answer ${current}: ${"the work goes on. ".repeat(10)}`) : (plan[current] ?? say(`Answer ${current}: ${"the work goes on. ".repeat(10)}`));
      await turn(onEvent, { runId, cancelled: new Promise(() => undefined) });
      return null;
    });
    const perMessage: number[] = [];
    for (current = 0; current < 10; current++) {
      const before = t.requests.length;
      await t.loop.send(current === 2 ? "row of a pasted log\n".repeat(450) : `Question ${current}: ${"please keep going with the task. ".repeat(6)}`);
      expect(t.loop.state.get().error).toBeNull();
      perMessage.push(t.requests.slice(before).filter(isSummary).length);
    }
    expect(perMessage.some((n) => n > 0)).toBe(true);
    expect(perMessage.every((n) => n <= 1)).toBe(true);
    let compared = 0;
    for (let i = 1; i < t.requests.length; i++) {
      const [a, b] = [t.requests[i - 1], t.requests[i]];
      if (isSummary(a) || isSummary(b)) continue;
      expect(b.system).toBe(a.system);
      expect(JSON.stringify(b.messages.slice(0, a.messages.length))).toBe(JSON.stringify(a.messages));
      compared++;
    }
    expect(compared).toBeGreaterThan(8);
  });
});
