// A long conversation opens with its last entries only and the rest is
// fetched behind, in parts: what was shown stays, the earlier items come
// in above it, and nothing is sent (and no meter shown) until the whole
// transcript, compaction summaries included, is in.
import { describe, expect, it, vi } from "vitest";
import { callTools, deferred, fakeIpc, say, type Turn, use } from "../../test/fakeIpc";
import type { OpenPart } from "../ipc";
import type { ConversationData, LlmRequest, NewEntry, StoredEntry } from "../types";
import { fromEntries } from "./conversation";
import { NO_INSTRUCTIONS } from "./instructions";
import { AgentLoop } from "./loop";
import { appendUserText } from "./transcript";

const isSummaryRequest = (r: LlmRequest) => r.tools.length === 0 && r.system.includes("compact");

/** A loop whose model plays `turns` (and answers a summary request); its ids start with `prefix`. */
function setup(turns: Turn[], prefix = "") {
  const fake = fakeIpc([]);
  fake.ipc.modelInfo.mockResolvedValue({ context_window: 131_072, source: "server" });
  const script = [...turns];
  fake.ipc.llmStream.mockImplementation(async (runId, request, onEvent) => {
    fake.requests.push(structuredClone(request));
    const turn = isSummaryRequest(request) ? say("The user had four files read.") : script.shift();
    if (!turn) throw new Error("the test scripted no more turns");
    await turn(onEvent, { runId, cancelled: new Promise(() => undefined) });
    return null;
  });
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: () => prefix + fake.newId(), scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  /** The entries the history stored, as it gives them back. */
  const stored = (): StoredEntry[] =>
    fake.ipc.appendEntry.mock.calls.map(([, entry], seq) => {
      const json = JSON.parse(JSON.stringify(entry)) as NewEntry;
      return { seq, message: json.message ?? null, items: json.items };
    });
  return { ...fake, loop, stored };
}

/** What Rust answers `open_conversation` for `part` of `entries` (results are not left out here). */
function answer(entries: StoredEntry[], part: OpenPart = {}): ConversationData {
  const before = entries.filter((entry) => part.beforeSeq === undefined || entry.seq < part.beforeSeq);
  const chosen = part.last === undefined ? before : before.slice(Math.max(0, before.length - part.last));
  const summary = { id: "c1", project: "/p/app", title: "t", first_line: "t", created_ms: 0, updated_ms: 0, model: "m", input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 0, entries: entries.length };
  return { summary, entries: chosen };
}

/** Reads of `count` files, then "done". */
function reads(count: number): Turn[] {
  return [...Array.from({ length: count }, (_, i) => callTools(use("read_file", { path: `f${i}.txt` }))), say("done")];
}

describe("a conversation opened in part", () => {
  it("shows its last entries, then takes in the rest before the next request, which goes on from its summary", async () => {
    const first = setup([...reads(4), say("One more thing done."), say("And another.")]);
    await first.loop.send("read four files");
    await first.loop.compact();
    await first.loop.send("one more thing");
    await first.loop.send("and another");
    const entries = first.stored();
    const whole = fromEntries(entries);
    // The compaction notice is not in the last two entries.
    const noticeAt = entries.findIndex((entry) => JSON.stringify(entry.items).includes('"compacted"'));
    expect(noticeAt).toBeLessThan(entries.length - 2);

    const t = setup([say("Nothing else.")], "second-");
    const held = deferred<void>();
    t.ipc.openConversation.mockImplementation(async (_id, part) => {
      await held.promise;
      return answer(entries, part);
    });
    t.loop.load(answer(entries, { last: 2 }));
    const ids = () => t.loop.state.get().items.map((item) => item.id);
    const lastTwo = fromEntries(entries.slice(-2)).items.map((item) => item.id);
    expect(ids()).toEqual(lastTwo);
    // No size until the whole transcript is known.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(t.loop.state.get().context).toBeNull();

    const sent = t.loop.send("and now?");
    await vi.waitFor(() => expect(t.ipc.openConversation).toHaveBeenCalled());
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(t.requests).toHaveLength(0);
    held.resolve();
    await sent;
    // The request is the one the first loop would have sent: from its summary, no second summary.
    expect(t.requests.filter(isSummaryRequest)).toHaveLength(0);
    expect(t.requests[0].messages).toEqual(appendUserText(first.loop.transcript, "and now?"));
    // Every item in its order, the new ones after them.
    expect(ids().slice(0, whole.items.length)).toEqual(whole.items.map((item) => item.id));
    // Only the new message and its reply were appended; the earlier items were taken as stored.
    expect(t.ipc.appendEntry.mock.calls.map(([, entry]) => entry.message?.role)).toEqual(["user", "assistant"]);
    expect(t.ipc.appendEntry.mock.calls.flatMap(([, entry]) => entry.items as { text?: string }[]).map((item) => item.text)).toEqual(["and now?", "Nothing else."]);
    // A fork from the first message, which came with the rest, cuts where it was stored.
    expect(t.loop.forkPoint(whole.items[0].id, "edit")).toBe(0);
  });

  it("gives a message back to the box when the rest cannot be had, and sends nothing", async () => {
    const first = setup([...reads(2)]);
    await first.loop.send("read two files");
    const entries = first.stored();
    const t = setup([say("Nothing else.")], "second-");
    t.ipc.openConversation.mockRejectedValue({ code: "io_error", message: "the history could not be read", hint: "", retryable: true, details: {} });
    t.loop.load(answer(entries, { last: 2 }));
    const png = { type: "image" as const, media_type: "image/png", data: "iVBORw0KGgo=" };
    await t.loop.send("and now?", [png]);
    const state = t.loop.state.get();
    expect(state.error).toMatchObject({ code: "io_error" });
    expect(state.returned).toEqual({ text: "and now?", images: [png] });
    expect(t.requests).toHaveLength(0);
    expect(t.ipc.appendEntry).not.toHaveBeenCalled();
  });

  it("fetches the rest in parts of 500 entries, newest first, keeps what was shown, and then shows the size", async () => {
    const entries: StoredEntry[] = Array.from({ length: 1_203 }, (_, seq) => {
      const role = seq % 2 === 0 ? "user" : "assistant";
      const text = `message ${seq}`;
      const item = role === "user" ? { kind: "user", id: `i${seq}`, text } : { kind: "assistant", id: `i${seq}`, text, streaming: false };
      return { seq, message: { role, content: [{ type: "text", text }] }, items: [item] };
    });
    const t = setup([]);
    t.ipc.openConversation.mockImplementation(async (_id, part) => answer(entries, part));
    vi.useFakeTimers();
    try {
      t.loop.load(answer(entries, { last: 60 }));
      const shown = t.loop.state.get().items;
      expect(shown.map((item) => item.id)).toEqual(entries.slice(-60).map((entry) => `i${entry.seq}`));
      await vi.advanceTimersByTimeAsync(1500);
      await t.loop.loaded();
      expect(t.ipc.openConversation.mock.calls.map(([, part]) => part)).toEqual([{ last: 500 }, { beforeSeq: 703, last: 500 }, { beforeSeq: 203, last: 500 }]);
      const items = t.loop.state.get().items;
      expect(items.map((item) => item.id)).toEqual(entries.map((entry) => `i${entry.seq}`));
      // The rows shown are the same objects (not rendered again).
      expect(items.slice(-60)).toEqual(shown);
      expect(items.at(-1)).toBe(shown.at(-1));
      expect(t.loop.transcript).toHaveLength(1_203);
      await vi.waitFor(() => expect(t.loop.state.get().context).not.toBeNull());
    } finally {
      vi.useRealTimers();
    }
  });
});
