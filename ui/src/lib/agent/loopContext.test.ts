// The loop inside a small context window: compaction before a request that
// would not fit, compaction and one retry after the server says it did not
// fit, tool calls of a cut-off reply never run, the turn budget pauses.
import { NO_INSTRUCTIONS } from "./instructions";
import { describe, expect, it, vi } from "vitest";
import { assertConsistent, callTools, fakeIpc, say, use, type Turn } from "../../test/fakeIpc";
import type { LlmRequest, ToolResultBlock, WireError } from "../types";
import { SUMMARY_HEADER } from "./context";
import { folderInstructions, readInstructions } from "./instructions";
import { AgentLoop, CUT_OFF_TEXT } from "./loop";
import type { ToolItem } from "./state";

function setup(turns: Turn[], window?: number, maxTurns?: number) {
  const fake = fakeIpc(turns);
  fake.ipc.modelInfo.mockResolvedValue(window ? { context_window: window, source: "server" } : {});
  const loop = new AgentLoop(fake.ipc, {
    projectRoot: "/p/app",
    newId: fake.newId,
    maxTurns,
    scheduleFrame: (run) => run(),
    instructions: NO_INSTRUCTIONS,
  });
  const cards = () => loop.state.get().items.filter((i): i is ToolItem => i.kind === "tool");
  const notices = () => loop.state.get().items.flatMap((i) => (i.kind === "notice" ? [i.text] : []));
  return { ...fake, loop, cards, notices };
}

const isSummaryRequest = (r: LlmRequest) => r.tools.length === 0 && r.system.includes("compact");
const chars = (r: LlmRequest) => r.system.length + JSON.stringify(r.messages).length + JSON.stringify(r.tools).length;

describe("AgentLoop in a small context window", () => {
  it("compacts before a request would pass 80% of the window, and every request fits", async () => {
    const window = 2_000;
    const calls = Array.from({ length: 12 }, (_, i) => use("read_file", { path: `f${i}.txt` }));
    const turns: Turn[] = [];
    for (const c of calls) turns.push(callTools(c));
    turns.push(say("done"));
    // Summaries may be asked at any point: each llm_stream without tools gets one.
    const fake = setup([], window);
    const script = [...turns];
    fake.ipc.llmStream.mockImplementation(async (_runId, request, onEvent) => {
      fake.requests.push(structuredClone(request));
      const turn = isSummaryRequest(request) ? say("Read f0..fN; nothing changed.") : script.shift();
      if (!turn) throw new Error("no more turns");
      await turn(onEvent, { runId: _runId, cancelled: new Promise(() => undefined) });
      return null;
    });
    fake.ipc.callTool.mockImplementation(async (_name, input) => ({ path: input.path, content: "x".repeat(900) }));
    await fake.loop.send("read every file");
    const work = fake.requests.filter((r) => !isSummaryRequest(r));
    const summaries = fake.requests.filter(isSummaryRequest);
    expect(work).toHaveLength(13);
    expect(summaries.length).toBeGreaterThanOrEqual(1);
    // The summary is used in the next request, as the first user message.
    const after = work.find((r) => JSON.stringify(r.messages[0]).includes(SUMMARY_HEADER));
    expect(after).toBeDefined();
    for (const request of work) {
      expect(chars(request) / 4).toBeLessThan(window);
      assertConsistent(request.messages);
    }
    expect(fake.notices().some((n) => n.startsWith("Compacted:"))).toBe(true);
    const meter = fake.loop.state.get().context;
    expect(meter).toMatchObject({ window, known: true });
    expect(meter!.used).toBeGreaterThan(0);
  });

  it("after the server's context error, compacts and sends again once by itself", async () => {
    const overflow: WireError = {
      code: "llm_context_overflow",
      message: "The server at `127.0.0.1:8080` cannot fit the request in the model's context window (HTTP 400)",
      hint: "",
      retryable: false,
      details: { prompt_tokens: 6872, context_window: 4096 },
    };
    const fail: Turn = (emit) => emit({ type: "error", error: overflow });
    const a = use("read_file", { path: "a" });
    const b = use("read_file", { path: "b" });
    // 131k-token window claimed, so nothing compacts until the server objects.
    const t = setup([callTools(a), callTools(b), fail, say("Summary: read a and b."), say("All done.")], 131_072);
    await t.loop.send("go");
    expect(t.requests).toHaveLength(5);
    expect(isSummaryRequest(t.requests[3])).toBe(true);
    expect(JSON.stringify(t.requests[4].messages[0])).toContain("Summary: read a and b.");
    assertConsistent(t.requests[4].messages);
    expect(t.loop.state.get().error).toBeNull();
    expect(t.notices()[0]).toContain("6,872 of 4,096 tokens");
    expect(t.loop.state.get().items.at(-1)).toMatchObject({ kind: "assistant", text: "All done." });
  });

  it("shows a second overflow instead of looping", async () => {
    const overflow: WireError = { code: "llm_context_overflow", message: "too long", hint: "", retryable: false, details: {} };
    const fail: Turn = (emit) => emit({ type: "error", error: overflow });
    const t = setup([fail, fail], 4_096);
    await t.loop.send("hi");
    expect(t.loop.state.get().error).toEqual(overflow);
    expect(t.requests).toHaveLength(2);
  });
});

