// Where a provider's requests go, as the Rust side reads a base URL: an
// empty one is the provider's default, and Ollama is reached at its origin
// (a base URL given with the OpenAI-compatible `/v1` names the same
// server). Used to tell whether a detected local server is the configured
// one, so it is not offered twice.
import type { LocalServer, Provider } from "./types";

/** Each provider's base URL when the settings leave it empty. */
export const DEFAULT_BASE_URL: Record<Provider, string> = {
  anthropic: "https://api.anthropic.com",
  openai: "https://api.openai.com/v1",
  ollama: "http://127.0.0.1:11434",
};

/** `base` without trailing slashes, or the provider's default when empty. */
function base(provider: Provider, url: string): string {
  const trimmed = url.trim().replace(/\/+$/, "");
  return trimmed === "" ? DEFAULT_BASE_URL[provider] : trimmed;
}

/** A base URL without an OpenAI-compatible `/v1` (or `/api`) at its end, `localhost` read as 127.0.0.1. */
function origin(url: string): string {
  return url.replace(/\/(v1|api)$/, "").replace(/^(https?:\/\/)localhost(?=[:/]|$)/i, "$1127.0.0.1");
}

/**
 * Whether the detected `server` (its OpenAI-compatible base URL) is the
 * one the settings already name: the same base URL for an
 * OpenAI-compatible provider, the same origin for Ollama.
 */
export function isConfiguredServer(server: LocalServer, settings: { provider: Provider; base_url: string }): boolean {
  const configured = base(settings.provider, settings.base_url);
  const detected = base("openai", server.base_url);
  switch (settings.provider) {
    case "openai":
      return detected === configured;
    case "ollama":
      return origin(detected) === origin(configured);
    case "anthropic":
      return false;
  }
}

/** Whether `baseUrl` is a server on this machine (one that needs no key). */
export function isLocal(baseUrl: string): boolean {
  try {
    const host = new URL(baseUrl).hostname;
    return host === "localhost" || host === "[::1]" || host.startsWith("127.");
  } catch {
    return false;
  }
}

/** Whether `settings` name a model that cannot answer yet: a hosted one with no key. */
export function needsKey(settings: { has_api_key: boolean; base_url: string }): boolean {
  return !settings.has_api_key && !isLocal(settings.base_url);
}
