// The scripted LLM server: a real HTTP server on 127.0.0.1 that answers
// the app's streaming requests turn by turn from a script, in the real wire
// formats (see wire.js), and records every request for assertions.
//
//   const llm = await startLlmServer([
//     (req) => openai.toolCalls([{ name: "read_file", input: { path: "a.txt" } }]),
//     (req) => openai.text("Done."),
//   ]);
//   llm.baseUrl("openai")   // -> http://127.0.0.1:PORT/v1
//   await llm.waitForRequests(2);
//   llm.requests[1].body.messages  // what the model was sent on turn 2
//
// A turn is a response object or a function of the received request
// `{ method, path, headers, body }` returning one. Streaming requests
// (`"stream": true`) take the next turn; the settings check's small
// non-streamed request is answered without taking one.
//
// `GET …/models` lists `options.models` (default `["scripted"]`) in
// Anthropic's format when the request carries `anthropic-version`, else in
// OpenAI's; each is recorded in `modelLists`.
//
// The app also asks what the server knows of the model (llama.cpp's
// `GET /props`, LM Studio's and Ollama's own endpoints): `options.props`,
// when given, is answered at `/props` as llama-server would; the others
// get a 404, as a server without them answers. With `options.props`, the
// server also has llama-server's `POST /apply-template` (the request's
// messages and tools as one prompt) and `POST /tokenize` (its tokens,
// counted as `tokenCount` does: about four characters each); both are
// recorded in `probes`.
//
// `options.ollama` (`{ contextLength, capabilities? }`) makes it Ollama as
// its native API speaks: `GET /api/version`, `POST /api/show` (the model's
// trained context length and capabilities), `GET /api/tags` (the model
// list) and `POST /api/chat`, whose stream is newline-delimited JSON
// (`ollama` in wire.js); without it those get a 404, as another server
// answers. The probes are recorded in `probes`.
//
// `options.port` listens on that port (a local server's usual one, for
// detection) instead of a free one.

import http from "node:http";

const ENDPOINTS = { openai: "/v1/chat/completions", anthropic: "/v1/messages", ollama: "/api/chat" };

