// A detected local server is the configured one when requests would go to
// the same place: Ollama's native API and its `/v1` are one server.
import { describe, expect, it } from "vitest";
import { isConfiguredServer } from "./serverAddress";

const ollama = { name: "Ollama", base_url: "http://127.0.0.1:11434/v1", models: ["qwen3:8b"] };
const llama = { name: "llama.cpp or LocalAI", base_url: "http://127.0.0.1:8080/v1", models: ["qwen"] };

describe("isConfiguredServer", () => {
  it("takes Ollama's /v1 for the Ollama provider at the same origin, also when the base URL is left empty", () => {
    for (const base_url of ["", "http://127.0.0.1:11434", "http://127.0.0.1:11434/", "http://localhost:11434", "http://127.0.0.1:11434/v1"]) {
      expect(isConfiguredServer(ollama, { provider: "ollama", base_url }), base_url).toBe(true);
    }
    expect(isConfiguredServer(llama, { provider: "ollama", base_url: "" })).toBe(false);
    expect(isConfiguredServer(ollama, { provider: "ollama", base_url: "http://10.0.0.5:11434" })).toBe(false);
  });

  it("takes the same base URL for an OpenAI-compatible provider, and none for Anthropic", () => {
    expect(isConfiguredServer(llama, { provider: "openai", base_url: "http://127.0.0.1:8080/v1/" })).toBe(true);
    expect(isConfiguredServer(ollama, { provider: "openai", base_url: "http://127.0.0.1:8080/v1" })).toBe(false);
    expect(isConfiguredServer(ollama, { provider: "anthropic", base_url: "" })).toBe(false);
  });
});
