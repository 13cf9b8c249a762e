// The tree shows ignored entries dimmed and collapsed, as editors do: what
// the root .gitignore ignores and the folders tools make (.venv,
// __pycache__), whatever the .gitignore says.
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { TreeChanges } from "../lib/types";
import { ignoreRule } from "../lib/treeIgnore";

const disk: { gitignore: string | null; folders: Record<string, string[]> } = { gitignore: null, folders: {} };
vi.mock("../lib/ipc", () => import("../test/ipcMock").then((m) => m.ipcModule()));
import { ipc as client } from "../lib/ipc";
import { answer } from "../test/ipcMock";

answer(client, {
  callTool: async (tool, input) => {
    const path = String((input as { path?: unknown }).path ?? "");
    if (tool === "read_file") {
      if (path === ".gitignore" && disk.gitignore !== null) return { path, content: disk.gitignore, truncated: false };
      throw { code: "not_found", message: `\`${path}\` does not exist`, hint: "", retryable: false, details: {} };
    }
    const listed = disk.folders[path] ?? [];
    return { path, entries: listed.map((p) => ({ path: p.replace(/\/$/, ""), kind: p.endsWith("/") ? "dir" : "file" })), truncated: false };
  },
  searchIndexStatus: async () => ({ state: "ready", files: 0, ms: 0 }),
  treeChanges: async (since: number): Promise<TreeChanges> => ({ counter: since, folders: [], all: false }),
});

import FileTree from "./FileTree.svelte";

const ignoredPaths = (): string[] =>
  [...document.querySelectorAll("li[data-ignored]")].map((li) => li.querySelector("[data-path]")?.getAttribute("data-path") ?? "").sort();

beforeEach(() => {
  disk.gitignore = "dist/\n*.log\n";
  disk.folders = {
    ".": [".venv/", "__pycache__/", "dist/", "src/", "app.log", "tempconv.py"],
    src: ["src/__pycache__/", "src/tempconv.py"],
    ".venv": [".venv/bin/"],
  };
});

describe("the tree's ignored entries", () => {
  it("are dimmed and collapsed: the tools' folders and what the root .gitignore ignores", async () => {
    render(FileTree, { props: { name: "demo", refresh: 0 } });
    await waitFor(() => expect(ignoredPaths()).toEqual([".venv", "__pycache__", "app.log", "dist"]));
    for (const path of [".venv", "__pycache__", "dist"]) {
      expect(document.querySelector(`[data-testid="tree-dir"][data-path="${path}"]`)?.getAttribute("aria-expanded")).toBe("false");
    }
    // A screen reader hears it too.
    expect(document.querySelector('[data-path=".venv"]')?.textContent).toContain(", ignored");
    // Opened, an ignored folder lists as any other, and so do the ones below.
    await fireEvent.click(document.querySelector('[data-testid="tree-dir"][data-path="src"]') as HTMLElement);
    await waitFor(() => expect(ignoredPaths()).toContain("src/__pycache__"));
    expect(ignoredPaths()).not.toContain("src/tempconv.py");
    await fireEvent.click(screen.getByRole("button", { name: /^▸?\s*\.venv/ }));
    await waitFor(() => expect(ignoredPaths()).toContain(".venv/bin"));
  });

  it("without a .gitignore, only the tools' folders", async () => {
    disk.gitignore = null;
    render(FileTree, { props: { name: "demo", refresh: 0 } });
    await waitFor(() => expect(ignoredPaths()).toEqual([".venv", "__pycache__"]));
  });

  it("the rule follows the .gitignore and the built-in folders; odd paths are not ignored", () => {
    const rule = ignoreRule("build/\n!build/keep.txt\n");
    expect(rule("build", true)).toBe(true);
    expect(rule("node_modules", true)).toBe(true);
    expect(rule("src/main.rs", false)).toBe(false);
    expect(rule(".", true)).toBe(false);
    expect(rule("../x", false)).toBe(false);
  });
});
