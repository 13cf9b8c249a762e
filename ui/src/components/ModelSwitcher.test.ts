// The header's model switcher: the configured server's models and the local
// servers', the settings' model as the default, a typed name when the
// server lists none.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import type { LlmTarget, Settings } from "../lib/types";
import ModelSwitcher from "./ModelSwitcher.svelte";

const settings = {
  provider: "anthropic",
  base_url: "https://api.anthropic.com",
  model: "claude-sonnet-4-5",
  max_tokens: 8192,
  mode: "ask",
  has_api_key: true,
} as Settings;

function source(listModels: () => Promise<unknown>) {
  return {
    getSettings: vi.fn(async () => settings),
    listModels: vi.fn(listModels),
    detectLocalServers: vi.fn(async () => [
      { name: "Ollama", base_url: "http://127.0.0.1:11434/v1", models: ["qwen3:8b"] },
    ]),
  };
}

describe("ModelSwitcher", () => {
  it("shows the settings' model, lists the server's and local models, and picks one", async () => {
    const onChange = vi.fn();
    const src = source(async () => [{ id: "claude-haiku-4-5", display_name: "Claude Haiku 4.5" }, { id: "claude-sonnet-4-5" }]);
    render(ModelSwitcher, { props: { target: null, onChange, source: src as never } });
    const button = screen.getByTestId("model-switcher");
    await vi.waitFor(() => expect(button.textContent).toContain("claude-sonnet-4-5"));
    expect(button.getAttribute("aria-expanded")).toBe("false");

    await fireEvent.click(button);
    expect(button.getAttribute("aria-expanded")).toBe("true");
    await vi.waitFor(() => expect(screen.getAllByTestId("model-option")).toHaveLength(3));
    expect(src.listModels).toHaveBeenCalledWith();
    expect(screen.getByTestId("model-default").getAttribute("aria-pressed")).toBe("true");

    await fireEvent.click(screen.getAllByTestId("model-option")[0]);
    expect(onChange).toHaveBeenLastCalledWith({ provider: "anthropic", base_url: "https://api.anthropic.com", model: "claude-haiku-4-5" });
    expect(screen.queryByTestId("model-menu")).toBeNull();

    await fireEvent.click(button);
    await vi.waitFor(() => expect(screen.getAllByTestId("model-option")).toHaveLength(3));
    const local = screen.getAllByTestId("model-option").find((b) => b.dataset.baseUrl);
    await fireEvent.click(local!);
    expect(onChange).toHaveBeenLastCalledWith({ provider: "openai", base_url: "http://127.0.0.1:11434/v1", model: "qwen3:8b" });
  });

  it("writes an error and its hint as two sentences, not one run-on line", async () => {
    const error = {
      code: "llm_unavailable",
      message: "could not connect to `https://api.example.invalid/v1/models`: dns error: Name or service not known",
      hint: "Check the provider's base URL and your connection, then retry.",
      retryable: true,
      details: {},
    };
    render(ModelSwitcher, { props: { target: null, onChange: vi.fn(), source: source(() => Promise.reject(error)) as never } });
    await fireEvent.click(screen.getByTestId("model-switcher"));
    const shown = await screen.findByTestId("models-error");
    expect(shown.textContent).toBe(`${error.message}. ${error.hint}`);
    expect(shown.textContent).not.toContain("known Check");
  });

  it("names the conversation's choice and marks it", async () => {
    const target: LlmTarget = { provider: "anthropic", base_url: "https://api.anthropic.com", model: "claude-haiku-4-5" };
    render(ModelSwitcher, { props: { target, onChange: vi.fn(), source: source(async () => [{ id: "claude-haiku-4-5" }]) as never } });
    expect(screen.getByTestId("model-switcher").textContent).toContain("claude-haiku-4-5");
    await fireEvent.click(screen.getByTestId("model-switcher"));
    await vi.waitFor(() => expect(screen.getAllByTestId("model-option")[0].getAttribute("aria-pressed")).toBe("true"));
    expect(screen.getByTestId("model-default").getAttribute("aria-pressed")).toBe("false");
  });

  it("says when the server lists no models and takes a typed name", async () => {
    const onChange = vi.fn();
    const error = { code: "not_found", message: "the server at `x` does not list its models (HTTP 404)", hint: "Type the model's name instead.", retryable: false, details: {} };
    render(ModelSwitcher, { props: { target: null, onChange, source: source(() => Promise.reject(error)) as never } });
    await fireEvent.click(screen.getByTestId("model-switcher"));
    await vi.waitFor(() => expect(screen.getByTestId("models-error").textContent).toContain("does not list its models"));
    expect(screen.getByTestId("models-error").textContent).toContain("(HTTP 404). Type the model's name");
    const input = screen.getByLabelText("Model name");
    await fireEvent.input(input, { target: { value: " my-model " } });
    await fireEvent.click(screen.getByTestId("model-use"));
    expect(onChange).toHaveBeenLastCalledWith({ provider: "anthropic", base_url: "https://api.anthropic.com", model: "my-model" });
  });

  it("goes back to the settings' model and closes on Escape", async () => {
    const onChange = vi.fn();
    const target: LlmTarget = { provider: "openai", base_url: "http://127.0.0.1:11434/v1", model: "qwen3:8b" };
    render(ModelSwitcher, { props: { target, onChange, source: source(async () => []) as never } });
    await fireEvent.click(screen.getByTestId("model-switcher"));
    await fireEvent.keyDown(screen.getByTestId("model-menu"), { key: "Escape" });
    expect(screen.queryByTestId("model-menu")).toBeNull();
    await fireEvent.click(screen.getByTestId("model-switcher"));
    await fireEvent.click(screen.getByTestId("model-default"));
    expect(onChange).toHaveBeenLastCalledWith(null);
  });
});

