// The project's conversations in the window: the list (newest first), New
// conversation keeping the old one, open, rename, delete with Undo, search
// with highlighted matches, fork and edit-and-resend, and a long
// conversation rendered as a window of rows. The IPC module is mocked at
// its one seam; the history behind it is a small in-memory stand-in.
import { fireEvent, render, screen, within } from "@testing-library/svelte";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { age, snippetParts } from "../lib/historyView";
import type { ConversationData, ConversationSummary, NewEntry, StoredEntry } from "../lib/types";
import { offsetsOf, variableRange } from "../lib/virtualRange";

vi.mock("../lib/ipc", () => import("../test/ipcMock").then((m) => m.ipcModule()));
import { ipc as client } from "../lib/ipc";
import { answer } from "../test/ipcMock";

const history = {
  conversations: [] as { summary: ConversationSummary; entries: StoredEntry[]; deleted: boolean }[],
  next: 1,
};
const ipc = answer(client, {
  projectInfo: vi.fn(),
  recentProjects: vi.fn(async () => []),
  callTool: vi.fn(async () => ({ path: ".", entries: [], truncated: false })),
  setWindowTitle: vi.fn(),
  toolSpecs: vi.fn(async () => []),
  modelInfo: vi.fn(async () => ({})),
  llmStream: vi.fn(),
  cancel: vi.fn(async () => null),
  checkCall: vi.fn(),
  conversationGrants: vi.fn(async () => []),
  revokeGrant: vi.fn(async () => []),
  endConversation: vi.fn(async () => null),
  execShell: vi.fn(),
  historyNotice: vi.fn(async () => null as string | null),
  checkpointNotice: vi.fn(async () => null as string | null),
  listConversations: vi.fn(),
  openConversation: vi.fn(),
  appendEntry: vi.fn(),
  renameConversation: vi.fn(),
  deleteConversation: vi.fn(),
  restoreConversation: vi.fn(),
  forkConversation: vi.fn(),
  searchConversations: vi.fn(),
  exportConversation: vi.fn(),
});

import App from "../App.svelte";

const project = { root: "/home/me/app", name: "app" };

function summary(id: string, title: string, updated: number, entries = 0): ConversationSummary {
  return { id, project: project.root, title, first_line: title, created_ms: updated, updated_ms: updated, model: "m", input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 0, entries };
}

/** A stored conversation of user/assistant pairs. */
function seed(id: string, title: string, updated: number, texts: string[]): void {
  const entries: StoredEntry[] = texts.map((text, seq) => {
    const role = seq % 2 === 0 ? "user" : "assistant";
    const item = role === "user" ? { kind: "user", id: `${id}-u${seq}`, text } : { kind: "assistant", id: `${id}-a${seq}`, text, streaming: false };
    return { seq, message: { role, content: [{ type: "text", text }] }, items: [item] };
  });
  history.conversations.push({ summary: summary(id, title, updated, entries.length), entries, deleted: false });
}

const live = () => history.conversations.filter((c) => !c.deleted);
const find = (id: string) => {
  const c = live().find((c) => c.summary.id === id);
  if (!c) throw { code: "not_found", message: `there is no conversation \`${id}\``, hint: "", retryable: false, details: {} };
  return c;
};

