import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import { beforeCall, Checkpoints, describeCounts, describeRestore, turnEnd, turnStart } from "../lib/checkpoints";
import type { CallUndo, Checkpoint, Comparison, FileChange, Restored } from "../lib/types";
import RestoreDialog from "./RestoreDialog.svelte";

const counts = { added: 0, modified: 0, removed: 0 };
const cp = (id: string, extra: Partial<Checkpoint> = {}): Checkpoint => ({
  id,
  time: 1_700_000_000_000,
  tool: "write_file",
  label: "a.txt",
  turn_start: false,
  files: 3,
  files_changed: counts,
  too_large: [],
  ...extra,
});
const change = (path: string, status: FileChange["status"], extra: Partial<FileChange> = {}): FileChange => ({
  path,
  status,
  kind: "file",
  diff: "",
  binary: false,
  diff_omitted: false,
  too_large: false,
  ...extra,
});
const plan: Comparison = {
  from: "current",
  to: "1",
  counts: { added: 1, modified: 1, removed: 1 },
  changes: [
    change("a.txt", "modified", { before: "two\n", after: "one\n", diff: "-two\n+one\n" }),
    change("gone.txt", "added", { before: "", after: "back\n" }),
    change("new.bin", "removed", { binary: true }),
  ],
  skipped: [{ path: "video.mp4", reason: "not restored: at 70000000 bytes it was too large to keep", ignored: false }],
};
const restored: Restored = { restored: "1", undo: "9", counts: plan.counts, changes: plan.changes, skipped: [] };

describe("checkpoints", () => {
  const list = [
    cp("1", { turn: "t1", call_id: "c1", turn_start: true }),
    cp("2", { turn: "t1", call_id: "c2" }),
    cp("3", { turn: "t2", call_id: "c3", turn_start: true }),
  ];

  it("finds a turn's first checkpoint, a call's own, and where a turn ends", () => {
    expect(turnStart(list, "t1")?.id).toBe("1");
    expect(beforeCall(list, "c2")?.id).toBe("2");
    expect(turnEnd(list, "t1")?.id).toBe("3");
    expect(turnEnd(list, "t2")).toBeUndefined();
    expect(turnStart(list, "t9")).toBeUndefined();
  });

  it("says what changed in words", () => {
    expect(describeCounts({ added: 1, modified: 2, removed: 0 })).toBe("3 files changed, 1 created");
    expect(describeCounts({ added: 0, modified: 1, removed: 1 })).toBe("2 files changed, 1 deleted");
    expect(describeCounts({ added: 0, modified: 1, removed: 0 })).toBe("1 file changed");
    expect(describeCounts(counts)).toBe("no files changed");
    expect(describeRestore({ added: 2, modified: 0, removed: 1 })).toBe("2 brought back, 1 removed");
    expect(describeRestore(counts)).toBe("nothing to change");
  });

  it("summarizes each turn up to the next turn's first checkpoint, or to now", async () => {
    const compare = vi.fn(async (from: string, to?: string) => ({ ...plan, from, to: to ?? "current" }));
    const checkpoints = new Checkpoints({ listCheckpoints: async () => list, compareCheckpoints: compare });
    await checkpoints.refresh();
    expect(compare.mock.calls).toEqual([
      ["1", "3"],
      ["3", undefined],
    ]);
    let state = { list: [] as Checkpoint[], summaries: {} as Record<string, Comparison> };
    checkpoints.state.subscribe((s) => (state = s))();
    expect(state.summaries.t1.to).toBe("3");
    expect(state.summaries.t2.to).toBe("current");
    // A finished turn is compared once; the open one every time.
    await checkpoints.refresh();
    expect(compare).toHaveBeenCalledTimes(3);
  });
});