describe("AgentLoop with a reply cut off at its token limit", () => {
  it("runs none of its tool calls and tells the model", async () => {
    const del = use("delete_file", { path: "src/main.rs" });
    const write = use("write_file", { path: "x", content: "y" });
    const cut: Turn = (emit) => {
      for (const u of [del, write]) {
        emit({ type: "tool_call_start", id: u.id, name: u.name });
        emit({ type: "tool_call_end", id: u.id, name: u.name, input: u.input });
      }
      emit({ type: "done", stop_reason: "max_tokens" });
    };
    const t = setup([cut]);
    await t.loop.send("clean up");
    expect(t.ipc.checkCall).not.toHaveBeenCalled();
    expect(t.ipc.callTool).not.toHaveBeenCalled();
    const results = t.loop.transcript.flatMap((m) => m.content.filter((b): b is ToolResultBlock => b.type === "tool_result"));
    expect(results.map((r) => r.content)).toEqual([CUT_OFF_TEXT, CUT_OFF_TEXT]);
    expect(t.cards().map((c) => c.status)).toEqual(["cancelled", "cancelled"]);
    expect(t.notices().at(-1)).toContain("2 tool calls were not run");
    assertConsistent(t.loop.transcript);
  });
});

describe("AgentLoop turn budget", () => {
  it("pauses at the budget and Continue goes on", async () => {
    const calls = [use("read_file", { path: "a" }), use("read_file", { path: "b" })];
    const t = setup([callTools(calls[0]), callTools(calls[1]), say("done")], undefined, 1);
    await t.loop.send("go");
    expect(t.loop.state.get().turnLimitReached).toBe(true);
    expect(t.requests).toHaveLength(1);
    await t.loop.continue();
    expect(t.requests).toHaveLength(2);
    await t.loop.continue();
    expect(t.loop.state.get().items.at(-1)).toMatchObject({ text: "done" });
    expect(t.loop.state.get().turnLimitReached).toBe(false);
  });
});

describe("empty replies and tool-less templates", () => {
  it("says when the model sent nothing", async () => {
    const t = setup([(emit) => emit({ type: "done", stop_reason: "end_turn" })]);
    await t.loop.send("hi");
    expect(t.notices()).toContain("The model sent an empty reply.");
  });

  it("says when the server's template cannot call tools", async () => {
    const t = setup([say("hi")]);
    t.ipc.modelInfo.mockResolvedValue({ context_window: 4096, source: "server", supports_tools: false });
    await t.loop.send("hi");
    expect(t.notices()[0]).toContain("cannot call tools");
  });
});

