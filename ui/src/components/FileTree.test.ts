// The file tree follows the disk: the folders the watcher reports are
// listed again, and only those.
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import type { DirEntry, IndexStatus, TreeChanges } from "../lib/types";

vi.mock("../lib/ipc", () => import("../test/ipcMock").then((m) => m.ipcModule()));
import { ipc as client } from "../lib/ipc";
import { answer } from "../test/ipcMock";

const disk: Record<string, string[]> = {};
const entry = (path: string): DirEntry => ({ path, kind: path.endsWith("/") ? "dir" : "file" }) as DirEntry;
const ipc = answer(client, {
  callTool: vi.fn(async (_tool: string, input: Record<string, unknown>) => {
    const path = String(input.path);
    return { path, entries: (disk[path] ?? []).map((p) => ({ ...entry(p), path: p.replace(/\/$/, "") })), truncated: false };
  }),
  searchIndexStatus: vi.fn(async (): Promise<IndexStatus> => ({ state: "ready", files: 0, ms: 0 })),
  treeChanges: vi.fn(async (since: number): Promise<TreeChanges> => ({ counter: since, folders: [], all: false })),
});

import FileTree from "./FileTree.svelte";

const shown = (): string[] => screen.queryAllByTestId("tree-file").map((b) => b.getAttribute("data-path") ?? "");
const listed = (path: string): number => ipc.callTool.mock.calls.filter(([, input]) => input.path === path).length;

describe("FileTree", () => {
  it("lists again only the folders the watcher reports", async () => {
    disk["."] = ["src/", "README.md"];
    disk["src"] = ["src/a.js"];
    const reports: TreeChanges[] = [];
    const changes = vi.fn(async (since: number) => reports.shift() ?? { counter: since, folders: [], all: false });
    render(FileTree, { props: { name: "demo", refresh: 0, changes, every: 20 } });
    await waitFor(() => expect(shown()).toEqual(["README.md"]));
    await fireEvent.click(screen.getByRole("button", { name: /src/ }));
    await waitFor(() => expect(shown()).toEqual(["src/a.js", "README.md"]));
    const [rootBefore, srcBefore] = [listed("."), listed("src")];

    disk["."] = ["src/", "README.md", "made-by-agent.txt"];
    reports.push({ counter: 1, folders: ["."], all: false });
    await waitFor(() => expect(shown()).toContain("made-by-agent.txt"));
    expect(listed(".")).toBe(rootBefore + 1);
    expect(listed("src")).toBe(srcBefore);
    await waitFor(() => expect(changes).toHaveBeenCalledWith(1));

    disk["src"] = [];
    reports.push({ counter: 2, folders: ["src"], all: false });
    await waitFor(() => expect(shown()).not.toContain("src/a.js"));
    expect(listed(".")).toBe(rootBefore + 1);

    // The watcher lost track: every shown folder is listed again.
    disk["."] = ["src/"];
    disk["src"] = ["src/b.js"];
    reports.push({ counter: 9, folders: [], all: true });
    await waitFor(() => expect(shown()).toEqual(["src/b.js"]));
  });

  it("keeps what it listed when asking fails", async () => {
    disk["."] = ["README.md"];
    const changes = vi.fn(async () => {
      throw { code: "no_project_open", message: "no project folder is open" };
    });
    render(FileTree, { props: { name: "demo", refresh: 0, changes, every: 20 } });
    await waitFor(() => expect(changes.mock.calls.length).toBeGreaterThan(2));
    expect(shown()).toEqual(["README.md"]);
  });
});