describe("RestoreDialog", () => {
  function open(props: Record<string, unknown> = {}) {
    const ipc = { checkpointDiff: vi.fn(async () => plan), restoreCheckpoint: vi.fn(async () => restored) };
    const onRestored = vi.fn();
    const onClose = vi.fn();
    render(RestoreDialog, { props: { ipc, checkpoint: cp("1"), title: "before this message", onClose, onRestored, ...props } });
    return { ipc, onRestored, onClose };
  }

  it("shows the diff of what a restore changes before it restores, then offers to undo it", async () => {
    const { ipc, onRestored } = open();
    await waitFor(() => expect(screen.getAllByTestId("change")).toHaveLength(3));
    expect(screen.getByTestId("restore-counts").textContent).toContain("Restoring: 1 file changed back, 1 brought back, 1 removed.");
    expect(ipc.checkpointDiff).toHaveBeenCalledWith("1");
    expect(ipc.restoreCheckpoint).not.toHaveBeenCalled();
    expect(screen.getAllByTestId("diff")).toHaveLength(2);
    expect(screen.getByText("Binary file: no diff shown.")).toBeTruthy();
    expect(screen.getByTestId("restore-skipped").textContent).toContain("video.mp4");
    await fireEvent.click(screen.getByTestId("restore-confirm"));
    await waitFor(() => expect(onRestored).toHaveBeenCalledWith(restored));
    expect(ipc.restoreCheckpoint).toHaveBeenCalledWith("1");
    expect(screen.getByTestId("restore-done").textContent).toBe("Restored: 1 file changed back, 1 brought back, 1 removed.");
    await fireEvent.click(screen.getByTestId("restore-undo"));
    await waitFor(() => expect(ipc.restoreCheckpoint).toHaveBeenLastCalledWith("9"));
  });

  it("restores one file alone from the list, shows what is left, and undoes that one restore", async () => {
    const one: Restored = { restored: "1", path: "a.txt", undo: "7", counts: { added: 0, modified: 1, removed: 0 }, changes: [plan.changes[0]], skipped: [] };
    const rest: Comparison = { ...plan, counts: { added: 1, modified: 0, removed: 1 }, changes: plan.changes.slice(1) };
    const { ipc, onRestored, onClose } = open();
    ipc.restoreCheckpoint.mockResolvedValueOnce(one).mockResolvedValueOnce({ ...one, restored: "7", undo: "8" });
    await waitFor(() => expect(screen.getAllByTestId("restore-file")).toHaveLength(3));
    expect(screen.getAllByTestId("restore-file").map((b) => b.textContent)).toEqual(["Restore this file", "Restore this file", "Restore this file"]);
    ipc.checkpointDiff.mockResolvedValueOnce(rest);
    await fireEvent.click(screen.getAllByTestId("restore-file")[0]);
    await waitFor(() => expect(screen.getAllByTestId("change")).toHaveLength(2));
    expect(ipc.restoreCheckpoint).toHaveBeenCalledWith("1", "a.txt");
    expect(onRestored).toHaveBeenCalledWith(one);
    expect(ipc.checkpointDiff).toHaveBeenCalledTimes(2);
    expect(screen.getByTestId("restore-file-done").textContent).toContain("Restored a.txt to before this message (1 file changed back); the rest of the project is as it was.");
    expect(screen.getByTestId("restore-counts").textContent).toContain("Restoring: 1 brought back, 1 removed.");
    expect(onClose).not.toHaveBeenCalled();
    // Its undo puts that path back from the checkpoint taken just before.
    ipc.checkpointDiff.mockResolvedValueOnce(plan);
    await fireEvent.click(screen.getByTestId("restore-file-undo"));
    await waitFor(() => expect(screen.getByTestId("restore-file-done").textContent).toContain("a.txt is back as it was before it was restored."));
    expect(ipc.restoreCheckpoint).toHaveBeenLastCalledWith("7", "a.txt");
    await waitFor(() => expect(screen.getAllByTestId("change")).toHaveLength(3));
  });

  it("offers no single restore for a file too large to keep, and names a folder a folder", async () => {
    const big: Comparison = { ...plan, changes: [change("video.mp4", "added", { too_large: true }), change("empty", "removed", { kind: "dir" })] };
    open({ ipc: { checkpointDiff: vi.fn(async () => big), restoreCheckpoint: vi.fn() } });
    await waitFor(() => expect(screen.getAllByTestId("change")).toHaveLength(2));
    expect(screen.getAllByTestId("restore-file").map((b) => b.textContent)).toEqual(["Restore this folder"]);
  });

  it("undoes one call: only its paths, naming first the ones changed again since, which lose their later changes too", async () => {
    const callPlan: CallUndo = {
      checkpoint: "1",
      until: "2",
      paths: ["a.txt", "c.txt"],
      changed_later: ["a.txt"],
      plan: { ...plan, counts: { added: 0, modified: 1, removed: 1 }, changes: [plan.changes[0], change("c.txt", "removed")], skipped: [] },
    };
    const undone: Restored = { restored: "1", undo: "9", counts: callPlan.plan.counts, changes: callPlan.plan.changes, skipped: [] };
    const ipc = {
      checkpointDiff: vi.fn(async () => plan),
      restoreCheckpoint: vi.fn(async () => restored),
      callUndoDiff: vi.fn(async () => callPlan),
      undoCall: vi.fn(async () => undone),
    };
    const onRestored = vi.fn();
    open({ ipc, undoCall: true, title: "before this call", onRestored });
    await waitFor(() => expect(screen.getAllByTestId("change")).toHaveLength(2));
    expect(ipc.callUndoDiff).toHaveBeenCalledWith("1");
    expect(ipc.checkpointDiff).not.toHaveBeenCalled();
    expect(screen.getByRole("heading").textContent).toBe("Undo this call");
    expect(screen.getByTestId("restore-counts").textContent).toContain("Undoing: 1 file changed back, 1 removed.");
    const later = screen.getByTestId("undo-call-later");
    expect(later.textContent).toContain("Changed again after this call");
    expect(later.textContent).toContain("its later changes are lost too");
    expect([...later.querySelectorAll("code")].map((c) => c.textContent)).toEqual(["a.txt"]);
    expect(ipc.undoCall).not.toHaveBeenCalled();
    await fireEvent.click(screen.getByTestId("restore-confirm"));
    await waitFor(() => expect(onRestored).toHaveBeenCalledWith(undone));
    expect(ipc.undoCall).toHaveBeenCalledWith("1");
    expect(ipc.restoreCheckpoint).not.toHaveBeenCalled();
    expect(screen.getByRole("heading").textContent).toBe("Undid this call");
    expect(screen.getByTestId("restore-done").textContent).toBe("Undone: 1 file changed back, 1 removed.");
    // The undo of the undo restores the checkpoint it took, whole.
    await fireEvent.click(screen.getByTestId("restore-undo"));
    await waitFor(() => expect(ipc.restoreCheckpoint).toHaveBeenCalledWith("9"));
  });

  it("says nothing of later changes when no path of the call changed since", async () => {
    const callPlan: CallUndo = { checkpoint: "1", until: "current", paths: ["b.txt"], changed_later: [], plan: { ...plan, changes: [change("b.txt", "modified")] } };
    open({ ipc: { checkpointDiff: vi.fn(), restoreCheckpoint: vi.fn(), callUndoDiff: vi.fn(async () => callPlan), undoCall: vi.fn() }, undoCall: true });
    await waitFor(() => expect(screen.getAllByTestId("change")).toHaveLength(1));
    expect(screen.queryByTestId("undo-call-later")).toBeNull();
    expect(screen.getByTestId("restore-confirm").textContent).toBe("Undo this call");
  });

  it("names the ignored entries a restore leaves as they are, nested ones too, apart from what it could not do", async () => {
    const ignored = (path: string, why: string) => ({ path, reason: `ignored, not kept: ${why}`, ignored: true });
    const withIgnored: Comparison = {
      ...plan,
      skipped: [
        ...plan.skipped,
        ignored("pkg/build", "the ignore rules left it out when the checkpoint was taken; left as it is"),
        ignored("pkg/sub/new.log", "not there when the checkpoint was taken; left as it is"),
      ],
    };
    const { onRestored } = open({ ipc: { checkpointDiff: vi.fn(async () => withIgnored), restoreCheckpoint: vi.fn(async () => ({ ...restored, skipped: withIgnored.skipped })) } });
    await waitFor(() => screen.getByTestId("restore-ignored"));
    expect(screen.getByTestId("restore-skipped").textContent).toContain("video.mp4");
    expect(screen.getByTestId("restore-skipped").textContent).not.toContain("pkg/build");
    const box = screen.getByTestId("restore-ignored");
    expect(box.textContent).toContain("Ignored, not kept");
    expect(screen.getAllByTestId("ignored-entry").map((e) => e.textContent)).toEqual([
      "pkg/build: the ignore rules left it out when the checkpoint was taken; left as it is",
      "pkg/sub/new.log: not there when the checkpoint was taken; left as it is",
    ]);
    await fireEvent.click(screen.getByTestId("restore-confirm"));
    await waitFor(() => expect(onRestored).toHaveBeenCalled());
    expect(screen.getAllByTestId("ignored-entry")).toHaveLength(2);
  });

  it("opens on a turn's summary and restores only after the preview; the conversation rewinds only when asked", async () => {
    const onRewind = vi.fn();
    const summary: Comparison = { ...plan, from: "1", to: "current" };
    const { ipc } = open({ summary, onRewind });
    expect(screen.getByTestId("restore-counts").textContent).toBe("3 files changed, 1 created, 1 deleted");
    expect(ipc.checkpointDiff).not.toHaveBeenCalled();
    await fireEvent.click(screen.getByTestId("restore-preview"));
    await waitFor(() => expect(ipc.checkpointDiff).toHaveBeenCalled());
    await waitFor(() => screen.getByTestId("restore-rewind"));
    await fireEvent.click(screen.getByTestId("restore-rewind"));
    await fireEvent.click(screen.getByTestId("restore-confirm"));
    await waitFor(() => expect(onRewind).toHaveBeenCalledTimes(1));
  });
});