describe("project instructions", () => {
  it("reads the first instruction file through read_file and puts it in the system prompt", async () => {
    const fake = fakeIpc([say("ok")]);
    fake.ipc.callTool.mockImplementation(async (name, input) => {
      if (name === "read_file" && input.path === "CLAUDE.md") return { path: "CLAUDE.md", content: "Use tabs.\n", truncated: false };
      throw { code: "not_found", message: "no", hint: "", retryable: false, details: {} };
    });
    const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run() });
    await loop.send("hi");
    expect(fake.ipc.callTool.mock.calls.map((c) => c[1].path)).toEqual(["AGENTS.md", "CLAUDE.md"]);
    expect(fake.requests[0].system).toContain("Use tabs.");
    expect(fake.requests[0].system).toContain("from CLAUDE.md");
    const notice = loop.state.get().items.find((i) => i.kind === "notice");
    // The notice opens to show the text the model was given.
    expect(notice).toMatchObject({ text: "Instructions: CLAUDE.md (10 B)", detail: "Use tabs.\n" });
  });

  it("is cut at 32 KiB, and a file the tools refuse (a link out) is not read", async () => {
    const big = "x".repeat(40 * 1024);
    const ipc = {
      callTool: async (_name: string, input: Record<string, unknown>) => {
        if (input.path === "AGENTS.md") throw { code: "path_outside_root", message: "leads outside", hint: "", retryable: false, details: {} };
        if (input.path === "CLAUDE.md") return { path: "CLAUDE.md", content: big, truncated: false };
        throw { code: "not_found" };
      },
    };
    const found = await readInstructions(ipc as never);
    expect(found?.path).toBe("CLAUDE.md");
    expect(found?.text.length).toBe(32 * 1024);
    expect(found?.notice).toContain("cut to the first 32 KiB");
  });
});

describe("cost", () => {
  it("is the conversation's tokens at the hosted model's list price", async () => {
    const t = setup([
      (emit) => {
        emit({ type: "text_delta", text: "hi" });
        emit({ type: "usage", input_tokens: 200_000, output_tokens: 10_000 });
        emit({ type: "done", stop_reason: "end_turn" });
      },
    ]);
    t.ipc.modelInfo.mockResolvedValue({ context_window: 200_000, source: "known_model", price: { input: 3, output: 15 } });
    await t.loop.send("hi");
    const state = t.loop.state.get();
    expect(state.price).toEqual({ input: 3, output: 15 });
    expect(state.usage.cost_usd).toBeCloseTo(0.75);
  });
});

describe("a subfolder's AGENTS.md", () => {
  it("is read once when the model reads a file there, and sent with that result", async () => {
    const read = use("read_file", { path: "pkg/api/handler.go" });
    const again = use("read_file", { path: "pkg/api/other.go" });
    const fake = fakeIpc([callTools(read), callTools(again), say("ok")]);
    fake.ipc.callTool.mockImplementation(async (_name, input) => {
      if (input.path === "pkg/AGENTS.md") return { path: "pkg/AGENTS.md", content: "Run go vet before tests.\n", truncated: false };
      if (String(input.path).endsWith("AGENTS.md") || String(input.path).includes(".md") || input.path === ".rules" || input.path === ".cursorrules")
        throw { code: "not_found", message: "no", hint: "", retryable: false, details: {} };
      return { path: input.path, content: "package api\n", truncated: false };
    });
    const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run() });
    await loop.send("look at the handler");
    const lookups = fake.ipc.callTool.mock.calls.map((c) => String(c[1].path)).filter((p) => p.includes("/AGENTS.md"));
    expect(lookups).toEqual(["pkg/AGENTS.md", "pkg/api/AGENTS.md"]);
    const second = JSON.stringify(fake.requests[1].messages.at(-1));
    expect(second).toContain("Run go vet before tests.");
    expect(second).toContain("Instructions from pkg/AGENTS.md");
    expect(JSON.stringify(fake.requests[2].messages.at(-1))).not.toContain("Run go vet");
    assertConsistent(fake.requests[2].messages);
    const notices = loop.state.get().items.flatMap((i) => (i.kind === "notice" ? [i.text] : []));
    expect(notices).toContain("Instructions: pkg/AGENTS.md (25 B)");
  });

  it("is never looked for above the root or through an absolute path", async () => {
    const seen = new Set<string>();
    const ipc = { callTool: vi.fn(async () => ({ content: "x" })) };
    expect(await folderInstructions(ipc as never, "../other/AGENTS.md", seen)).toEqual([]);
    expect(await folderInstructions(ipc as never, "/etc/passwd", seen)).toEqual([]);
    expect(ipc.callTool).not.toHaveBeenCalled();
  });
});
