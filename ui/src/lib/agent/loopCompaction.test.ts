// What compaction keeps: the project's instructions (the root's in the
// system prompt, the folders' beside the summary), the full original in
// the history, and the Compact button's one summary used by the next request.
import { describe, expect, it, vi } from "vitest";
import { assertConsistent, callTools, fakeIpc, say, type Turn, use } from "../../test/fakeIpc";
import type { LlmRequest, Message, NewEntry, StoredEntry } from "../types";
import { SUMMARY_HEADER, TokenEstimate } from "./context";
import { type InstructionSource, NO_INSTRUCTIONS } from "./instructions";
import { AgentLoop } from "./loop";
import type { NoticeItem } from "./state";
import { appendUserText } from "./transcript";

const isSummaryRequest = (r: LlmRequest) => r.tools.length === 0 && r.system.includes("compact");

/** A loop whose model plays `turns` for work and answers every summary request with `summary`. */
function setup(turns: Turn[], window: number, instructions: InstructionSource = NO_INSTRUCTIONS, summary = "Read files; nothing changed.") {
  const fake = fakeIpc([]);
  fake.ipc.modelInfo.mockResolvedValue({ context_window: window, source: "server" });
  const script = [...turns];
  fake.ipc.llmStream.mockImplementation(async (runId, request, onEvent) => {
    fake.requests.push(structuredClone(request));
    const turn = isSummaryRequest(request) ? say(summary) : script.shift();
    if (!turn) throw new Error("the test scripted no more turns");
    await turn(onEvent, { runId, cancelled: new Promise(() => undefined) });
    return null;
  });
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions });
  const work = () => fake.requests.filter((r) => !isSummaryRequest(r));
  const summaries = () => fake.requests.filter(isSummaryRequest);
  return { ...fake, loop, work, summaries };
}

/** Reads of `count` files of 900 characters each, then "done". */
function reads(count: number, first?: string): Turn[] {
  const paths = Array.from({ length: count }, (_, i) => (i === 0 && first ? first : `f${i}.txt`));
  return [...paths.map((path) => callTools(use("read_file", { path }))), say("done")];
}

const ROOT: InstructionSource = {
  root: async () => ({ path: "AGENTS.md", text: "Use tabs, never spaces.", bytes: 23, cut: false, notice: "Instructions: AGENTS.md (23 B)" }),
  folder: async () => [],
};

describe("compaction keeps the project's instructions", () => {
  it("carries a folder's AGENTS.md, read once, word for word past every compaction", async () => {
    const lookedFor: string[] = [];
    const folders: InstructionSource = {
      root: async () => null,
      folder: async (_ipc, path, seen) => {
        if (!path.startsWith("pkg/") || seen.has("pkg")) return [];
        seen.add("pkg");
        lookedFor.push("pkg/AGENTS.md");
        return [{ path: "pkg/AGENTS.md", text: "Run go vet before tests.", bytes: 24, cut: false, notice: "Instructions: pkg/AGENTS.md (24 B)" }];
      },
    };
    const t = setup(reads(16, "pkg/main.go"), 2_000, folders);
    t.ipc.callTool.mockImplementation(async (_name, input) => ({ path: input.path, content: "x".repeat(900) }));
    await t.loop.send("read every file");
    expect(t.work()).toHaveLength(17);
    // Compacted more than once: the second summary took in the first, and the block still went on.
    expect(t.summaries().length).toBeGreaterThanOrEqual(2);
    expect(lookedFor).toEqual(["pkg/AGENTS.md"]);
    for (const request of t.work().slice(1)) {
      const sent = JSON.stringify(request.messages);
      expect(sent).toContain("Instructions from pkg/AGENTS.md");
      expect(sent).toContain("Run go vet before tests.");
      // Once, not once per compaction.
      expect(sent.split("Run go vet before tests.")).toHaveLength(2);
      assertConsistent(request.messages);
    }
  });

  it("keeps the root's instructions in the system prompt of the requests after a compaction", async () => {
    const t = setup(reads(12), 2_000, ROOT);
    t.ipc.callTool.mockImplementation(async (_name, input) => ({ path: input.path, content: "x".repeat(900) }));
    await t.loop.send("read every file");
    const after = t.work().filter((r) => JSON.stringify(r.messages[0]).includes(SUMMARY_HEADER));
    expect(after.length).toBeGreaterThan(0);
    for (const request of after) expect(request.system).toContain("Use tabs, never spaces.");
  });
});

describe("compaction and the history", () => {
  it("stores the original messages, never the summary in their place", async () => {
    const t = setup(reads(12), 2_000);
    t.ipc.callTool.mockImplementation(async (_name, input) => ({ path: input.path, content: `${String(input.path)}:${"x".repeat(900)}` }));
    await t.loop.send("read every file");
    expect(t.summaries().length).toBeGreaterThanOrEqual(1);
    const stored = t.ipc.appendEntry.mock.calls.flatMap(([, entry]: [unknown, NewEntry]) => (entry.message ? [entry.message as Message] : []));
    const text = JSON.stringify(stored);
    expect(text).not.toContain(SUMMARY_HEADER);
    // Every result whole, the first ones (summarized for the model) too.
    for (let i = 0; i < 12; i++) expect(text).toContain(`f${i}.txt:${"x".repeat(900)}`);
    expect(stored[0]).toEqual({ role: "user", content: [{ type: "text", text: "read every file" }] });
    expect(stored).toHaveLength(1 + 12 * 2 + 1);
  });
});

