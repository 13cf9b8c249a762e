// Reading what the app sent the scripted model, the same way for both wire
// formats.

/** Text of a message's content (a string, or blocks with `text`). */
function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((b) => (typeof b === "string" ? b : (b.text ?? ""))).join("");
  return "";
}

/**
 * The tool results in a request: OpenAI-compatible `role: "tool"` messages
 * or Anthropic `tool_result` blocks, as `{ tool_use_id, content, is_error }`
 * with `content` as text.
 */
export function toolResults(request) {
  const out = [];
  for (const message of request.body?.messages ?? []) {
    if (message.role === "tool") {
      out.push({ tool_use_id: message.tool_call_id, content: textOf(message.content), is_error: undefined });
    }
    if (message.role === "user" && Array.isArray(message.content)) {
      for (const block of message.content) {
        if (block.type === "tool_result") {
          out.push({ tool_use_id: block.tool_use_id, content: textOf(block.content), is_error: block.is_error });
        }
      }
    }
  }
  return out;
}

/** The conversation in a request as `[role, text]` pairs (system prompt and tool plumbing left out). */
export function dialogue(request) {
  return (request.body?.messages ?? [])
    .filter((m) => m.role === "user" || m.role === "assistant")
    .map((m) => [m.role, textOf(m.content)])
    .filter(([, text]) => text !== "");
}

/** Names of the tools offered in a request (both formats). */
export function toolNames(request) {
  return (request.body?.tools ?? []).map((t) => t.function?.name ?? t.name);
}
