// Over the Anthropic wire format: the provider refuses the key
// (HTTP 401), then fails mid-stream (an `api_error` event, Anthropic's 500).
// Each time the window shows a clear error and keeps the conversation;
// Retry sends the same conversation again, and the third try works.

import assert from "node:assert/strict";
import { test } from "node:test";
import { tid, waitUntil, withApp } from "../lib/app.js";
import { anthropic } from "../lib/wire.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test("a 401 and a mid-stream 500 show clear errors, keep the conversation, and Retry works", { timeout: 120_000 }, async (t) => {
  const script = [
    anthropic.error(401, "authentication_error", "invalid x-api-key"),
    anthropic.textThenError("Here is the start of an answer that"),
    anthropic.text("Recovered: the project has a README and a greeting module."),
  ];
  const question = "What is in this project?";

  await withApp(t, { script, provider: "anthropic" }, async (app) => {
    await app.send(question);

    // 401: not retried by itself; a clear error; the message stays.
    const banner = await app.waitFor(tid("error-banner"), { check: (e) => e.visible, what: "the error banner after the 401" });
    const [code] = await app.query(`${tid("error-banner")} ${tid("error-code")}`);
    const [message] = await app.query(`${tid("error-banner")} ${tid("error-message")}`);
    assert.equal(code?.text.trim(), "llm_auth");
    assert.ok(message?.text.trim(), "the error has a message");
    assert.doesNotMatch(banner.text, /test-key/, "the key is never shown");
    const users = await app.query(tid("message-user"));
    assert.deepEqual(users.map((u) => u.text.trim()), [question], "the conversation is kept");
    await sleep(1_500);
    assert.equal(app.llm.requests.length, 1, "a 401 is not retried without the user");

    // Retry: the stream starts, then breaks with a server error.
    await app.click(tid("retry"));
    await app.llm.waitForRequests(2);
    await waitUntil(
      async () => {
        const [c] = await app.query(`${tid("error-banner")} ${tid("error-code")}`);
        return c?.text.trim() === "llm_unavailable";
      },
      { what: "the error banner with llm_unavailable after the mid-stream error" },
    );
    assert.deepEqual((await app.query(tid("message-user"))).map((u) => u.text.trim()), [question]);
    await app.screenshot("mid-stream-error");

    // Retry again: the answer streams in and the banner goes.
    await app.click(tid("retry"));
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Recovered:"), { what: "the answer after the retry" });
    await app.waitGone(tid("error-banner"));
    assert.deepEqual((await app.query(tid("message-user"))).map((u) => u.text.trim()), [question], "the question is not duplicated");

    // Each try sent the same conversation.
    const [a, b, c] = app.llm.requests;
    assert.deepEqual(b.body.messages, a.body.messages);
    assert.deepEqual(c.body.messages, a.body.messages);
  });
});