beforeEach(() => {
  vi.clearAllMocks();
  history.conversations = [];
  history.next = 1;
  ipc.projectInfo.mockResolvedValue(project);
  ipc.listConversations.mockImplementation(async () => live().map((c) => c.summary).sort((a, b) => b.updated_ms - a.updated_ms));
  ipc.openConversation.mockImplementation(async (id: string): Promise<ConversationData> => {
    const c = find(id);
    return { summary: c.summary, entries: c.entries };
  });
  ipc.appendEntry.mockImplementation(async (id: string | null, entry: NewEntry) => {
    let c = id === null ? null : find(id);
    if (!c) {
      c = { summary: summary(`new${history.next++}`, "", 10_000 + history.next), entries: [], deleted: false };
      history.conversations.push(c);
    }
    const seq = c.entries.length;
    c.entries.push({ seq, message: entry.message ?? null, items: entry.items });
    c.summary = { ...c.summary, entries: seq + 1, updated_ms: c.summary.updated_ms + 1 };
    const text = entry.message?.role === "user" && entry.message.content[0]?.type === "text" ? entry.message.content[0].text : null;
    if (text && !c.summary.title) c.summary = { ...c.summary, title: text, first_line: text };
    return { conversation: c.summary.id, seq };
  });
  ipc.renameConversation.mockImplementation(async (id: string, title: string) => {
    const c = find(id);
    c.summary = { ...c.summary, title };
    return c.summary;
  });
  ipc.deleteConversation.mockImplementation(async (id: string) => {
    find(id).deleted = true;
    return null;
  });
  ipc.restoreConversation.mockImplementation(async (id: string) => {
    const c = history.conversations.find((c) => c.summary.id === id);
    if (!c) throw { code: "not_found", message: `there is no conversation \`${id}\``, hint: "", retryable: false, details: {} };
    c.deleted = false;
    return c.summary;
  });
  ipc.forkConversation.mockImplementation(async (id: string, before: number) => {
    const c = find(id);
    const fork = { summary: summary(`fork${history.next++}`, `${c.summary.title} (fork)`, 20_000), entries: c.entries.filter((e) => e.seq < before), deleted: false };
    history.conversations.push(fork);
    return fork.summary;
  });
  ipc.llmStream.mockImplementation(async (_runId, _request, onEvent) => {
    onEvent({ type: "text_delta", text: "Sure." });
    onEvent({ type: "done", stop_reason: "end_turn" });
    return null;
  });
});

const titles = () => screen.getAllByTestId("conversation-title").map((t) => t.textContent);
const current = () => screen.getAllByTestId("conversation-item").find((i) => i.dataset.current === "true")?.dataset.id;

