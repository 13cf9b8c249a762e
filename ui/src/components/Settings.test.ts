// Settings and the model's context: the window set for servers that report
// none, and what a successful Test connection says of the window and tools;
// and the sandbox's limits, read only, as the Rust core answers them.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { SandboxLimits, Settings } from "../lib/types";

vi.mock("../lib/ipc", () => import("../test/ipcMock").then((m) => m.ipcModule()));
import { ipc as client } from "../lib/ipc";
import { answer } from "../test/ipcMock";

const ipc = answer(client, {
  getSettings: vi.fn(),
  saveSettings: vi.fn(),
  testConnection: vi.fn(),
  modelInfo: vi.fn(),
  detectLocalServers: vi.fn(async () => []),
  projectInfo: vi.fn(async () => null),
  mcpSettings: vi.fn(async () => ({ servers: [], secrets_set: [] })),
  mcpStatus: vi.fn(async () => []),
  sandboxLimits: vi.fn(),
});

import SettingsView from "./Settings.svelte";

const GIB = 1024 ** 3;
/** What the Rust core answers on a machine of 15.6 GiB (its budget three quarters of that). */
const limits: SandboxLimits = {
  processes: 4096,
  memory_bytes: 8 * GIB,
  file_size_bytes: 16 * GIB,
  open_files: 16384,
  tmp_bytes: 2 * GIB,
  budget_processes: 8192,
  budget_memory_bytes: 12_562_779_750,
  caches_bytes: 20 * GIB,
};

const saved: Settings = { provider: "openai", base_url: "http://127.0.0.1:8080/v1", model: "qwen", max_tokens: 4096, mode: "ask", notifications: true, has_api_key: false };

beforeEach(() => {
  vi.clearAllMocks();
  ipc.getSettings.mockResolvedValue(saved);
  ipc.saveSettings.mockImplementation(async (input: Record<string, unknown>) => ({ ...saved, ...input, has_api_key: false }));
  ipc.testConnection.mockResolvedValue({ ok: true, model: "qwen" });
  ipc.sandboxLimits.mockResolvedValue(limits);
});

async function shown(): Promise<void> {
  render(SettingsView, { props: { onClose: () => {} } });
  await vi.waitFor(() => expect((screen.getByTestId("settings-model") as HTMLInputElement).value).toBe("qwen"));
}

async function testConnection(): Promise<string> {
  await fireEvent.click(screen.getByTestId("settings-test"));
  return (await screen.findByTestId("settings-status")).textContent ?? "";
}

describe("the context window setting", () => {
  it("is empty by default, saved when set, and left out when cleared", async () => {
    await shown();
    const field = screen.getByTestId("settings-context-window") as HTMLInputElement;
    expect(field.value).toBe("");
    expect(field.placeholder).toBe("32,768 tokens");
    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledTimes(1));
    expect(ipc.saveSettings.mock.calls[0][0]).not.toHaveProperty("context_window");

    await fireEvent.input(field, { target: { value: "16384" } });
    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledTimes(2));
    expect(ipc.saveSettings.mock.calls[1][0]).toMatchObject({ context_window: 16_384, max_tokens: 4096 });
    // Asked with the form as shown: the server's answer falls back to this window.
    ipc.modelInfo.mockResolvedValue({ context_window: 16_384, source: "settings" });
    expect(await testConnection()).toContain("The server does not say its context window: 16,384 tokens, as set here, are assumed.");
    expect(ipc.modelInfo).toHaveBeenLastCalledWith(expect.objectContaining({ context_window: 16_384 }));
  });

  it("shows a saved window", async () => {
    ipc.getSettings.mockResolvedValue({ ...saved, context_window: 65_536 });
    render(SettingsView, { props: { onClose: () => {} } });
    await vi.waitFor(() => expect((screen.getByTestId("settings-context-window") as HTMLInputElement).value).toBe("65536"));
  });
});

describe("the tasks at once setting", () => {
  it("is empty by default (half the cores), saved when set, and shown when saved", async () => {
    await shown();
    const field = screen.getByTestId("settings-tasks-at-once") as HTMLInputElement;
    expect(field.value).toBe("");
    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledTimes(1));
    expect(ipc.saveSettings.mock.calls[0][0]).not.toHaveProperty("tasks_at_once");
    await fireEvent.input(field, { target: { value: "3" } });
    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledTimes(2));
    expect(ipc.saveSettings.mock.calls[1][0]).toMatchObject({ tasks_at_once: 3 });
  });
});

describe("the language servers' folders", () => {
  it("are left out when none is given, and saved one a line", async () => {
    await shown();
    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledTimes(1));
    expect(ipc.saveSettings.mock.calls[0][0]).not.toHaveProperty("language_server_folders");
    await fireEvent.input(screen.getByTestId("settings-server-folders"), { target: { value: " /opt/nvm/bin \n\n/home/me/.volta/bin" } });
    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledTimes(2));
    expect(ipc.saveSettings.mock.calls[1][0].language_server_folders).toEqual(["/opt/nvm/bin", "/home/me/.volta/bin"]);
  });
});

