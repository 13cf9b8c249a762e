// The model chosen in the header's switcher is kept with the conversation:
// choosing stores it, a conversation opened again talks to its stored model,
// and a new conversation stores the choice made before its first message.
// The IPC module is mocked at its one seam.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { ConversationSummary, LlmTarget, Settings, StoredEntry } from "../lib/types";

vi.mock("../lib/ipc", () => import("../test/ipcMock").then((m) => m.ipcModule()));
import { ipc as client } from "../lib/ipc";
import { answer } from "../test/ipcMock";

const stored = { conversations: [] as { summary: ConversationSummary; entries: StoredEntry[] }[] };
const ipc = answer(client, {
  projectInfo: vi.fn(),
  recentProjects: vi.fn(async () => []),
  callTool: vi.fn(async () => ({ path: ".", entries: [], truncated: false })),
  setWindowTitle: vi.fn(),
  toolSpecs: vi.fn(async () => []),
  modelInfo: vi.fn(async () => ({})),
  getSettings: vi.fn(),
  listModels: vi.fn(),
  detectLocalServers: vi.fn(async () => []),
  llmStream: vi.fn(),
  cancel: vi.fn(async () => null),
  checkCall: vi.fn(),
  conversationGrants: vi.fn(async () => []),
  revokeGrant: vi.fn(async () => []),
  endConversation: vi.fn(async () => null),
  execShell: vi.fn(),
  historyNotice: vi.fn(async () => null),
  checkpointNotice: vi.fn(async () => null),
  listConversations: vi.fn(),
  openConversation: vi.fn(),
  appendEntry: vi.fn(),
  setConversationModel: vi.fn(),
  renameConversation: vi.fn(),
  deleteConversation: vi.fn(),
  restoreConversation: vi.fn(),
  forkConversation: vi.fn(),
  searchConversations: vi.fn(),
  exportConversation: vi.fn(),
});

import App from "../App.svelte";

const project = { root: "/home/me/app", name: "app" };
const settings = { provider: "openai", base_url: "http://127.0.0.1:8080/v1", model: "default-model", max_tokens: 1024, mode: "ask", has_api_key: false } as Settings;
const qwen: LlmTarget = { provider: "openai", base_url: "http://127.0.0.1:8080/v1", model: "qwen" };

function summary(id: string, updated: number, target?: LlmTarget): ConversationSummary {
  return { id, project: project.root, title: id, first_line: id, created_ms: updated, updated_ms: updated, model: "m", input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 0, entries: 1, ...(target ? { target } : {}) };
}

function seed(id: string, updated: number, target?: LlmTarget): void {
  const item = { kind: "user", id: `${id}-u0`, text: id };
  stored.conversations.push({ summary: summary(id, updated, target), entries: [{ seq: 0, message: { role: "user", content: [{ type: "text", text: id }] }, items: [item] }] });
}

const find = (id: string) => stored.conversations.find((c) => c.summary.id === id)!;

beforeEach(() => {
  vi.clearAllMocks();
  stored.conversations = [];
  ipc.projectInfo.mockResolvedValue(project);
  ipc.getSettings.mockResolvedValue(settings);
  ipc.listModels.mockResolvedValue([{ id: "default-model" }, { id: "qwen" }]);
  ipc.listConversations.mockImplementation(async () => stored.conversations.map((c) => c.summary).sort((a, b) => b.updated_ms - a.updated_ms));
  ipc.openConversation.mockImplementation(async (id: string) => ({ summary: find(id).summary, entries: find(id).entries }));
  ipc.setConversationModel.mockImplementation(async (id: string, target: LlmTarget | null) => {
    const c = find(id);
    c.summary = { ...c.summary, target: target ?? undefined };
    if (!target) delete c.summary.target;
    return c.summary;
  });
  ipc.appendEntry.mockImplementation(async (id: string | null) => {
    if (id === null) {
      seed("new", 5000);
      return { conversation: "new", seq: 0 };
    }
    return { conversation: id, seq: find(id).entries.length };
  });
  ipc.llmStream.mockImplementation(async (_runId, _request, onEvent) => {
    onEvent({ type: "text_delta", text: "Sure." });
    onEvent({ type: "done", stop_reason: "end_turn" });
    return null;
  });
});

async function send(text: string): Promise<void> {
  await fireEvent.input(screen.getByTestId("chat-input"), { target: { value: text } });
  await fireEvent.click(screen.getByTestId("send"));
}

describe("the conversation's model", () => {
  it("is the stored one when the conversation opens, and requests go to it", async () => {
    seed("chosen", 2000, qwen);
    render(App);
    await vi.waitFor(() => expect(screen.getByTestId("model-switcher").textContent).toContain("qwen"));
    await send("Go on");
    await vi.waitFor(() => expect(ipc.llmStream).toHaveBeenCalled());
    expect(ipc.llmStream.mock.calls[0][3]).toEqual(qwen);
  });

  it("is stored when chosen, and forgotten when the settings' model is chosen again", async () => {
    seed("plain", 2000);
    render(App);
    const button = await screen.findByTestId("model-switcher");
    await vi.waitFor(() => expect(button.textContent).toContain("default-model"));
    await fireEvent.click(button);
    await vi.waitFor(() => expect(screen.getAllByTestId("model-option")).toHaveLength(2));
    await fireEvent.click(screen.getAllByTestId("model-option")[1]);
    expect(ipc.setConversationModel).toHaveBeenLastCalledWith("plain", qwen);
    expect(find("plain").summary.target).toEqual(qwen);

    await fireEvent.click(button);
    await fireEvent.click(screen.getByTestId("model-default"));
    expect(ipc.setConversationModel).toHaveBeenLastCalledWith("plain", null);
    expect(find("plain").summary.target).toBeUndefined();
  });

  it("chosen before a new conversation's first message is stored once the conversation is", async () => {
    render(App);
    const button = await screen.findByTestId("model-switcher");
    await vi.waitFor(() => expect(button.textContent).toContain("default-model"));
    await fireEvent.click(button);
    await vi.waitFor(() => expect(screen.getAllByTestId("model-option")).toHaveLength(2));
    await fireEvent.click(screen.getAllByTestId("model-option")[1]);
    expect(ipc.setConversationModel).not.toHaveBeenCalled();
    await send("Hello");
    await vi.waitFor(() => expect(ipc.setConversationModel).toHaveBeenCalledWith("new", qwen));
  });
});