export async function startLlmServer(script, options = {}) {
  const turns = [...script];
  const requests = [];
  const unexpected = [];
  /** The app's questions about the model (`/props` and the like). */
  const probes = [];
  /** The app's `GET …/models` (the model switcher, local server detection). */
  const modelLists = [];
  const waiters = [];
  const sockets = new Set();

  const notify = () => {
    for (const w of [...waiters]) {
      if (requests.length >= w.count) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };

  const server = http.createServer(async (req, res) => {
    const raw = await readBody(req);
    let body = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      body = { unparsed: raw };
    }
    // `aborted` is set once answered: whether the app hung up mid-stream.
    const request = { method: req.method, path: req.url, headers: req.headers, body, at: Date.now(), aborted: null };

    if (req.method === "GET" && new URL(req.url, "http://x").pathname.endsWith("/models")) {
      modelLists.push(request);
      return sendJson(res, 200, modelList(options.models ?? ["scripted"], "anthropic-version" in req.headers));
    }
    if (req.method === "POST" && options.props && (req.url === "/apply-template" || req.url === "/tokenize")) {
      probes.push(request);
      if (req.url === "/apply-template") return sendJson(res, 200, { prompt: templated(body) });
      const tokens = Array.from({ length: tokenCount(String(body?.content ?? "")) }, (_, i) => i);
      return sendJson(res, 200, { tokens });
    }
    if (req.method === "GET" && req.url === "/props") {
      probes.push(request);
      return options.props ? sendJson(res, 200, options.props) : sendJson(res, 404, { error: { message: "File Not Found" } });
    }
    if (options.ollama && ((req.method === "GET" && (req.url === "/api/version" || req.url === "/api/tags")) || (req.method === "POST" && req.url === "/api/show"))) {
      probes.push(request);
      return sendJson(res, 200, ollamaProbe(req.url, options.ollama, options.models ?? ["scripted"]));
    }
    // `/api/version` too: the app asks it to tell Ollama (spoken to in its own API) from the others.
    if ((req.method === "GET" && (req.url.startsWith("/api/v0/models/") || req.url === "/api/version")) || (req.method === "POST" && req.url === "/api/show")) {
      probes.push(request);
      return sendJson(res, 404, { error: "not found" });
    }
    if (req.method !== "POST" || !Object.values(ENDPOINTS).includes(req.url)) {
      unexpected.push({ ...request, why: "unknown endpoint" });
      return sendJson(res, 404, { error: { message: `scripted server: no endpoint ${req.method} ${req.url}` } });
    }
    if (body?.stream !== true) {
      // The settings check ("ping", one token, not streamed).
      return sendJson(res, 200, pingReply(req.url, body));
    }

    requests.push(request);
    notify();
    const turn = turns.shift();
    if (!turn) {
      unexpected.push({ ...request, why: "script exhausted" });
      // 400: not retried by the app, so a surplus request fails at once.
      return sendJson(res, 400, { error: { message: "scripted server: the script has no more turns" } });
    }
    let response;
    try {
      response = typeof turn === "function" ? await turn(request, requests) : turn;
    } catch (error) {
      unexpected.push({ ...request, why: `turn threw: ${error.stack ?? error}` });
      return sendJson(res, 400, { error: { message: `scripted server: turn threw: ${error}` } });
    }
    if (response.format && ENDPOINTS[response.format] !== req.url) {
      unexpected.push({ ...request, why: `a ${response.format} reply was scripted for ${req.url}` });
    }
    request.aborted = !(await respond(req, res, response));
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  const { port } = server.address();

  return {
    port,
    requests,
    /** Requests the script did not expect (wrong endpoint, no turn left, a turn that threw). */
    unexpected,
    probes,
    modelLists,
    /** Turns not yet used. */
    get remaining() {
      return turns.length;
    },
    /** The base URL to put in settings for a provider. */
    baseUrl(provider) {
      return provider === "openai" ? `http://127.0.0.1:${port}/v1` : `http://127.0.0.1:${port}`;
    },
    /** Resolves once `count` streaming requests have arrived. */
    waitForRequests(count, timeoutMs = 20_000) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const waiter = { count, resolve };
        waiters.push(waiter);
        setTimeout(() => {
          if (!waiters.includes(waiter)) return;
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(new Error(`the scripted LLM server got ${requests.length} streaming request(s), expected ${count} within ${timeoutMs} ms`));
        }, timeoutMs).unref();
      });
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** What the scripted server counts as tokens of a text: about four characters each. */
export function tokenCount(text) {
  return Math.ceil(text.length / 4);
}

/** A chat request as one prompt, as a chat template renders it (the tools first, then each message). */
function templated(body) {
  const tools = (body?.tools ?? []).map((tool) => JSON.stringify(tool)).join("\n");
  const messages = (body?.messages ?? []).map((m) => `<|${m.role}|>\n${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`);
  return `${tools ? `<tools>\n${tools}\n</tools>\n` : ""}${messages.join("\n")}`;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const parts = [];
    req.on("data", (c) => parts.push(c));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res, status, value, headers = {}) {
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** What Ollama answers at `/api/version`, `/api/show` and `/api/tags`. */
function ollamaProbe(url, { contextLength, capabilities = ["completion", "tools"] }, models) {
  if (url === "/api/version") return { version: "0.12.6" };
  if (url === "/api/tags") return { models: models.map((name) => ({ name, model: name, size: 1, digest: "0" })) };
  return { modelfile: "", parameters: "", template: "", details: { family: "qwen3" }, model_info: { "general.architecture": "qwen3", "qwen3.context_length": contextLength }, capabilities };
}

/** Sends a scripted response; false when the app hung up before its end. */
async function respond(req, res, response) {
  if (response.json !== undefined) {
    sendJson(res, response.status, response.json, response.headers);
    return true;
  }
  let closed = false;
  res.on("close", () => {
    closed = true;
  });
  res.writeHead(response.status, response.headers);
  res.flushHeaders();
  for (const event of response.events) {
    if (event.delay) await sleep(event.delay);
    if (closed) return false; // the app hung up (cancel): stop like a real server
    // Ollama's stream is one JSON object a line; the others are server-sent events.
    if (response.format === "ollama") res.write(`${event.data}\n`);
    else res.write(`${event.event ? `event: ${event.event}\n` : ""}data: ${event.data}\n\n`);
  }
  res.end();
  return true;
}

/** A model list as OpenAI (`object: "list"`) or Anthropic (`display_name`, paging fields) send it. */
function modelList(ids, anthropic) {
  if (anthropic) {
    const data = ids.map((id) => ({ type: "model", id, display_name: id, created_at: "2025-01-01T00:00:00Z" }));
    return { data, has_more: false, first_id: ids[0] ?? null, last_id: ids.at(-1) ?? null };
  }
  return { object: "list", data: ids.map((id) => ({ id, object: "model", created: 1735689600, owned_by: "scripted" })) };
}

function pingReply(path, body) {
  if (path === ENDPOINTS.ollama) {
    return { model: body?.model ?? "scripted", message: { role: "assistant", content: "pong" }, done: true, done_reason: "length", prompt_eval_count: 1, eval_count: 1 };
  }
  if (path === ENDPOINTS.anthropic) {
    return {
      id: "msg_ping",
      type: "message",
      role: "assistant",
      model: body?.model ?? "scripted",
      content: [{ type: "text", text: "pong" }],
      stop_reason: "max_tokens",
      usage: { input_tokens: 1, output_tokens: 1 },
    };
  }
  return {
    id: "chatcmpl-ping",
    object: "chat.completion",
    model: body?.model ?? "scripted",
    choices: [{ index: 0, message: { role: "assistant", content: "pong" }, finish_reason: "length" }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}
