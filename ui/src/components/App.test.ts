// The window's flow with the IPC module mocked at its one seam.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { Launch, Settings } from "../lib/types";

vi.mock("../lib/ipc", () => import("../test/ipcMock").then((m) => m.ipcModule()));
import { ipc as client } from "../lib/ipc";
import { answer } from "../test/ipcMock";

const ipc = answer(client, {
  projectInfo: vi.fn(),
  recentProjects: vi.fn(),
  openProject: vi.fn(),
  pickProject: vi.fn(),
  closeProject: vi.fn(),
  listConversations: vi.fn(),
  openConversation: vi.fn(),
  appendEntry: vi.fn(),
  historyNotice: vi.fn(),
  checkpointNotice: vi.fn(async () => null),
  searchConversations: vi.fn(),
  callTool: vi.fn(),
  setWindowTitle: vi.fn(),
  onLaunch: vi.fn(async () => () => undefined),
  getSettings: vi.fn(),
  saveSettings: vi.fn(),
  testConnection: vi.fn(),
  modelInfo: vi.fn(),
  detectLocalServers: vi.fn(),
  mcpSettings: vi.fn(async () => ({ servers: [], secrets_set: [] })),
  mcpStatus: vi.fn(async () => []),
});

import App from "../App.svelte";
import SettingsView from "./Settings.svelte";

const app = { root: "/home/me/app", name: "app" };

beforeEach(() => {
  vi.clearAllMocks();
  ipc.recentProjects.mockResolvedValue([app, { root: "/home/me/lib", name: "lib" }]);
  ipc.openProject.mockResolvedValue(app);
  ipc.listConversations.mockResolvedValue([]);
  ipc.historyNotice.mockResolvedValue(null);
  ipc.callTool.mockImplementation(async (_name, input) => ({
    path: input.path,
    entries: input.path === "." ? [{ path: "README.md", kind: "file", size: 10 }, { path: "invoice\u202Etxt.exe", kind: "file", size: 1 }, { path: "src", kind: "dir" }] : [{ path: "src/main.rs", kind: "file" }],
    truncated: false,
  }));
});

