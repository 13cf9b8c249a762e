// Forking where the conversation changed files after the fork's point asks
// whether to take the files back too (through the restore dialog, diff
// first); with nothing to take back it forks without a question.
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import { fakeIpc } from "../test/fakeIpc";
import { AgentLoop } from "../lib/agent/loop";
import { NO_INSTRUCTIONS } from "../lib/agent/instructions";
import { forkCheckpoint } from "../lib/checkpoints";
import type { Checkpoint, Comparison, Restored, StoredEntry } from "../lib/types";
import Chat from "./Chat.svelte";

const counts = { added: 0, modified: 1, removed: 0 };
const cp = (id: string, turn: string): Checkpoint => ({
  id,
  time: 1_700_000_000_000,
  tool: "edit_file",
  label: "src/greet.js",
  turn,
  call_id: `card-${id}`,
  turn_start: true,
  files: 3,
  files_changed: counts,
  too_large: [],
});
const plan: Comparison = {
  from: "current",
  to: "5",
  counts,
  changes: [{ path: "src/greet.js", status: "modified", kind: "file", diff: "-Hi\n+Hello\n", before: "Hi\n", after: "Hello\n", binary: false, diff_omitted: false, too_large: false }],
  skipped: [],
};
const restored: Restored = { restored: "5", undo: "9", counts, changes: plan.changes, skipped: [] };

const text = (role: "user" | "assistant", value: string) => ({ role, content: [{ type: "text" as const, text: value }] });
/** Two exchanges: "u1" changed nothing, "u2" edited a file (its checkpoint "5"). */
const entries: StoredEntry[] = [
  { seq: 0, message: text("user", "Say hi"), items: [{ kind: "user", id: "u1", text: "Say hi" }] },
  { seq: 1, message: text("assistant", "Hi."), items: [{ kind: "assistant", id: "a1", text: "Hi.", streaming: false }] },
  { seq: 2, message: text("user", "Change the greeting"), items: [{ kind: "user", id: "u2", text: "Change the greeting" }] },
  { seq: 3, message: text("assistant", "Changed."), items: [{ kind: "assistant", id: "a2", text: "Changed.", streaming: false }] },
];

function setup(list: Checkpoint[]) {
  const fake = fakeIpc([]);
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  loop.load({ summary: { id: "c1", project: "/p/app", title: "t", first_line: "t", created_ms: 0, updated_ms: 0, model: "m", input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 0, entries: 4 }, entries });
  const checkpointIpc = {
    listCheckpoints: vi.fn(async () => list),
    compareCheckpoints: vi.fn(async () => plan),
    checkpointDiff: vi.fn(async () => plan),
    restoreCheckpoint: vi.fn(async () => restored),
  };
  const onFork = vi.fn();
  render(Chat, { props: { loop, onFork, checkpointIpc } });
  return { checkpointIpc, onFork };
}

const edit = (index: number) => screen.getAllByTestId("edit-message")[index];
const here = (index: number) => screen.getAllByTestId("fork-message")[index];

describe("a fork after files changed", () => {
  it("picks the first checkpoint of the message or a later one (edit), of a later one (here)", () => {
    const list = [cp("3", "other"), cp("5", "u2"), cp("6", "u2"), cp("8", "u3")];
    const turns = ["u1", "u2", "u3"];
    expect(forkCheckpoint(list, turns, "u1", "edit")?.id).toBe("5");
    expect(forkCheckpoint(list, turns, "u1", "here")?.id).toBe("5");
    expect(forkCheckpoint(list, turns, "u2", "edit")?.id).toBe("5");
    expect(forkCheckpoint(list, turns, "u2", "here")?.id).toBe("8");
    expect(forkCheckpoint(list, turns, "u3", "here")).toBeUndefined();
    expect(forkCheckpoint(list, turns, "nope", "edit")).toBeUndefined();
  });

  it("asks, and Fork the conversation forks without touching the files", async () => {
    const { checkpointIpc, onFork } = setup([cp("5", "u2")]);
    await waitFor(() => screen.getByTestId("restore-turn"));
    await fireEvent.click(edit(1));
    expect(screen.getByTestId("fork-dialog").textContent).toContain("Edit and resend");
    expect(onFork).not.toHaveBeenCalled();
    await fireEvent.click(screen.getByTestId("fork-only"));
    expect(onFork).toHaveBeenCalledWith("u2", "edit");
    expect(screen.queryByTestId("fork-dialog")).toBeNull();
    expect(checkpointIpc.checkpointDiff).not.toHaveBeenCalled();
    expect(checkpointIpc.restoreCheckpoint).not.toHaveBeenCalled();
  });

  it("Fork and restore shows the diff first, restores, then forks", async () => {
    const { checkpointIpc, onFork } = setup([cp("5", "u2")]);
    await waitFor(() => screen.getByTestId("restore-turn"));
    await fireEvent.click(here(0));
    expect(screen.getByTestId("fork-dialog").textContent).toContain("Fork from here");
    await fireEvent.click(screen.getByTestId("fork-restore"));
    await waitFor(() => expect(screen.getAllByTestId("change")).toHaveLength(1));
    expect(checkpointIpc.checkpointDiff).toHaveBeenCalledWith("5");
    expect(screen.getByTestId("restore-then-fork")).toBeTruthy();
    expect(screen.queryByTestId("restore-rewind")).toBeNull();
    expect(onFork).not.toHaveBeenCalled();
    expect(checkpointIpc.restoreCheckpoint).not.toHaveBeenCalled();
    await fireEvent.click(screen.getByTestId("restore-confirm"));
    await waitFor(() => expect(onFork).toHaveBeenCalledWith("u1", "here"));
    expect(checkpointIpc.restoreCheckpoint).toHaveBeenCalledWith("5");
    expect(checkpointIpc.restoreCheckpoint.mock.invocationCallOrder[0]).toBeLessThan(onFork.mock.invocationCallOrder[0]);
  });

  it("Cancel forks nothing; a failed restore forks nothing", async () => {
    const { checkpointIpc, onFork } = setup([cp("5", "u2")]);
    await waitFor(() => screen.getByTestId("restore-turn"));
    await fireEvent.click(edit(0));
    await fireEvent.click(screen.getByText("Cancel"));
    expect(screen.queryByTestId("fork-dialog")).toBeNull();
    checkpointIpc.restoreCheckpoint.mockRejectedValueOnce({ code: "io", message: "the store is damaged", hint: "", retryable: false, details: {} });
    await fireEvent.click(edit(0));
    await fireEvent.click(screen.getByTestId("fork-restore"));
    await waitFor(() => screen.getByTestId("change"));
    await fireEvent.click(screen.getByTestId("restore-confirm"));
    await waitFor(() => screen.getByText(/the store is damaged/));
    expect(onFork).not.toHaveBeenCalled();
  });

  it("forks without a question when nothing changed after the point, or there are no checkpoints", async () => {
    const { onFork } = setup([cp("5", "u2")]);
    await waitFor(() => screen.getByTestId("restore-turn"));
    await fireEvent.click(here(1));
    expect(onFork).toHaveBeenCalledWith("u2", "here");
    expect(screen.queryByTestId("fork-dialog")).toBeNull();
  });

  it("forks without a question in a project with no checkpoints", async () => {
    const { checkpointIpc, onFork } = setup([]);
    await waitFor(() => expect(checkpointIpc.listCheckpoints).toHaveBeenCalled());
    await fireEvent.click(edit(1));
    expect(onFork).toHaveBeenCalledWith("u2", "edit");
    expect(screen.queryByTestId("fork-dialog")).toBeNull();
  });
});
