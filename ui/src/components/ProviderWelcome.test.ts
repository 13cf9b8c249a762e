// The first run with no model: the welcome card in the chat opens Settings
// and uses a detected local server in one click; it stays away once a
// model can be reached; the header's label follows the settings at once.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import type { Settings, SettingsInput } from "../lib/types";
import ModelSwitcher from "./ModelSwitcher.svelte";
import ProviderWelcome from "./ProviderWelcome.svelte";

const firstRun = { provider: "anthropic", base_url: "https://api.anthropic.com", model: "claude-sonnet-4-5", max_tokens: 8192, mode: "ask", notifications: true, has_api_key: false } as Settings;

function source(settings: Settings) {
  let saved = settings;
  return {
    getSettings: vi.fn(async () => saved),
    detectLocalServers: vi.fn(async () => [
      { name: "llama.cpp or LocalAI", base_url: "http://127.0.0.1:8080/v1", models: ["smollm2"] },
      { name: "Jan", base_url: "http://127.0.0.1:1337/v1", models: ["qwen3-4b", "llama3.2-3b"] },
    ]),
    modelInfo: vi.fn(async () => ({ context_window: 4096, source: "server" })),
    saveSettings: vi.fn(async (input: SettingsInput) => {
      saved = { ...saved, ...input, has_api_key: false };
      return saved;
    }),
    listModels: vi.fn(async () => []),
  };
}

describe("ProviderWelcome", () => {
  it("with no key for a hosted provider, offers Settings and each detected model in one click", async () => {
    const src = source(firstRun);
    const onSettings = vi.fn();
    const onSaved = vi.fn();
    render(ProviderWelcome, { props: { source: src as never, onSettings, onSaved } });
    await vi.waitFor(() => expect(screen.getAllByTestId("provider-welcome-use")).toHaveLength(3));
    expect(screen.getAllByTestId("provider-welcome-use").map((b) => b.textContent)).toEqual(["Use smollm2", "Use qwen3-4b", "Use llama3.2-3b"]);
    await fireEvent.click(screen.getByTestId("provider-welcome-settings"));
    expect(onSettings).toHaveBeenCalledTimes(1);

    await fireEvent.click(screen.getAllByTestId("provider-welcome-use")[1]);
    await vi.waitFor(() => expect(onSaved).toHaveBeenCalledTimes(1));
    // Max tokens fitted to the 4,096 window the server reports, the rest kept.
    expect(src.saveSettings).toHaveBeenCalledWith({ provider: "openai", base_url: "http://127.0.0.1:1337/v1", model: "qwen3-4b", max_tokens: 1024, mode: "ask", notifications: true });
    // A local server needs no key: the card goes.
    await vi.waitFor(() => expect(screen.queryByTestId("provider-welcome")).toBeNull());
  });

  it("is not shown when a key is saved or the server is local", async () => {
    for (const settings of [{ ...firstRun, has_api_key: true }, { ...firstRun, provider: "openai", base_url: "http://127.0.0.1:8080/v1" }] as Settings[]) {
      const src = source(settings);
      const { unmount } = render(ProviderWelcome, { props: { source: src as never, onSettings: vi.fn(), onSaved: vi.fn() } });
      await vi.waitFor(() => expect(src.getSettings).toHaveBeenCalled());
      await Promise.resolve();
      expect(screen.queryByTestId("provider-welcome")).toBeNull();
      expect(src.detectLocalServers).not.toHaveBeenCalled();
      unmount();
    }
  });

  it("says so when no local server answers", async () => {
    const src = source(firstRun);
    src.detectLocalServers.mockResolvedValue([]);
    render(ProviderWelcome, { props: { source: src as never, onSettings: vi.fn(), onSaved: vi.fn() } });
    await vi.waitFor(() => expect(screen.getByTestId("provider-welcome").textContent).toContain("No model server answers"));
  });
});

describe("the header's model label", () => {
  it("follows the settings when they change", async () => {
    const src = source({ ...firstRun, has_api_key: true });
    const view = render(ModelSwitcher, { props: { target: null, onChange: vi.fn(), source: src as never, refresh: 0 } });
    await vi.waitFor(() => expect(screen.getByTestId("model-switcher").textContent).toContain("claude-sonnet-4-5"));
    await src.saveSettings({ provider: "openai", base_url: "http://127.0.0.1:8080/v1", model: "smollm2", max_tokens: 1024, mode: "ask", notifications: true });
    await view.rerender({ target: null, onChange: vi.fn(), source: src as never, refresh: 1 });
    await vi.waitFor(() => expect(screen.getByTestId("model-switcher").textContent).toContain("smollm2"));
  });
});
