// After Restore to here (or its Undo), the header's Changes count and the
// tree's marks follow the files: they are asked again, not left as they
// were before the restore.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { Checkpoint, Comparison, ConversationSummary, Restored, StoredEntry } from "../lib/types";

/** What the project holds against the conversation's first checkpoint: changed or as it was. */
const files = { changed: true };
vi.mock("../lib/ipc", () => import("../test/ipcMock").then((m) => m.ipcModule()));
import { ipc as client } from "../lib/ipc";
import { answer } from "../test/ipcMock";

const ipc = answer(client, {
  projectInfo: async () => ({ root: "/home/me/app", name: "app" }),
  recentProjects: async () => [],
  callTool: async (_name, input) => {
    const path = (input as { path?: string }).path;
    return path === "." ? { path: ".", entries: [{ name: "tempconv.py", path: "tempconv.py", kind: "file", size: 10 }], truncated: false } : { path, entries: [], truncated: false };
  },
  treeChanges: async (since: number) => ({ counter: since, folders: [], all: false }),
  onLaunch: async () => () => {},
  setWindowTitle: async () => {},
  toolSpecs: async () => [],
  modelInfo: async () => ({}),
  getSettings: async () => ({ provider: "openai", base_url: "http://127.0.0.1:1/v1", model: "m", max_tokens: 1024, mode: "ask", notifications: false, has_api_key: false }),
  cancel: async () => null,
  conversationGrants: async () => [],
  revokeGrant: async () => [],
  endConversation: async () => null,
  historyNotice: async () => null,
  checkpointNotice: async () => null,
  searchIndexStatus: async () => ({ state: "ready", files: 0, ms: 0 }),
});

import App from "../App.svelte";

const checkpoint: Checkpoint = { id: "5", time: 1_700_000_000_000, tool: "edit_file", label: "tempconv.py", turn: "u1", call_id: "card-5", turn_start: true, files: 2, files_changed: { added: 0, modified: 1, removed: 0 }, too_large: [] };
const change = { path: "tempconv.py", status: "modified", kind: "file", diff: "-a\n+b\n", before: "a\n", after: "b\n", binary: false, diff_omitted: false, too_large: false } as const;
const comparison = (): Comparison => ({
  from: "current",
  to: "5",
  counts: files.changed ? { added: 0, modified: 1, removed: 0 } : { added: 0, modified: 0, removed: 0 },
  changes: files.changed ? [change] : [],
  skipped: [],
});
const text = (role: "user" | "assistant", value: string) => ({ role, content: [{ type: "text" as const, text: value }] });
const entries: StoredEntry[] = [
  { seq: 0, message: text("user", "Fix tempconv"), items: [{ kind: "user", id: "u1", text: "Fix tempconv" }] },
  { seq: 1, message: text("assistant", "Fixed."), items: [{ kind: "assistant", id: "a1", text: "Fixed.", streaming: false }] },
];
const summary: ConversationSummary = { id: "c1", project: "/home/me/app", title: "Fix tempconv", first_line: "Fix tempconv", created_ms: 1, updated_ms: 1, model: "m", input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 0, entries: 2 };

beforeEach(() => {
  files.changed = true;
  ipc.listConversations.mockResolvedValue([summary]);
  ipc.openConversation.mockResolvedValue({ summary, entries });
  ipc.listCheckpoints.mockImplementation(async () => [checkpoint]);
  ipc.compareCheckpoints.mockImplementation(async () => comparison());
  ipc.checkpointDiff.mockImplementation(async () => ({ ...comparison(), from: "current", to: "5" }));
  ipc.restoreCheckpoint.mockImplementation(async (): Promise<Restored> => {
    files.changed = !files.changed;
    return { restored: "5", undo: "9", counts: { added: 0, modified: 1, removed: 0 }, changes: [change], skipped: [] };
  });
});

const changesButton = () => screen.getByTestId("show-changes").textContent;
const marked = () => document.querySelector('[data-testid="tree-file"][data-path="tempconv.py"]')?.getAttribute("data-changed") === "true";

describe("after a restore", () => {
  it("the Changes count and the tree's mark follow the files back, and forth again with Undo", async () => {
    render(App);
    await vi.waitFor(() => expect(changesButton()).toBe("Changes (1)"));
    await vi.waitFor(() => expect(marked()).toBe(true));

    await fireEvent.click(await screen.findByTestId("restore-turn"));
    await fireEvent.click(await screen.findByTestId("restore-confirm"));
    await screen.findByTestId("restore-done");
    await vi.waitFor(() => expect(changesButton()).toBe("Changes"));
    await vi.waitFor(() => expect(marked()).toBe(false));

    await fireEvent.click(screen.getByTestId("restore-undo"));
    await vi.waitFor(() => expect(changesButton()).toBe("Changes (1)"));
    await vi.waitFor(() => expect(marked()).toBe(true));
  });
});
