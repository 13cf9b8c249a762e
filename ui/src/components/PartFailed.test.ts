// A part of the window loaded on demand whose chunk cannot be had: the
// window says so instead of doing nothing, and Close lets the next open
// try again.
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";

const { attempts } = vi.hoisted(() => ({ attempts: { count: 0 } }));
vi.mock("../lib/ipc", () => import("../test/ipcMock").then((m) => m.ipcModule()));
import { ipc as client } from "../lib/ipc";
import { answer } from "../test/ipcMock";

answer(client, {
  callTool: async () => ({ path: ".", entries: [{ path: "README.md", kind: "file" }], truncated: false }),
  searchIndexStatus: async () => ({ state: "ready", files: 0, ms: 0 }),
  treeChanges: async (since: number) => ({ counter: since, folders: [], all: false }),
});
vi.mock("./FileViewer.svelte", () => {
  attempts.count++;
  throw new Error("the chunk is gone");
});

import FileTree from "./FileTree.svelte";

describe("a part that cannot be loaded", () => {
  it("is said, and Close lets the next open try again", async () => {
    render(FileTree, { props: { name: "demo", refresh: 0, every: 60_000 } });
    const file = await screen.findByTestId("tree-file");
    await fireEvent.click(file);
    const failed = await screen.findByTestId("part-failed");
    expect(failed.textContent).toContain("The file viewer could not be loaded");
    expect(failed.textContent).toContain("open it again to try once more");
    const before = attempts.count;

    await fireEvent.click(screen.getByTestId("part-failed-close"));
    await waitFor(() => expect(screen.queryByTestId("part-failed")).toBeNull());
    await fireEvent.click(file);
    await screen.findByTestId("part-failed");
    expect(attempts.count).toBeGreaterThan(before);
  });
});
