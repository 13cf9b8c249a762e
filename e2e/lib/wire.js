// The streaming wire formats the scripted LLM server speaks, built as
// lists of server-sent events: OpenAI-compatible Chat Completions chunks
// and Anthropic Messages events, as the real services send them, and
// Ollama's native stream (its lines, one JSON object each).
//
// A response is `{ format, status, headers, json }` (one JSON body) or
// `{ format, status, headers, events: [{ event?, data, delay? }] }` (SSE;
// `delay` is milliseconds to wait before the event).

const GAP = 15; // ms between events, so the app really sees a stream

/** The same response with `ms` between its events (a slow model). */
export function slow(response, ms) {
  return { ...response, events: response.events.map((e) => ({ ...e, delay: ms })) };
}

/** Splits `text` into about `n` pieces (tool arguments arrive in pieces). */
export function pieces(text, n = 3) {
  const size = Math.max(1, Math.ceil(text.length / n));
  const out = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [""];
}

let counter = 0;
/** A fresh tool-call id in the provider's style. */
export function callId(prefix) {
  counter += 1;
  return `${prefix}_e2e${String(counter).padStart(4, "0")}`;
}

export const openai = {
  /** A streamed assistant reply with only text, in `parts` chunks. */
  text(text, { parts = 4 } = {}) {
    return sse("openai", [
      ...openaiStart(),
      ...pieces(text, parts).map((content) => openaiChunk({ content })),
      ...openaiFinish("stop"),
    ]);
  },

  /**
   * A streamed reply with tool calls, `calls` = [{ name, input, id? }];
   * each call's arguments are split over several chunks. Returns the
   * response with `ids` (the call ids, in order) for later assertions.
   */
  toolCalls(calls, { text = "", finish = "tool_calls" } = {}) {
    const ids = calls.map((c) => c.id ?? callId("call"));
    const events = [...openaiStart()];
    if (text) events.push(...pieces(text, 2).map((content) => openaiChunk({ content })));
    calls.forEach((call, index) => {
      events.push(
        openaiChunk({ tool_calls: [{ index, id: ids[index], type: "function", function: { name: call.name, arguments: "" } }] }),
      );
      for (const part of pieces(JSON.stringify(call.input), 3)) {
        events.push(openaiChunk({ tool_calls: [{ index, function: { arguments: part } }] }));
      }
    });
    events.push(...openaiFinish(finish));
    return { ...sse("openai", events), ids };
  },

  /** llama.cpp's answer to a request larger than its context (`llama-server`, HTTP 400). */
  contextExceeded(promptTokens, contextSize) {
    return {
      format: "openai",
      status: 400,
      headers: {},
      json: {
        error: {
          code: 400,
          message: `request (${promptTokens} tokens) exceeds the available context size (${contextSize} tokens), try increasing it`,
          type: "exceed_context_size_error",
          n_prompt_tokens: promptTokens,
          n_ctx: contextSize,
        },
      },
    };
  },

  /** An HTTP error with OpenAI's error body. */
  error(status, message, type = "server_error") {
    return { format: "openai", status, headers: {}, json: { error: { message, type, code: null } } };
  },
};

function openaiChunk(delta, finish_reason = null) {
  return {
    data: JSON.stringify({
      id: "chatcmpl-e2e",
      object: "chat.completion.chunk",
      created: 1700000000,
      model: "scripted",
      choices: [{ index: 0, delta, finish_reason }],
    }),
  };
}

function openaiStart() {
  return [openaiChunk({ role: "assistant", content: "" })];
}

function openaiFinish(reason) {
  return [
    openaiChunk({}, reason),
    {
      data: JSON.stringify({
        id: "chatcmpl-e2e",
        object: "chat.completion.chunk",
        created: 1700000000,
        model: "scripted",
        choices: [],
        usage: { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 },
      }),
    },
    { data: "[DONE]" },
  ];
}

