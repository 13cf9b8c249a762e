import { DEFAULT_CONTEXT_WINDOW } from "./agent/context";
import { isSmallWindow, windowAdvice } from "./agent/promptBudget";
import type { ModelInfo, Provider } from "./types";
import { count } from "./format";

/** Ollama's context when none is set: what Corral then sends as `num_ctx`. */
export const OLLAMA_DEFAULT_WINDOW = 4096;

const tokens = count;

/**
 * What Test connection says of the context window: the server's, the one
 * assumed, or, for Ollama's own API, the one Corral sends as `num_ctx`
 * (capped by what the model can hold). `asked` is the window typed in
 * Settings, if any.
 */
export function windowReport(info: ModelInfo | null, provider: Provider, asked: number | null): string {
  const size = info?.context_window;
  if (provider === "ollama" && size) {
    const most = info?.max_context_window;
    const capped = asked !== null && most !== undefined && asked > most ? ` (${tokens(asked)} were asked; the model holds at most ${tokens(most)})` : "";
    const room = most !== undefined && most > size ? ` The model holds up to ${tokens(most)}: set a larger context window here for more room.` : "";
    const small = isSmallWindow(size) ? " That is small: Corral sends a short prompt with the core tools only and reads long text in parts." : "";
    return ` Context window: ${tokens(size)} tokens, sent to Ollama as num_ctx${capped}.${small}${room}`;
  }
  if (!size) return ` The server does not say its context window: ${tokens(asked || DEFAULT_CONTEXT_WINDOW)} tokens are assumed.`;
  if (info?.source === "settings") return ` The server does not say its context window: ${tokens(size)} tokens, as set here, are assumed.`;
  return ` Context window: ${tokens(size)} tokens.${windowAdvice(size)}`;
}
