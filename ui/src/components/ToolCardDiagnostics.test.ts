import { render, screen } from "@testing-library/svelte";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { ipc as client } from "../lib/ipc";
import { answer } from "../test/ipcMock";
import type { ToolItem } from "../lib/agent/state";
import ToolCard from "./ToolCard.svelte";
import FileTreeNode from "./FileTreeNode.svelte";
import ProblemsPanel from "./ProblemsPanel.svelte";
import type { FileDiagnostics } from "../lib/types";
import { displayOf } from "../test/fakeIpc";

vi.mock("../lib/ipc", () => import("../test/ipcMock").then((m) => m.ipcModule()));

beforeEach(() => {
  answer(client, {
    callTool: async () => ({
      path: ".",
      entries: [
        { path: "src", kind: "dir" },
        { path: "README.md", kind: "file" },
      ],
      truncated: false,
    }),
  });
});

const broken: FileDiagnostics = {
  path: "src/main.ts",
  errors: 1,
  warnings: 1,
  diagnostics: [
    { line: 3, column: 7, severity: "error", message: "Type 'number' is not assignable to type 'string'.", source: "typescript", code: "2322" },
    { line: 5, column: 1, severity: "warning", message: "'x' is declared but never used." },
  ],
};

const edit: ToolItem = {
  kind: "tool",
  id: "c1",
  callId: "t1",
  name: "edit_file",
  input: { path: "src/main.ts", old_string: "a", new_string: "b" },
  risk: "write",
  status: "done",
  result: { path: "src/main.ts", diff: "", replacements: 1, diagnostics: { files: [broken], notes: ["the Python server (pyright-langserver) is still starting after 2.0 s; its diagnostics come with a later call"] } },
};

describe("diagnostics in the window", () => {
  it("a write's card shows its file's errors with file and line, open, and the notes", () => {
    render(ToolCard, { props: { item: edit, onStopCommand: vi.fn() } });
    const shown = screen.getByTestId("tool-diagnostics");
    expect(shown.hasAttribute("open")).toBe(true);
    expect(shown.querySelector("summary")?.textContent).toContain("Diagnostics: 1 error, 1 warning");
    const rows = screen.getAllByTestId("diagnostic");
    expect(rows.map((r) => r.dataset.severity)).toEqual(["error", "warning"]);
    expect(rows[0].textContent).toContain("src/main.ts:3:7");
    expect(rows[0].textContent).toContain("not assignable to type 'string'");
    expect(rows[0].textContent).toContain("(typescript 2322)");
    expect(screen.getByTestId("diagnostics-note").textContent).toContain("still starting");
  });

  it("a clean write says so, folded", () => {
    const clean = { ...edit, result: { diagnostics: { files: [{ ...broken, errors: 0, warnings: 0, diagnostics: [] }] } } };
    render(ToolCard, { props: { item: clean, onStopCommand: vi.fn() } });
    const shown = screen.getByTestId("tool-diagnostics");
    expect(shown.hasAttribute("open")).toBe(false);
    expect(shown.textContent).toContain("Diagnostics: no problems");
  });

  it("a report on no file is open on its notes, which say why", () => {
    const note = "the TypeScript server (typescript-language-server) did not report on `src/main.ts` within 20.0 s";
    const silent = { ...edit, name: "diagnostics", display: displayOf("diagnostics"), result: { files: [], notes: [note] } };
    render(ToolCard, { props: { item: silent, onStopCommand: vi.fn() } });
    const shown = screen.getByTestId("tool-diagnostics");
    expect(shown.hasAttribute("open")).toBe(true);
    expect(shown.querySelector("summary")?.textContent).toContain("Diagnostics: none reported");
    expect(screen.getByTestId("diagnostics-note").textContent).toContain("did not report on src/main.ts within 20.0 s");
  });

  it("a card without diagnostics shows none", () => {
    render(ToolCard, { props: { item: { ...edit, result: { path: "a.md", diff: "" } }, onStopCommand: vi.fn() } });
    expect(screen.queryByTestId("tool-diagnostics")).toBeNull();
  });

  it("the tree counts problems on folders and files", async () => {
    const problems = new Map([[broken.path, broken]]);
    render(FileTreeNode, { props: { path: ".", refresh: 0, versions: {}, onOpenFile: vi.fn(), problems } });
    const badge = await screen.findByTestId("tree-problems");
    expect(badge.textContent).toBe("1");
    expect(badge.getAttribute("aria-label")).toBe("1 error, 1 warning");
    expect(badge.closest("button")?.textContent).toContain("src");
    expect(screen.getAllByTestId("tree-problems")).toHaveLength(1);
  });

  it("the Problems panel lists every file's problems, or says there are none", () => {
    const view = render(ProblemsPanel, { props: { problems: new Map([[broken.path, broken]]), onClose: vi.fn() } });
    expect(screen.getByTestId("problems-panel").textContent).toContain("1 error, 1 warning in 1 file");
    expect(screen.getAllByTestId("diagnostic")).toHaveLength(2);
    view.unmount();
    render(ProblemsPanel, { props: { problems: new Map(), onClose: vi.fn() } });
    expect(screen.getByTestId("problems-panel").textContent).toContain("reported no errors or warnings");
  });
});