describe("App", () => {
  it("starts on the welcome screen and opens a recent project", async () => {
    ipc.projectInfo.mockResolvedValue(null);
    render(App);
    await vi.waitFor(() => expect(screen.getByTestId("welcome")).toBeTruthy());
    await vi.waitFor(() => expect(screen.getAllByTestId("recent-project")).toHaveLength(2));
    await fireEvent.click(screen.getAllByTestId("recent-project")[0]);
    expect(ipc.openProject).toHaveBeenCalledWith("/home/me/app");
    await vi.waitFor(() => expect(screen.getByTestId("project-name").textContent).toBe("app"));
    expect(ipc.setWindowTitle).toHaveBeenLastCalledWith("app — Corral");
    const tree = screen.getByTestId("file-tree");
    await vi.waitFor(() => expect(tree.textContent).toContain("README.md"));
    // A name's bidi override is a marker, not a reordering (`invoiceexe.txt`).
    expect([...tree.querySelectorAll(".file")].map((f) => f.textContent)).toEqual(["invoice⟨U+202E⟩txt.exe", "README.md"]);
    await fireEvent.click(screen.getByRole("button", { name: /src/ }));
    await vi.waitFor(() => expect(tree.textContent).toContain("main.rs"));
    expect(ipc.callTool).toHaveBeenCalledWith("list_directory", { path: "src", depth: 1 });
  });

  it("opens the folder of a later `corral FOLDER`, and says when it could not", async () => {
    ipc.projectInfo.mockResolvedValue(app);
    render(App);
    await vi.waitFor(() => expect(screen.getByTestId("project-name").textContent).toBe("app"));
    await vi.waitFor(() => expect(ipc.onLaunch).toHaveBeenCalledTimes(1));
    const launch = ipc.onLaunch.mock.calls[0][0] as (launch: Launch) => void;

    launch({ type: "opened", project: { root: "/home/me/lib", name: "lib" } });
    await vi.waitFor(() => expect(screen.getByTestId("project-name").textContent).toBe("lib"));
    expect(ipc.setWindowTitle).toHaveBeenLastCalledWith("lib — Corral");

    launch({
      type: "failed",
      folder: "/home/me/gone",
      error: { code: "not_found", message: "no such folder", hint: "check the path", retryable: false, details: {} },
    });
    const failure = await vi.waitFor(() => screen.getByTestId("launch-failure"));
    expect(failure.textContent).toContain("/home/me/gone");
    expect(failure.textContent).toContain("no such folder");
    expect(screen.getByTestId("project-name").textContent).toBe("lib");
    await fireEvent.click(screen.getByRole("button", { name: "Dismiss" }));
    expect(screen.queryByTestId("launch-failure")).toBeNull();
  });

  const remote = { root: "ssh://dev@box/srv/app", name: "dev@box:/srv/app" };
  const missing = {
    code: "approval_required",
    message: "corral-cli 0.1.0 is not on dev@box: it would be copied to /home/dev/.cache/corral/bin",
    hint: "",
    retryable: false,
    details: { folder: "/home/dev/.cache/corral/bin" },
  };

  it("opens a remote folder from the welcome screen, asking before corral-cli is copied there", async () => {
    ipc.projectInfo.mockResolvedValue(null);
    ipc.openProject.mockImplementation(async (_path: string, install?: boolean) => {
      if (install) return remote;
      throw missing;
    });
    render(App);
    const field = await vi.waitFor(() => screen.getByTestId("remote-folder"));
    await fireEvent.input(field, { target: { value: " dev@box:/srv/app " } });
    await fireEvent.click(screen.getByTestId("open-remote"));
    const question = await vi.waitFor(() => screen.getByTestId("install-remote"));
    expect(ipc.openProject).toHaveBeenCalledWith("dev@box:/srv/app");
    expect(question.textContent).toContain("Copy corral-cli to dev@box?");
    expect(screen.getByTestId("install-remote-folder").textContent).toBe("/home/dev/.cache/corral/bin");
    expect(ipc.openProject).toHaveBeenCalledTimes(1);

    await fireEvent.click(screen.getByTestId("install-remote-yes"));
    await vi.waitFor(() => expect(screen.getByTestId("project-name").textContent).toBe("dev@box:/srv/app"));
    expect(ipc.openProject).toHaveBeenLastCalledWith("dev@box:/srv/app", true);
    expect(ipc.setWindowTitle).toHaveBeenLastCalledWith("dev@box:/srv/app — Corral");
  });

  it("stays on the welcome screen and says why when the copy is declined", async () => {
    ipc.projectInfo.mockResolvedValue(null);
    ipc.recentProjects.mockResolvedValue([remote]);
    ipc.openProject.mockRejectedValue(missing);
    render(App);
    await vi.waitFor(() => expect(screen.getAllByTestId("recent-project")).toHaveLength(1));
    await fireEvent.click(screen.getAllByTestId("recent-project")[0]);
    await vi.waitFor(() => screen.getByTestId("install-remote"));
    expect(ipc.openProject).toHaveBeenCalledWith("ssh://dev@box/srv/app");
    await fireEvent.click(screen.getByTestId("install-remote-no"));
    const said = await vi.waitFor(() => screen.getByTestId("install-declined"));
    expect(said.textContent).toContain("corral-cli was not copied to dev@box");
    expect(screen.queryByTestId("install-remote")).toBeNull();
    expect(screen.getByTestId("welcome")).toBeTruthy();
    expect(ipc.openProject).toHaveBeenCalledTimes(1);
  });

  it("asks before copying corral-cli for a remote folder named on the command line", async () => {
    ipc.projectInfo.mockResolvedValue(null);
    ipc.openProject.mockResolvedValue(remote);
    render(App);
    await vi.waitFor(() => expect(ipc.onLaunch).toHaveBeenCalledTimes(1));
    const launch = ipc.onLaunch.mock.calls[0][0] as (launch: Launch) => void;
    launch({ type: "opening", folder: "ssh://dev@box/srv/app" });
    const opening = await vi.waitFor(() => screen.getByTestId("launch-opening"));
    expect(opening.textContent).toBe("Opening ssh://dev@box/srv/app…");
    launch({ type: "failed", folder: "ssh://dev@box/srv/app", error: missing as never });
    await vi.waitFor(() => expect(screen.queryByTestId("launch-opening")).toBeNull());
    await vi.waitFor(() => screen.getByTestId("install-remote"));
    expect(screen.queryByTestId("launch-failure")).toBeNull();
    await fireEvent.click(screen.getByTestId("install-remote-yes"));
    await vi.waitFor(() => expect(screen.getByTestId("project-name").textContent).toBe("dev@box:/srv/app"));
    expect(ipc.openProject).toHaveBeenCalledWith("ssh://dev@box/srv/app", true);
  });

  it("goes straight to a project given at start and restores its conversation", async () => {
    ipc.projectInfo.mockResolvedValue(app);
    const summary = { id: "c1", project: app.root, title: "fix the build", first_line: "fix the build", created_ms: 0, updated_ms: 0, model: "m", input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 0, entries: 2 };
    ipc.listConversations.mockResolvedValue([summary]);
    ipc.openConversation.mockResolvedValue({
      summary,
      entries: [
        { seq: 0, message: { role: "user", content: [{ type: "text", text: "fix the build" }] }, items: [{ kind: "user", id: "u1", text: "fix the build" }] },
        {
          seq: 1,
          message: { role: "assistant", content: [{ type: "text", text: "Fixed `src/main.rs`." }] },
          items: [{ kind: "assistant", id: "a1", text: "Fixed `src/main.rs`.", streaming: false }],
        },
      ],
    });
    render(App);
    await vi.waitFor(() => expect(screen.getByTestId("message-assistant").textContent).toContain("Fixed src/main.rs."));
    expect(screen.queryByTestId("welcome")).toBeNull();
    expect(screen.getByTestId("message-user").textContent).toBe("fix the build");
    expect(ipc.openConversation).toHaveBeenCalledWith("c1", { elideOver: 4096, last: 60 });
  });
});