describe("a task's container", () => {
  it("is left out without an image, and saved with its limits and options", async () => {
    await shown();
    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledTimes(1));
    expect(ipc.saveSettings.mock.calls[0][0]).not.toHaveProperty("task_container");
    await fireEvent.input(screen.getByTestId("settings-container-image"), { target: { value: " corral-task:1 " } });
    await fireEvent.input(screen.getByTestId("settings-container-memory"), { target: { value: "2048" } });
    await fireEvent.input(screen.getByTestId("settings-container-options"), { target: { value: "--ulimit=nofile=20000:20000\n\n" } });
    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledTimes(2));
    expect(ipc.saveSettings.mock.calls[1][0].task_container).toEqual({
      engine: "podman",
      image: "corral-task:1",
      memory_mib: 2048,
      options: ["--ulimit=nofile=20000:20000"],
    });
  });

  it("is saved with the project's toolchain instead of an image", async () => {
    await shown();
    await fireEvent.change(screen.getByTestId("settings-container-toolchain"), { target: { value: "devcontainer" } });
    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledTimes(1));
    expect(ipc.saveSettings.mock.calls[0][0].task_container).toEqual({ engine: "podman", image: "", toolchain: "devcontainer", options: [] });
    await fireEvent.change(screen.getByTestId("settings-container-toolchain"), { target: { value: "dockerfile" } });
    await fireEvent.input(screen.getByTestId("settings-toolchain-value"), { target: { value: " ci/Dockerfile " } });
    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledTimes(2));
    expect(ipc.saveSettings.mock.calls[1][0].task_container?.toolchain).toEqual({ dockerfile: "ci/Dockerfile" });
  });
});

describe("a task's place in Kubernetes", () => {
  it("is saved with its namespace, context and kind, and no toolchain or engine words", async () => {
    await shown();
    await fireEvent.change(screen.getByTestId("settings-container-toolchain"), { target: { value: "devcontainer" } });
    await fireEvent.change(screen.getByTestId("settings-container-engine"), { target: { value: "kubernetes" } });
    expect(screen.queryByTestId("settings-container-toolchain")).toBeNull();
    expect(screen.queryByTestId("settings-container-options")).toBeNull();
    await fireEvent.input(screen.getByTestId("settings-container-image"), { target: { value: " registry.example/corral-task:1 " } });
    await fireEvent.input(screen.getByTestId("settings-kube-namespace"), { target: { value: " agents " } });
    await fireEvent.change(screen.getByTestId("settings-kube-kind"), { target: { value: "sandbox" } });
    await fireEvent.input(screen.getByTestId("settings-container-cpus"), { target: { value: "2" } });
    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledTimes(1));
    expect(ipc.saveSettings.mock.calls[0][0].task_container).toEqual({
      engine: "kubernetes",
      image: "registry.example/corral-task:1",
      cpus: 2,
      options: [],
      kube: { namespace: "agents", kind: "sandbox" },
    });
    await fireEvent.input(screen.getByTestId("settings-kube-context"), { target: { value: "work" } });
    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledTimes(2));
    expect(ipc.saveSettings.mock.calls[1][0].task_container?.kube).toEqual({ namespace: "agents", context: "work", kind: "sandbox" });
  });
});

describe("a successful Test connection", () => {
  it("says the window the server reports", async () => {
    ipc.modelInfo.mockResolvedValue({ context_window: 8192, source: "server", supports_tools: true });
    await shown();
    const status = await testConnection();
    expect(status).toContain("Connected: qwen answered.");
    expect(status).toContain("Context window: 8,192 tokens.");
    expect(status).not.toContain("cannot call tools");
    expect(ipc.saveSettings).not.toHaveBeenCalled();
  });

  it("says when the model cannot call tools", async () => {
    ipc.modelInfo.mockResolvedValue({ context_window: 4096, source: "server", supports_tools: false });
    await shown();
    const status = await testConnection();
    expect(status).toContain("Context window: 4,096 tokens. That is small");
    expect(status).toContain("llama-server -c 16384");
    expect(status).toContain("cannot call tools");
    // A server already run with --jinja may still have a template without tools.
    expect(status).toContain("--chat-template-file");
  });

  it("says the window assumed when the server says none", async () => {
    ipc.modelInfo.mockResolvedValue({});
    await shown();
    expect(await testConnection()).toContain("The server does not say its context window: 32,768 tokens are assumed.");
  });
});

