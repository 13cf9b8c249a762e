// The conversation's changes: from the checkpoint before its first change
// to now, listed with their diffs; none when it changed nothing.
import { render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import { changedPaths, conversationChanges } from "../lib/changes";
import type { Checkpoint, Comparison } from "../lib/types";
import ChangesView from "./ChangesView.svelte";

const checkpoint = (id: string, turn?: string): Checkpoint =>
  ({ id, created_ms: 0, tool: "write_file", label: "", ...(turn === undefined ? {} : { turn }) }) as unknown as Checkpoint;
const comparison: Comparison = {
  from: "2",
  to: "current",
  counts: { added: 1, modified: 1, removed: 0 },
  changes: [
    { path: "notes.txt", status: "added", kind: "file", before: "", after: "hello\n" },
    { path: "src/a.js", status: "modified", kind: "file", before: "a\n", after: "b\n" },
  ],
} as unknown as Comparison;

function ipcWith(list: Checkpoint[]) {
  return { listCheckpoints: vi.fn(async () => list), compareCheckpoints: vi.fn(async () => comparison) };
}

describe("conversation changes", () => {
  it("compares from the first checkpoint of the conversation's own turns", async () => {
    // Checkpoint 1 is another conversation's; 2 is this one's first.
    const ipc = ipcWith([checkpoint("1", "other"), checkpoint("2", "u2"), checkpoint("3", "u3")]);
    const found = await conversationChanges(ipc, ["u1", "u2", "u3"]);
    expect(ipc.compareCheckpoints).toHaveBeenCalledWith("2");
    expect([...changedPaths(found)]).toEqual(["notes.txt", "src/a.js"]);
  });

  it("is none when no checkpoint belongs to the conversation", async () => {
    const ipc = ipcWith([checkpoint("1", "other")]);
    expect(await conversationChanges(ipc, ["u1"])).toBeNull();
    expect(await conversationChanges(ipc, [])).toBeNull();
    expect(ipc.compareCheckpoints).not.toHaveBeenCalled();
    expect(changedPaths(null).size).toBe(0);
  });

  it("shows each changed file with its diff, or says none changed", async () => {
    const { unmount } = render(ChangesView, { props: { ipc: ipcWith([checkpoint("2", "u1")]), turns: ["u1"], onClose: () => {} } });
    await vi.waitFor(() => expect(screen.getAllByTestId("change").map((c) => c.dataset.path)).toEqual(["notes.txt", "src/a.js"]));
    expect(screen.getByTestId("changes-counts").textContent).toContain("1 created");
    unmount();
    render(ChangesView, { props: { ipc: ipcWith([]), turns: ["u1"], onClose: () => {} } });
    await vi.waitFor(() => expect(screen.getByTestId("changes-none")).toBeTruthy());
  });
});
