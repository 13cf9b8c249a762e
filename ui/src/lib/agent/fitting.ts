// What cannot fit is made to fit before it is sent, never after a failure:
// a fresh tool result larger than its share of the window is cut (head and
// tail) with a note saying how to read the rest, and a fixed prefix that
// leaves no room at all is said once, with what to do.
import { wireError } from "../errors";
import type { Message, ToolResultBlock, WireError } from "../types";
import { COMPACT_AT, replyFloor } from "./context";
import { count } from "../format";

/** The fewest tokens the conversation must have beside the fixed prefix and the reply. */
export const MIN_CONVERSATION_TOKENS = 256;

/**
 * The most characters one tool result may hold: half of what the window
 * leaves below its compaction mark once the fixed prefix is in, so that
 * the result, the message before it and the reply fit together.
 */
export function resultShare(window: number, prefixTokens: number, charsPerToken: number): number {
  const room = Math.max(0, Math.floor(window * COMPACT_AT) - prefixTokens);
  return Math.max(400, Math.floor((room / 2) * charsPerToken));
}

/** How a cut result's note starts (a result cut once is not cut again). */
export const CUT_NOTE = "characters left out to fit the context window";

/**
 * The transcript with every tool result over `maxChars` cut to its head and
 * tail and a note in the middle. Returns the same array when nothing was cut.
 * Messages `sent` says were sent already stay as they were (the server's
 * prompt cache holds them; a share that shrank as the estimate learned must
 * not change them).
 */
export function cutLargeResults(messages: Message[], maxChars: number, sent: (message: Message) => boolean = () => false): Message[] {
  let changed = false;
  const out = messages.map((message) => {
    if (message.role !== "user" || sent(message) || !message.content.some((b) => b.type === "tool_result" && b.content.length > maxChars)) return message;
    changed = true;
    return { ...message, content: message.content.map((b) => (b.type === "tool_result" && b.content.length > maxChars ? cutResult(b, maxChars) : b)) };
  });
  return changed ? out : messages;
}

function cutResult(block: ToolResultBlock, maxChars: number): ToolResultBlock {
  const note = (cut: number) =>
    `\n[... ${cut} ${CUT_NOTE}. Read the rest in parts: read_file with start_line and end_line, web_fetch with offset, command_output with since_byte, or a narrower search or command ...]\n`;
  const keep = Math.max(0, maxChars - note(block.content.length).length);
  const head = Math.ceil(keep * 0.6);
  const tail = keep - head;
  const cut = block.content.length - head - tail;
  return { ...block, content: block.content.slice(0, head) + note(cut) + (tail > 0 ? block.content.slice(-tail) : "") };
}

/**
 * Null when the fixed prefix leaves the conversation room in the window;
 * else the error to show before anything is sent, with what to do.
 */
export function prefixTooLarge(window: number, prefixTokens: number): WireError | null {
  if (window - prefixTokens - replyFloor(window) >= MIN_CONVERSATION_TOKENS) return null;
  const size = count;
  return wireError(
    "llm_context_overflow",
    `The model's context window (${size(window)} tokens) cannot hold Corral's fixed prompt (about ${size(prefixTokens)} tokens: the system prompt, the project's instructions and the tools) and a message, so nothing was sent.`,
    "Give the model a larger window: start llama.cpp with `llama-server -c 8192`, set `num_ctx` for Ollama (`/set parameter num_ctx 8192`, or `PARAMETER num_ctx 8192` in a Modelfile), or raise the context length in LM Studio; then send again.",
    { context_window: window, prompt_tokens: prefixTokens },
  );
}