describe("conversations", () => {
  it("opens the newest, switches to an older one, and New conversation keeps the old", async () => {
    seed("old", "Old question", 1000, ["Old question", "Old answer"]);
    seed("recent", "Recent question", 2000, ["Recent question", "Recent answer"]);
    render(App);
    await vi.waitFor(() => expect(screen.getByTestId("message-user").textContent).toBe("Recent question"));
    expect(titles()).toEqual(["Recent question", "Old question"]);
    expect(current()).toBe("recent");

    await fireEvent.click(within(screen.getAllByTestId("conversation-item")[1]).getByTestId("conversation-open"));
    await vi.waitFor(() => expect(screen.getByTestId("message-assistant").textContent).toContain("Old answer"));
    expect(current()).toBe("old");

    await fireEvent.click(screen.getByTestId("new-conversation"));
    await vi.waitFor(() => expect(screen.queryByTestId("message-user")).toBeNull());
    await fireEvent.input(screen.getByTestId("chat-input"), { target: { value: "A third one" } });
    await fireEvent.click(screen.getByTestId("send"));
    await vi.waitFor(() => expect(titles()).toEqual(["A third one", "Recent question", "Old question"]));
    // The new conversation was started by its first append, not by the button.
    expect(ipc.appendEntry.mock.calls[0][0]).toBeNull();
    expect(current()).toBe("new1");
  });

  it("renames, deletes after asking, and undoes the delete", async () => {
    seed("a", "First", 1000, ["First", "answer"]);
    seed("b", "Second", 2000, ["Second", "answer"]);
    render(App);
    await vi.waitFor(() => expect(titles()).toEqual(["Second", "First"]));

    const first = () => screen.getAllByTestId("conversation-item")[1];
    await fireEvent.click(within(first()).getByTestId("conversation-rename"));
    const input = screen.getByTestId("conversation-title-input") as HTMLInputElement;
    expect(input.value).toBe("First");
    await fireEvent.input(input, { target: { value: "Build fix" } });
    await fireEvent.keyDown(input, { key: "Enter" });
    await vi.waitFor(() => expect(titles()).toEqual(["Second", "Build fix"]));
    expect(ipc.renameConversation).toHaveBeenCalledWith("a", "Build fix");

    await fireEvent.click(within(first()).getByTestId("conversation-delete"));
    expect(ipc.deleteConversation).not.toHaveBeenCalled();
    await fireEvent.click(within(first()).getByTestId("conversation-delete-confirm"));
    await vi.waitFor(() => expect(titles()).toEqual(["Second"]));
    expect(screen.getByTestId("conversation-deleted").textContent).toContain("Build fix");
    await fireEvent.click(screen.getByTestId("conversation-undo"));
    await vi.waitFor(() => expect(titles()).toEqual(["Second", "Build fix"]));
    expect(ipc.restoreConversation).toHaveBeenCalledWith("a");
    expect(screen.queryByTestId("conversation-deleted")).toBeNull();
  });

  it("searches and opens a result; matches are highlighted as text", async () => {
    seed("a", "Zeppelin", 1000, ["Why is the zeppelin <b>flaky</b>?", "answer"]);
    seed("b", "Other", 2000, ["Other", "answer"]);
    ipc.searchConversations.mockResolvedValue([{ conversation: "a", title: "Zeppelin", seq: 0, snippet: "Why is the \u0002zeppelin\u0003 <b>flaky</b>?", updated_ms: 1000 }]);
    render(App);
    await vi.waitFor(() => expect(current()).toBe("b"));
    const box = screen.getByTestId("conversation-search");
    await fireEvent.input(box, { target: { value: "zeppel" } });
    const hit = await vi.waitFor(() => screen.getByTestId("search-hit"));
    expect(ipc.searchConversations).toHaveBeenCalledWith("zeppel");
    const snippet = within(hit).getByTestId("search-snippet");
    expect(snippet.querySelector("mark")?.textContent).toBe("zeppelin");
    expect(snippet.querySelector("b")).toBeNull();
    expect(snippet.textContent).toContain("<b>flaky</b>");
    await fireEvent.click(hit);
    await vi.waitFor(() => expect(screen.getByTestId("message-user").textContent).toContain("zeppelin"));
    expect(ipc.openConversation).toHaveBeenLastCalledWith("a", { elideOver: 4096, last: 60 });
  });

  it("forks from a message and edits one in a new conversation, leaving the original", async () => {
    seed("a", "First", 1000, ["First", "one", "Second", "two"]);
    render(App);
    await vi.waitFor(() => expect(screen.getAllByTestId("message-user")).toHaveLength(2));

    // Fork from the first message: it and its answer, up to the next message of the user.
    await fireEvent.click(screen.getAllByTestId("fork-message")[0]);
    await vi.waitFor(() => expect(current()).toBe("fork1"));
    expect(ipc.forkConversation).toHaveBeenCalledWith("a", 2);
    expect(screen.getAllByTestId("message-user").map((m) => m.textContent)).toEqual(["First"]);
    expect(screen.getByTestId("message-assistant").textContent).toContain("one");

    // Back to the original, unchanged; edit its second message.
    await fireEvent.click(within(screen.getAllByTestId("conversation-item").find((i) => i.dataset.id === "a")!).getByTestId("conversation-open"));
    await vi.waitFor(() => expect(screen.getAllByTestId("message-user")).toHaveLength(2));
    await fireEvent.click(screen.getAllByTestId("edit-message")[1]);
    await vi.waitFor(() => expect(current()).toBe("fork2"));
    expect(ipc.forkConversation).toHaveBeenLastCalledWith("a", 2);
    await vi.waitFor(() => expect((screen.getByTestId("chat-input") as HTMLTextAreaElement).value).toBe("Second"));
    expect(history.conversations.find((c) => c.summary.id === "a")?.entries).toHaveLength(4);
  });

  it("stores what failed to be stored before opening another, in its own conversation; the one opened stays current", async () => {
    seed("a", "Saved", 1000, ["Saved", "answer"]);
    render(App);
    await vi.waitFor(() => expect(current()).toBe("a"));
    await fireEvent.click(screen.getByTestId("new-conversation"));
    await vi.waitFor(() => expect(screen.queryByTestId("message-user")).toBeNull());
    // The history is locked by another window: the new conversation cannot be stored.
    const append = ipc.appendEntry.getMockImplementation()!;
    let failing = true;
    ipc.appendEntry.mockImplementation(async (id: string | null, entry: NewEntry) => {
      if (failing) throw { code: "io", message: "the history is locked", hint: "", retryable: true, details: {} };
      return append(id, entry);
    });
    await fireEvent.input(screen.getByTestId("chat-input"), { target: { value: "Not stored yet" } });
    await fireEvent.click(screen.getByTestId("send"));
    await vi.waitFor(() => expect(screen.getAllByTestId("notice").some((n) => n.textContent?.includes("the history is locked"))).toBe(true));
    await vi.waitFor(() => expect(screen.getByTestId("message-assistant").textContent).toContain("Sure."));
    await vi.waitFor(() => expect(screen.getByTestId("new-conversation").hasAttribute("disabled")).toBe(false));
    expect(titles()).toEqual(["Saved"]);

    // Opening another still fails to store it: it is kept, not dropped, and "a" opens.
    await fireEvent.click(within(screen.getAllByTestId("conversation-item")[0]).getByTestId("conversation-open"));
    await vi.waitFor(() => expect(screen.getByTestId("message-user").textContent).toBe("Saved"));
    expect(current()).toBe("a");

    // Once the history can be written, the next save stores it, in a conversation of its own.
    failing = false;
    await fireEvent.input(screen.getByTestId("chat-input"), { target: { value: "Go on" } });
    await fireEvent.click(screen.getByTestId("send"));
    await vi.waitFor(() => expect(titles()).toEqual(["Not stored yet", "Saved"]));
    const stored = history.conversations.find((c) => c.summary.title === "Not stored yet");
    expect(stored?.entries.map((e) => e.message?.role)).toEqual(["user", "assistant"]);
    expect(history.conversations.find((c) => c.summary.id === "a")?.entries.map((e) => e.message?.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(current()).toBe("a");
  });

  it("renders a long conversation as a window of rows", async () => {
    const texts = Array.from({ length: 5000 }, (_, i) => `message ${i}`);
    seed("long", "Long", 1000, texts);
    render(App);
    await vi.waitFor(() => expect(screen.getAllByTestId("message-user").length).toBeGreaterThan(0));
    const rows = document.querySelectorAll(".row");
    expect(rows.length).toBeGreaterThan(5);
    expect(rows.length).toBeLessThan(60);
  });

  it("says once what became of a history that could not be used", async () => {
    ipc.historyNotice.mockResolvedValueOnce("The conversation history could not be used: it is damaged. It was moved to `x`.");
    render(App);
    const notice = await vi.waitFor(() => screen.getByTestId("history-notice"));
    expect(notice.textContent).toContain("moved to");
  });

  it("says once what the checkpoint store set aside", async () => {
    ipc.checkpointNotice.mockResolvedValueOnce("an interrupted restore of checkpoint c1 could not be finished: damaged. Its journal was moved to `journal-unfinished-1.json`.");
    render(App);
    const notice = await vi.waitFor(() => screen.getByTestId("checkpoint-notice"));
    expect(notice.textContent).toContain("journal-unfinished-1.json");
    await fireEvent.click(within(notice).getByRole("button", { name: "Dismiss" }));
    expect(screen.queryByTestId("checkpoint-notice")).toBeNull();
    expect(ipc.checkpointNotice).toHaveBeenCalledTimes(1);
  });
});

describe("the list's words and the rows' arithmetic", () => {
  it("says ages in words", () => {
    const now = Date.UTC(2026, 0, 31, 12);
    expect(age(now - 5_000, now)).toBe("just now");
    expect(age(now - 5 * 60_000, now)).toBe("5 min ago");
    expect(age(now - 3 * 3_600_000, now)).toBe("3 h ago");
    expect(age(now - 26 * 3_600_000, now)).toBe("yesterday");
    expect(age(now - 4 * 86_400_000, now)).toBe("4 d ago");
    expect(age(Date.UTC(2025, 5, 1), now)).toBe("2025-06-01");
  });

  it("splits a snippet at its match marks", () => {
    expect(snippetParts("a \u0002b\u0003 c\n\nd \u0002e\u0003")).toEqual([
      { text: "a ", match: false },
      { text: "b", match: true },
      { text: " c d ", match: false },
      { text: "e", match: true },
    ]);
  });

  it("finds the rows of varied heights on screen", () => {
    const offsets = offsetsOf([100, 20, 20, 500, 20, 20]);
    expect(offsets).toEqual([0, 100, 120, 140, 640, 660, 680]);
    expect(variableRange(offsets, 0, 110, 0)).toEqual({ start: 0, end: 2 });
    expect(variableRange(offsets, 130, 20, 0)).toEqual({ start: 2, end: 4 });
    expect(variableRange(offsets, 200, 100, 0)).toEqual({ start: 3, end: 4 });
    expect(variableRange(offsets, 650, 1000, 0)).toEqual({ start: 0, end: 6 });
    // Past the end is the end.
    expect(variableRange(offsets, 10_000, 100, 0)).toEqual({ start: 3, end: 6 });
    expect(variableRange(offsets, 200, 100, 450)).toEqual({ start: 0, end: 6 });
    expect(variableRange(offsetsOf([]), 0, 100)).toEqual({ start: 0, end: 0 });
  });
});