describe("Settings", () => {
  const saved: Settings = { provider: "anthropic", base_url: "https://api.example", model: "claude-x", max_tokens: 4096, mode: "ask", notifications: true, has_api_key: true };

  beforeEach(() => {
    ipc.getSettings.mockResolvedValue(saved);
    ipc.saveSettings.mockImplementation(async (input: Record<string, unknown>) => ({ ...saved, ...input, has_api_key: input.api_key !== "" }));
    ipc.detectLocalServers.mockResolvedValue([{ name: "Ollama", base_url: "http://127.0.0.1:11434/v1", models: ["qwen3:8b"] }]);
    ipc.modelInfo.mockResolvedValue({});
  });

  it("never shows the key, saves it only when typed, and says a key is saved", async () => {
    render(SettingsView, { props: { onClose: () => {} } });
    await vi.waitFor(() => expect((screen.getByTestId("settings-model") as HTMLInputElement).value).toBe("claude-x"));
    const key = screen.getByTestId("settings-api-key") as HTMLInputElement;
    expect(key.type).toBe("password");
    expect(key.value).toBe("");
    expect(screen.getByTestId("settings-key-status").textContent).toBe("key saved");

    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledTimes(1));
    expect(ipc.saveSettings.mock.calls[0][0]).not.toHaveProperty("api_key");

    await fireEvent.input(key, { target: { value: "sk-secret" } });
    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledTimes(2));
    expect(ipc.saveSettings.mock.calls[1][0]).toMatchObject({ api_key: "sk-secret", model: "claude-x", mode: "ask" });
    await vi.waitFor(() => expect(key.value).toBe(""));
  });

  it("speaks of a saved key only for the server it was saved for", async () => {
    render(SettingsView, { props: { onClose: () => {} } });
    await vi.waitFor(() => expect(screen.getByTestId("settings-key-status").textContent).toBe("key saved"));
    expect(screen.getByRole("button", { name: "Remove key" })).toBeTruthy();
    await vi.waitFor(() => expect(screen.getByRole("button", { name: "Use qwen3:8b" })).toBeTruthy());
    await fireEvent.click(screen.getByRole("button", { name: "Use qwen3:8b" }));
    expect(screen.getByTestId("settings-key-status").textContent).toContain("save to see");
    expect(screen.queryByRole("button", { name: "Remove key" })).toBeNull();
  });

  it("picks a detected local server, fits max tokens to its window, and tests without saving", async () => {
    ipc.modelInfo.mockResolvedValue({ context_window: 4096, source: "server" });
    ipc.testConnection.mockRejectedValue({ code: "llm_auth", message: "401 Unauthorized", hint: "Check the API key.", retryable: false, details: {} });
    render(SettingsView, { props: { onClose: () => {} } });
    await vi.waitFor(() => expect(screen.getByRole("button", { name: "Use qwen3:8b" })).toBeTruthy());
    await fireEvent.click(screen.getByRole("button", { name: "Use qwen3:8b" }));
    expect((screen.getByTestId("settings-provider") as HTMLSelectElement).value).toBe("openai");
    expect((screen.getByTestId("settings-base-url") as HTMLInputElement).value).toBe("http://127.0.0.1:11434/v1");
    // The server runs the model with 4,096 tokens: a reply may not take 4,096 of them.
    await vi.waitFor(() => expect((screen.getByTestId("settings-max-tokens") as HTMLInputElement).value).toBe("1024"));
    expect(ipc.modelInfo).toHaveBeenCalledWith(expect.objectContaining({ base_url: "http://127.0.0.1:11434/v1", model: "qwen3:8b" }));
    await fireEvent.click(screen.getByTestId("settings-test"));
    await vi.waitFor(() => expect(screen.getByTestId("error-code").textContent).toBe("llm_auth"));
    expect(ipc.testConnection).toHaveBeenCalledWith(expect.objectContaining({ provider: "openai", model: "qwen3:8b", max_tokens: 1024 }));
    // A failed test leaves the saved settings as they were.
    expect(ipc.saveSettings).not.toHaveBeenCalled();
    expect(screen.getByTestId("error-hint").textContent).toContain("Check the API key.");
  });

  it("keeps keyboard focus inside while open, closes on Esc, and gives focus back to its opener", async () => {
    ipc.projectInfo.mockResolvedValue(null);
    render(App);
    await vi.waitFor(() => expect(screen.getByTestId("welcome")).toBeTruthy());
    const opener = screen.getByRole("button", { name: "Settings" });
    opener.focus();
    await fireEvent.click(opener);
    const dialog = await vi.waitFor(() => screen.getByTestId("settings"));
    const first = screen.getByTestId("settings-provider");
    // The last control of the dialog (Close ends its footer).
    await screen.findByTestId("mcp-add");
    const controls = [...dialog.querySelectorAll<HTMLElement>("button, input, select, textarea")];
    const last = controls.filter((c) => !(c as HTMLButtonElement).disabled).at(-1) as HTMLElement;
    expect(last).toBe(screen.getByTestId("settings-close"));
    expect(document.activeElement).toBe(first);

    last.focus();
    await fireEvent.keyDown(last, { key: "Tab" });
    expect(document.activeElement).toBe(first);
    await fireEvent.keyDown(first, { key: "Tab", shiftKey: true });
    expect(document.activeElement).toBe(last);

    // Focus that escapes (here: to the app behind the dialog) is pulled back
    // to the field the user was in, not to the provider list.
    const model = screen.getByTestId("settings-model");
    model.focus();
    screen.getByTestId("open-folder").focus();
    expect(dialog.contains(document.activeElement)).toBe(true);
    expect(document.activeElement).toBe(model);

    await fireEvent.keyDown(document.activeElement ?? document.body, { key: "Escape" });
    await vi.waitFor(() => expect(screen.queryByTestId("settings")).toBeNull());
    expect(document.activeElement).toBe(opener);
  });
});
