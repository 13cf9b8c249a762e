// The task board: each task a loop of its own over its own IPC, at most
// `at_once` running, the others waiting in line and saying so; a state per
// task from its loop's; tasks an earlier run left are listed and go on.
import { describe, expect, it, vi } from "vitest";
import { deferred, fakeIpc, say, type Turn } from "../test/fakeIpc";
import type { Ipc } from "./ipc";
import { lastLine, nameFrom, TaskBoard, type TaskRow } from "./tasks";
import type { TaskEntry, TaskInfo } from "./types";

const info = (name: string): TaskInfo => ({
  name,
  branch: `corral/${name}`,
  path: `/data/worktrees/app/${name}`,
  changed: false,
  size: { files: 0, added: 0, removed: 0 },
});

/** A turn that says `text` once `gate` opens. */
const held = (gate: Promise<void>, text: string): Turn => async (emit, ctx) => {
  await gate;
  await say(text)(emit, ctx);
};

function setup(atOnce: number, turns: Record<string, Turn[]>, left: TaskEntry[] = []) {
  const fakes = Object.fromEntries(Object.entries(turns).map(([name, t]) => [name, fakeIpc(t)]));
  const made: TaskEntry[] = [...left];
  const ipc = {
    taskList: vi.fn(async () => ({ tasks: made, at_once: atOnce })),
    taskNew: vi.fn(async (name: string) => {
      const task = info(name);
      made.push({ ...task, conversation: null, place: null });
      return task;
    }),
  } as unknown as Ipc;
  const board = new TaskBoard({ ipc, ipcFor: (name) => fakes[name].ipc as unknown as Ipc });
  let rows: TaskRow[] = [];
  board.rows.subscribe((r) => (rows = r));
  return { board, fakes, ipc, rows: () => rows };
}

describe("the task board", () => {
  it("runs at most at_once tasks; the next waits for a slot and starts when one ends", async () => {
    const gate = deferred<void>();
    const t = setup(1, { one: [held(gate.promise, "One done.")], two: [say("Two done.")] });
    await t.board.load();
    expect(await t.board.start("do one", "one")).toBe("one");
    await t.board.start("do two", "two");
    await vi.waitFor(() => expect(t.rows().map((r) => [r.name, r.status])).toEqual([
      ["one", "running"],
      ["two", "waiting for a slot"],
    ]));
    expect(t.rows()[1].last).toBe("do two");
    expect(t.fakes.two.ipc.llmStream).not.toHaveBeenCalled();
    gate.resolve();
    await vi.waitFor(() => expect(t.rows().map((r) => r.status)).toEqual(["done", "done"]));
    expect(t.fakes.two.ipc.llmStream).toHaveBeenCalledTimes(1);
    expect(t.rows().map((r) => r.last)).toEqual(["One done.", "Two done."]);
  });

  it("runs several side by side when at_once allows", async () => {
    const gate = deferred<void>();
    const t = setup(3, {
      a: [held(gate.promise, "A.")],
      b: [held(gate.promise, "B.")],
      c: [held(gate.promise, "C.")],
    });
    await t.board.load();
    for (const name of ["a", "b", "c"]) await t.board.start(`task ${name}`, name);
    await vi.waitFor(() => expect(t.rows().map((r) => r.status)).toEqual(["running", "running", "running"]));
    gate.resolve();
    await vi.waitFor(() => expect(t.rows().every((r) => r.status === "done")).toBe(true));
  });

  it("lists the tasks an earlier run left and opens each one's newest conversation", async () => {
    const t = setup(2, { old: [] }, [{ ...info("old"), size: { files: 2, added: 5, removed: 1 }, conversation: "conv-1", place: "podman corral-old-1" }]);
    await t.board.load();
    expect(t.fakes.old.ipc.openConversation).toHaveBeenCalledWith("conv-1", expect.anything());
    expect(t.rows()).toMatchObject([{ name: "old", size: { files: 2 }, place: "podman corral-old-1" }]);
  });

  it("shows each task's tokens and cost: its conversation's totals, and its runs' added as they come", async () => {
    const priced: Turn = (emit) => {
      emit({ type: "text_delta", text: "Done." });
      emit({ type: "usage", input_tokens: 1_000_000, output_tokens: 0 });
      emit({ type: "done", stop_reason: "end_turn" });
    };
    const t = setup(2, { old: [priced] }, [{ ...info("old"), conversation: "conv-1", place: null }]);
    const old = t.fakes.old.ipc;
    old.modelInfo.mockResolvedValue({ context_window: 200_000, source: "known_model", price: { input: 3, output: 15 } });
    const summary = { id: "conv-1", project: "/data/worktrees/app/old", title: "t", first_line: "t", created_ms: 0, updated_ms: 0, model: "m", input_tokens: 500, output_tokens: 50, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.25, unpriced: 0, entries: 0 };
    old.openConversation.mockResolvedValue({ summary, entries: [] });
    await t.board.load();
    expect(t.rows()[0].usage).toMatchObject({ input_tokens: 500, output_tokens: 50, cost_usd: 0.25, unpriced: 0 });
    await t.board.get("old")!.loop.send("go on");
    await vi.waitFor(() => expect(t.rows()[0].usage.input_tokens).toBe(1_000_500));
    expect(t.rows()[0].usage.cost_usd).toBeCloseTo(3.25, 9);
  });

  it("says why a task could not be made", async () => {
    const t = setup(1, {});
    vi.mocked(t.ipc.taskNew).mockRejectedValueOnce({ code: "invalid_input", message: "not a git repository", retryable: false, details: {} });
    expect(await t.board.start("x")).toBeNull();
    expect(t.board.error.get()?.message).toBe("not a git repository");
  });

  it("names a task from its prompt's first words", () => {
    expect(nameFrom("  fix the flaky login test please now ")).toBe("fix the flaky login test");
    expect(nameFrom("   ")).toBe("task");
    expect(lastLine({ items: [{ kind: "assistant", id: "1", text: "First\nsecond", streaming: false }] } as never)).toBe("First");
  });
});