export const anthropic = {
  /** A streamed assistant reply with only text. */
  text(text) {
    return sse("anthropic", [
      anthropicStart(),
      ...anthropicText(0, text),
      ...anthropicFinish("end_turn"),
    ]);
  },

  /** A streamed reply with tool_use blocks, `calls` = [{ name, input, id? }]. */
  toolCalls(calls, { text = "" } = {}) {
    const ids = calls.map((c) => c.id ?? callId("toolu"));
    const events = [anthropicStart()];
    let index = 0;
    if (text) events.push(...anthropicText(index++, text));
    calls.forEach((call, i) => {
      events.push(
        ev("content_block_start", { index, content_block: { type: "tool_use", id: ids[i], name: call.name, input: {} } }),
      );
      for (const partial_json of pieces(JSON.stringify(call.input), 3)) {
        events.push(ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } }));
      }
      events.push(ev("content_block_stop", { index }));
      index += 1;
    });
    events.push(...anthropicFinish("tool_use"));
    return { ...sse("anthropic", events), ids };
  },

  /**
   * A stream that starts answering, then fails the way Anthropic reports a
   * server error mid-stream: an `error` event (`api_error`, the 500 kind).
   */
  textThenError(text, { type = "api_error", message = "Internal server error" } = {}) {
    return sse("anthropic", [
      anthropicStart(),
      ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
      ...pieces(text, 3).map((t) => ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: t } })),
      { ...ev("error", { error: { type, message } }), delay: 200 },
    ]);
  },

  /** An HTTP error with Anthropic's error body. */
  error(status, type, message) {
    return {
      format: "anthropic",
      status,
      headers: { "request-id": "req_e2e" },
      json: { type: "error", error: { type, message } },
    };
  },
};

function ev(type, fields) {
  return { event: type, data: JSON.stringify({ type, ...fields }) };
}

function anthropicStart() {
  return ev("message_start", {
    message: {
      id: "msg_e2e",
      type: "message",
      role: "assistant",
      model: "scripted",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 42, output_tokens: 1 },
    },
  });
}

function anthropicText(index, text) {
  return [
    ev("content_block_start", { index, content_block: { type: "text", text: "" } }),
    { event: "ping", data: JSON.stringify({ type: "ping" }) },
    ...pieces(text, 4).map((t) => ev("content_block_delta", { index, delta: { type: "text_delta", text: t } })),
    ev("content_block_stop", { index }),
  ];
}

function anthropicFinish(stop_reason) {
  return [
    ev("message_delta", { delta: { stop_reason, stop_sequence: null }, usage: { output_tokens: 7 } }),
    ev("message_stop", {}),
  ];
}

export const ollama = {
  /** A streamed reply with only text, as Ollama's `/api/chat` sends it: one JSON object a line. */
  text(text, { parts = 4 } = {}) {
    return sse("ollama", [...pieces(text, parts).map((content) => ollamaLine({ content })), ollamaDone("stop")]);
  },

  /**
   * A streamed reply with tool calls, `calls` = [{ name, input, id? }]:
   * Ollama sends each call whole, its arguments an object, in one line.
   */
  toolCalls(calls, { text = "", thinking = "" } = {}) {
    const ids = calls.map((c) => c.id ?? callId("call"));
    // A thinking model's `thinking` comes first, in lines of its own.
    const lines = thinking ? pieces(thinking, 2).map((part) => ollamaLine({ content: "", thinking: part })) : [];
    if (text) lines.push(...pieces(text, 2).map((content) => ollamaLine({ content })));
    lines.push(ollamaLine({ content: "", tool_calls: calls.map((call, i) => ({ id: ids[i], function: { name: call.name, arguments: call.input } })) }));
    lines.push(ollamaDone("stop"));
    return { ...sse("ollama", lines), ids };
  },
};

function ollamaLine(message) {
  return { data: JSON.stringify({ model: "scripted", created_at: "2025-01-01T00:00:00Z", message: { role: "assistant", ...message }, done: false }) };
}

function ollamaDone(done_reason) {
  const counts = { total_duration: 1, prompt_eval_count: 42, eval_count: 7 };
  return { data: JSON.stringify({ model: "scripted", created_at: "2025-01-01T00:00:00Z", message: { role: "assistant", content: "" }, done: true, done_reason, ...counts }) };
}

/** The same OpenAI-format response reporting `promptTokens` prompt tokens in its usage. */
export function withUsage(response, promptTokens) {
  const events = response.events.map((e) => {
    const data = e.data.startsWith("{") ? JSON.parse(e.data) : null;
    if (!data?.usage) return e;
    return { ...e, data: JSON.stringify({ ...data, usage: { ...data.usage, prompt_tokens: promptTokens } }) };
  });
  return { ...response, events };
}

function sse(format, events) {
  return {
    format,
    status: 200,
    headers: { "content-type": format === "ollama" ? "application/x-ndjson" : "text/event-stream", "cache-control": "no-cache" },
    events: events.map((e) => ({ delay: GAP, ...e })),
  };
}
