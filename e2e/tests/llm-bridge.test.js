// The harness's own check: the scripted LLM server's streams, in both wire
// formats, come out of the real app's `llm_stream` command as the expected
// normalized events. Driven through the webview's IPC (not the UI), so a
// failure here points at the server or the bridge, not at the window.

import assert from "node:assert/strict";
import { test } from "node:test";
import { withApp } from "../lib/app.js";
import { anthropic, openai } from "../lib/wire.js";

/** Calls `llm_stream` from the page and collects its channel's events in order. */
const STREAM = `
  const request = arguments[0];
  const done = arguments[arguments.length - 1];
  const ipc = window.__TAURI_INTERNALS__;
  const raw = [];
  const channel = ipc.transformCallback((m) => raw.push(m));
  const events = () => raw.filter((m) => "message" in m).sort((a, b) => a.index - b.index).map((m) => m.message);
  ipc.invoke("llm_stream", { run_id: "bridge-" + Math.random(), request, on_event: "__CHANNEL__:" + channel }).then(
    () => setTimeout(() => done({ events: events() }), 100),
    (error) => done({ rejected: error, events: events() }),
  );`;

const REQUEST = {
  system: "You are a scripted test model.",
  messages: [{ role: "user", content: [{ type: "text", text: "hello" }] }],
  tools: [{ name: "write_file", description: "Writes a file.", input_schema: { type: "object", properties: { path: { type: "string" } } } }],
};

const INPUT = { path: "a.txt", content: "line one\nline \"two\"\n" };

async function stream(app) {
  const result = await app.session.executeAsync(STREAM, [REQUEST]);
  assert.equal(result.rejected, undefined, `llm_stream rejected: ${JSON.stringify(result.rejected)}`);
  return result.events;
}

const text = (events) => events.filter((e) => e.type === "text_delta").map((e) => e.text).join("");
const terminal = (events) => {
  const ends = events.filter((e) => e.type === "done" || e.type === "error");
  assert.equal(ends.length, 1, `exactly one terminal event: ${JSON.stringify(events)}`);
  assert.equal(events.at(-1), ends[0], "the terminal event is the last");
  return ends[0];
};

function assertToolTurn(events, id) {
  assert.equal(text(events), "Writing it.");
  const start = events.find((e) => e.type === "tool_call_start");
  assert.deepEqual(start, { type: "tool_call_start", id, name: "write_file" });
  assert.ok(events.filter((e) => e.type === "tool_call_delta").length >= 2, "arguments arrive in pieces");
  const end = events.find((e) => e.type === "tool_call_end");
  assert.deepEqual(end, { type: "tool_call_end", id, name: "write_file", input: INPUT });
  assert.ok(events.some((e) => e.type === "usage"), "usage is reported");
  assert.deepEqual(terminal(events), { type: "done", stop_reason: "tool_use" });
}

test("OpenAI-compatible SSE: text, a tool call in pieces, then a text reply", { timeout: 60_000 }, async (t) => {
  const call = openai.toolCalls([{ name: "write_file", input: INPUT }], { text: "Writing it." });
  await withApp(t, { script: [call, openai.text("All done.")] }, async (app) => {
    assertToolTurn(await stream(app), call.ids[0]);
    const second = await stream(app);
    assert.equal(text(second), "All done.");
    assert.deepEqual(terminal(second), { type: "done", stop_reason: "end_turn" });
    assert.equal(app.llm.requests[0].path, "/v1/chat/completions");
    assert.equal(app.llm.requests[0].body.messages[0].role, "system");
  });
});

test("Anthropic SSE: tool_use in pieces, a 401, a mid-stream api_error", { timeout: 60_000 }, async (t) => {
  const call = anthropic.toolCalls([{ name: "write_file", input: INPUT }], { text: "Writing it." });
  const script = [call, anthropic.error(401, "authentication_error", "invalid x-api-key"), anthropic.textThenError("Half an")];
  await withApp(t, { script, provider: "anthropic" }, async (app) => {
    assertToolTurn(await stream(app), call.ids[0]);

    const refused = terminal(await stream(app));
    assert.equal(refused.type, "error");
    assert.equal(refused.error.code, "llm_auth");
    assert.doesNotMatch(JSON.stringify(refused), /test-key/, "the key is never echoed");

    const cut = await stream(app);
    assert.equal(text(cut), "Half an");
    const broken = terminal(cut);
    assert.equal(broken.type, "error");
    assert.equal(broken.error.code, "llm_unavailable");
    assert.equal(app.llm.requests.length, 3, "neither failure was retried on its own");
  });
});
