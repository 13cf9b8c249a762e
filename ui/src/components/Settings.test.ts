// Settings and the model's context: the window set for servers that report
// none, and what a successful Test connection says of the window and tools.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { Settings } from "../lib/types";

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
});

import SettingsView from "./Settings.svelte";

const saved: Settings = { provider: "openai", base_url: "http://127.0.0.1:8080/v1", model: "qwen", max_tokens: 4096, mode: "ask", notifications: true, has_api_key: false };

beforeEach(() => {
  vi.clearAllMocks();
  ipc.getSettings.mockResolvedValue(saved);
  ipc.saveSettings.mockImplementation(async (input: Record<string, unknown>) => ({ ...saved, ...input, has_api_key: false }));
  ipc.testConnection.mockResolvedValue({ ok: true, model: "qwen" });
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
    expect(status).toContain("--jinja");
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