describe("the project's PreCompact hooks", () => {
  it("run before every summary, automatic or asked for, and say which", async () => {
    const t = setup([...reads(12), say("sure")], 2_000);
    t.ipc.callTool.mockImplementation(async (_name, input) => ({ path: input.path, content: "x".repeat(900) }));
    const runHooks = vi.fn(async (_request: { trigger?: string }) => ({ verdict: "none", context: [], notices: [], ran: ["save-notes.sh"] }));
    Object.assign(t.ipc, { hookStatus: vi.fn(async () => ({ events: ["PreCompact"], untrusted: [], problems: [] })), runHooks });
    await t.loop.send("read every file");
    const raised = () => runHooks.mock.calls.map(([request]) => request.trigger);
    expect(t.summaries().length).toBeGreaterThan(0);
    expect(raised()).toEqual(t.summaries().map(() => "auto"));
    await t.loop.send("more");
    await t.loop.compact();
    expect(raised().at(-1)).toBe("manual");
    expect(raised()).toHaveLength(t.summaries().length);
  });
});

describe("the Compact button", () => {
  it("leaves the meter at the size of the next request, summary and all", async () => {
    const t = setup([...reads(4), say("sure")], 131_072, NO_INSTRUCTIONS, "The user had four files read.");
    t.ipc.callTool.mockImplementation(async (_name, input) => ({ path: input.path, content: "x".repeat(3_000) }));
    await t.loop.send("read four files");
    const before = t.loop.state.get().context!.used;
    let shown: unknown = null;
    const seen = t.loop.state.subscribe((state) => (shown ??= state.compacting));
    await t.loop.compact();
    seen();
    expect(t.summaries()).toHaveLength(1);
    // While it was asked, the window said so; once in, it says nothing more.
    expect(shown).toMatchObject({ tokens: expect.any(Number) });
    expect(t.loop.state.get().compacting).toBeNull();
    const after = t.loop.state.get().context!.used;
    // Four results of 3,000 characters went into the summary.
    expect(after).toBeLessThan(before - 2_000);
    // The figure is the next request's, as it will be sent.
    await t.loop.send("and now?");
    const next = t.work().at(-1)!;
    const estimate = new TokenEstimate();
    expect(after).toBeGreaterThan(estimate.tokens({ ...next, messages: next.messages.slice(0, -1) }) * 0.5);
    expect(JSON.stringify(next.messages[0])).toContain(SUMMARY_HEADER);
  });

  it("is stopped by Stop while the summary is on its way: nothing compacted, the progress gone", async () => {
    const t = setup([...reads(4), say("sure")], 131_072);
    await t.loop.send("read four files");
    const work = t.ipc.llmStream.getMockImplementation()!;
    // The summary's server reads on and on, until the run is cancelled.
    t.ipc.llmStream.mockImplementation(async (runId, request, onEvent) => {
      if (!isSummaryRequest(request)) return work(runId, request, onEvent);
      onEvent({ type: "prompt_progress", processed: 100, total: 4_000 });
      return new Promise(() => undefined);
    });
    const compacting = t.loop.compact();
    await vi.waitFor(() => expect(t.loop.state.get().compacting).toMatchObject({ processed: 100, total: 4_000 }));
    t.loop.stop();
    await compacting;
    expect(t.ipc.cancel).toHaveBeenCalled();
    expect(t.loop.state.get()).toMatchObject({ busy: false, compacting: null });
    const notices = t.loop.state.get().items.flatMap((item) => (item.kind === "notice" ? [item.text] : []));
    expect(notices.some((n) => n.startsWith("Compacted"))).toBe(false);
    expect(notices.at(-1)).toBe("Stopped.");
  });

  it("asks for one summary, and the next request starts with it", async () => {
    // A big window: nothing compacts by itself.
    const t = setup([...reads(4), say("sure")], 131_072, NO_INSTRUCTIONS, "The user had four files read.");
    await t.loop.send("read four files");
    expect(t.summaries()).toHaveLength(0);
    await t.loop.compact();
    expect(t.summaries()).toHaveLength(1);
    expect(t.loop.state.get().busy).toBe(false);
    await t.loop.send("and now?");
    expect(t.summaries()).toHaveLength(1);
    const next = t.work().at(-1)!;
    const first = JSON.stringify(next.messages[0]);
    expect(first).toContain(SUMMARY_HEADER);
    expect(first).toContain("The user had four files read.");
    // Forced: the summary, then the last call, its result and the reply of the ten messages; then the new one.
    expect(next.messages).toHaveLength(5);
    expect(JSON.stringify(next.messages.at(-1))).toContain("and now?");
    assertConsistent(next.messages);
  });
});