describe("before the saved settings arrive", () => {
  it("the form is disabled, so nothing typed is overwritten and the defaults are never saved", async () => {
    let arrive: (settings: Settings) => void = () => {};
    ipc.getSettings.mockReturnValue(new Promise<Settings>((resolve) => (arrive = resolve)));
    render(SettingsView, { props: { onClose: () => {} } });
    const fields = screen.getByTestId("settings-fields") as HTMLFieldSetElement;
    const save = screen.getByTestId("settings-save") as HTMLButtonElement;
    expect(fields.disabled).toBe(true);
    expect(save.disabled).toBe(true);
    expect((screen.getByTestId("settings-test") as HTMLButtonElement).disabled).toBe(true);
    expect((screen.getByTestId("settings-close") as HTMLButtonElement).disabled).toBe(false);
    await fireEvent.submit(save.form as HTMLFormElement);
    expect(ipc.saveSettings).not.toHaveBeenCalled();

    // The focus is in the dialog meanwhile, on no disabled field.
    expect(screen.getByTestId("settings").contains(document.activeElement)).toBe(true);
    expect((document.activeElement as HTMLElement).matches(":disabled")).toBe(false);

    arrive({ ...saved, notifications: false });
    await vi.waitFor(() => expect(fields.disabled).toBe(false));
    await vi.waitFor(() => expect(document.activeElement).toBe(screen.getByTestId("settings-provider")));
    expect(save.disabled).toBe(false);
    expect((screen.getByTestId("settings-notifications") as HTMLInputElement).checked).toBe(false);
  });
});

describe("the provider list", () => {
  it("leaves no base URL of another provider: Ollama gets its default, the saved provider its saved URL", async () => {
    await shown();
    const provider = screen.getByTestId("settings-provider") as HTMLSelectElement;
    const base = screen.getByTestId("settings-base-url") as HTMLInputElement;
    expect(base.value).toBe("http://127.0.0.1:8080/v1");
    await fireEvent.change(provider, { target: { value: "ollama" } });
    expect(base.value).toBe("");
    expect(base.placeholder).toBe("http://127.0.0.1:11434");
    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledTimes(1));
    expect(ipc.saveSettings.mock.calls[0][0]).toMatchObject({ provider: "ollama", base_url: "" });
  });

  it("shows the saved URL again when the saved provider is chosen back", async () => {
    await shown();
    const provider = screen.getByTestId("settings-provider") as HTMLSelectElement;
    const base = screen.getByTestId("settings-base-url") as HTMLInputElement;
    await fireEvent.change(provider, { target: { value: "anthropic" } });
    expect(base.value).toBe("");
    expect(base.placeholder).toBe("https://api.anthropic.com");
    await fireEvent.change(provider, { target: { value: "openai" } });
    expect(base.value).toBe("http://127.0.0.1:8080/v1");
  });
});

describe("the sandbox limits", () => {
  const row = (key: string): string => screen.getByTestId(`sandbox-limit-${key}`).textContent ?? "";

  it("shows what Rust answers, in human units, each with what happens at the limit", async () => {
    await shown();
    const section = await screen.findByTestId("sandbox-limits");
    expect(section.querySelector("legend")?.textContent).toBe("Sandbox limits");
    expect(ipc.sandboxLimits).toHaveBeenCalledTimes(1);
    expect(row("processes")).toContain("Processes: 4,096");
    expect(row("processes")).toContain("a fork fails");
    expect(row("memory")).toContain("Memory: 8 GiB");
    expect(row("memory")).toContain("the command is stopped");
    expect(row("file-size")).toContain("File size: 16 GiB");
    expect(row("file-size")).toContain("A write past it fails");
    expect(row("open-files")).toContain("Open files: 16,384");
    expect(row("tmp")).toContain("Temporary space: 2 GiB each for TMPDIR and /tmp");
    expect(row("tmp")).toContain("out of space");
    expect(row("budget-processes")).toContain("Processes: 8,192");
    expect(row("budget-processes")).toContain("a fork fails");
    expect(row("budget-memory")).toContain("Memory: 11.7 GiB");
    expect(row("budget-memory")).toContain("a command is stopped");
    expect(row("caches")).toContain("Package caches: 20 GiB");
    expect(row("caches")).toContain("read-only to the next commands");
    // Read only: nothing in it can be changed or saved.
    expect(section.querySelectorAll("input, select, textarea, button")).toHaveLength(0);
  });

  it("follows other numbers: MiB under a GiB, and no memory budget where the machine's memory is unknown", async () => {
    ipc.sandboxLimits.mockResolvedValue({ ...limits, tmp_bytes: 512 * 1024 ** 2, processes: 64, budget_memory_bytes: null });
    await shown();
    await screen.findByTestId("sandbox-limits");
    expect(row("tmp")).toContain("512 MiB each");
    expect(row("processes")).toContain("Processes: 64");
    expect(row("budget-memory")).toContain("none (the machine's memory could not be read)");
  });

  it("is left out when the limits cannot be read, and the rest of Settings still works", async () => {
    ipc.sandboxLimits.mockRejectedValue(new Error("no"));
    await shown();
    await vi.waitFor(() => expect(ipc.sandboxLimits).toHaveBeenCalled());
    expect(screen.queryByTestId("sandbox-limits")).toBeNull();
    await fireEvent.click(screen.getByTestId("settings-save"));
    await vi.waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledTimes(1));
  });
});