describe("ModelSwitcher with Ollama set", () => {
  it("lists the detected Ollama server once: its /v1 is the configured server", async () => {
    const ollama = { ...settings, provider: "ollama", base_url: "", model: "qwen3:8b" } as Settings;
    const src = {
      getSettings: vi.fn(async () => ollama),
      listModels: vi.fn(async () => [{ id: "qwen3:8b" }, { id: "llama3.2:3b" }]),
      detectLocalServers: vi.fn(async () => [
        { name: "Ollama", base_url: "http://127.0.0.1:11434/v1", models: ["qwen3:8b", "llama3.2:3b"] },
        { name: "llama.cpp or LocalAI", base_url: "http://127.0.0.1:8080/v1", models: ["qwen"] },
      ]),
    };
    render(ModelSwitcher, { props: { target: null, onChange: vi.fn(), source: src as never } });
    await fireEvent.click(screen.getByTestId("model-switcher"));
    await vi.waitFor(() => expect(src.detectLocalServers).toHaveBeenCalled());
    await vi.waitFor(() => expect(screen.getAllByTestId("model-option").map((b) => b.dataset.model)).toEqual(["qwen3:8b", "llama3.2:3b", "qwen"]));
    expect(screen.getAllByTestId("model-option").filter((b) => b.dataset.baseUrl).map((b) => b.dataset.baseUrl)).toEqual(["http://127.0.0.1:8080/v1"]);
  });
});

describe("the header's model before a key is set", () => {
  it("says the hosted model is not set up rather than name it", async () => {
    const src = { ...source(async () => []), getSettings: vi.fn(async () => ({ ...settings, has_api_key: false })) };
    render(ModelSwitcher, { props: { target: null, onChange: vi.fn(), source: src as never } });
    const button = screen.getByTestId("model-switcher");
    await vi.waitFor(() => expect(button.textContent).toContain("not set up"));
    expect(button.textContent).not.toContain("claude-sonnet-4-5");
  });

  it("names a local server's model, which needs no key", async () => {
    const local = { ...settings, has_api_key: false, provider: "openai", base_url: "http://127.0.0.1:8080/v1", model: "qwen3" } as Settings;
    const src = { ...source(async () => []), getSettings: vi.fn(async () => local) };
    render(ModelSwitcher, { props: { target: null, onChange: vi.fn(), source: src as never } });
    await vi.waitFor(() => expect(screen.getByTestId("model-switcher").textContent).toContain("qwen3"));
  });
});
