import { describe, expect, it } from "vitest";
import { windowReport } from "./connectionReport";

describe("windowReport", () => {
  it("says the window Ollama runs the model with, capped by what the model holds", () => {
    const info = { context_window: 40_960, source: "settings", max_context_window: 40_960 };
    expect(windowReport(info, "ollama", 131_072)).toBe(" Context window: 40,960 tokens, sent to Ollama as num_ctx (131,072 were asked; the model holds at most 40,960).");
  });

  it("offers Ollama's room when the window sent is below the model's", () => {
    const info = { context_window: 4096, source: "server", max_context_window: 131_072 };
    expect(windowReport(info, "ollama", null)).toBe(
      " Context window: 4,096 tokens, sent to Ollama as num_ctx. That is small: Corral sends a short prompt with the core tools only and reads long text in parts. The model holds up to 131,072: set a larger context window here for more room.",
    );
  });

  it("keeps the other servers' wording", () => {
    expect(windowReport({ context_window: 8192, source: "settings" }, "openai", 8192)).toBe(" The server does not say its context window: 8,192 tokens, as set here, are assumed.");
    expect(windowReport(null, "openai", null)).toBe(" The server does not say its context window: 32,768 tokens are assumed.");
    expect(windowReport({ context_window: 200_000, source: "known_model" }, "anthropic", null)).toBe(" Context window: 200,000 tokens.");
  });
});