describe("the reply's token limit", () => {
  const chars = (r: LlmRequest) => r.system.length + JSON.stringify(r.messages).length + JSON.stringify(r.tools).length;

  it("is what the window has left after the request", async () => {
    const window = 32_768;
    const t = setup(reads(3), window);
    await t.loop.send("read three files");
    expect(t.work()).toHaveLength(4);
    for (const request of t.work()) expect(request.max_tokens).toBe(window - Math.ceil(new TokenEstimate().tokens(request) * 1.1));
  });

  it("has a floor: when less is left, the older part is compacted first so request and reply fit", async () => {
    const window = 2_000;
    const t = setup(reads(4), window);
    // Results too big to trim (the last six messages never are), too few messages for the usual compaction.
    t.ipc.callTool.mockImplementation(async (_name, input) => ({ path: input.path, content: "y".repeat(2_400) }));
    await t.loop.send("read four files");
    expect(t.work()).toHaveLength(5);
    expect(t.summaries().length).toBeGreaterThanOrEqual(1);
    for (const request of [...t.work(), ...t.summaries()]) {
      expect(request.max_tokens).toBeGreaterThanOrEqual(250);
      expect(Math.ceil(chars(request) / 4) + request.max_tokens!).toBeLessThanOrEqual(window);
    }
  });
});

describe("a compacted conversation opened again", () => {
  /** The entries the history stored, as it gives them back. */
  const stored = (t: ReturnType<typeof setup>): StoredEntry[] =>
    t.ipc.appendEntry.mock.calls.map(([, entry], seq) => {
      const json = JSON.parse(JSON.stringify(entry)) as NewEntry;
      return { seq, message: json.message ?? null, items: json.items };
    });
  const opened = (entries: StoredEntry[]) => ({
    summary: { id: "c1", project: "/p/app", title: "t", first_line: "t", created_ms: 0, updated_ms: 0, model: "m", input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 0, entries: entries.length },
    entries,
  });

  it("goes on from its summary: the next request is the one it would have sent, with no second summary", async () => {
    const first = setup([...reads(4)], 131_072, NO_INSTRUCTIONS, "The user had four files read.");
    await first.loop.send("read four files");
    await first.loop.compact();
    const expected = appendUserText(first.loop.transcript, "and now?");

    const t = setup([say("Nothing else.")], 131_072);
    t.loop.load(opened(stored(first)));
    await t.loop.send("and now?");
    expect(t.summaries()).toHaveLength(0);
    expect(t.work()[0].messages).toEqual(expected);
  });

  it("goes on from the last of several summaries, the folders' instructions carried", async () => {
    const folders: InstructionSource = {
      root: async () => null,
      folder: async (_ipc, path, seen) => {
        if (!path.startsWith("pkg/") || seen.has("pkg")) return [];
        seen.add("pkg");
        return [{ path: "pkg/AGENTS.md", text: "Run go vet before tests.", bytes: 24, cut: false, notice: "Instructions: pkg/AGENTS.md (24 B)" }];
      },
    };
    let n = 0;
    const first = setup(reads(16, "pkg/main.go"), 2_000, folders);
    first.ipc.llmStream.mockImplementation(async (runId, request, onEvent) => {
      first.requests.push(structuredClone(request));
      const turn = isSummaryRequest(request) ? say(`Summary number ${++n}.`) : reads(16, "pkg/main.go")[first.work().length - 1];
      await turn(onEvent, { runId, cancelled: new Promise(() => undefined) });
      return null;
    });
    // Each result stays under a 2k window's share, so none is cut before a request (a cut is made on the live and the reopened transcript alike, before each request).
    first.ipc.callTool.mockImplementation(async (_name, input) => ({ path: input.path, content: "x".repeat(600) }));
    await first.loop.send("read every file");
    expect(n).toBeGreaterThanOrEqual(2);

    const t = setup([], 2_000);
    t.loop.load(opened(stored(first)));
    expect(t.loop.transcript).toEqual(first.loop.transcript);
    expect(JSON.stringify(t.loop.transcript[0])).toContain(`Summary number ${n}.`);
    expect(JSON.stringify(t.loop.transcript[0])).toContain("Run go vet before tests.");
    assertConsistent(t.loop.transcript);
  });

  it("is opened whole when its compaction no longer fits the stored messages", async () => {
    const first = setup([...reads(4)], 131_072);
    await first.loop.send("read four files");
    await first.loop.compact();
    const entries = stored(first).map((entry) => ({
      ...entry,
      items: entry.items.map((item) => ((item as NoticeItem).compacted ? { ...(item as NoticeItem), compacted: { summary: "x", covered: 99 } } : item)),
    }));
    const t = setup([], 131_072);
    t.loop.load(opened(entries));
    expect(JSON.stringify(t.loop.transcript)).not.toContain(SUMMARY_HEADER);
    expect(t.loop.transcript).toHaveLength(10);
  });
});
