// Issue 7 (2): the model asks to read a file outside the project. The card
// shows `path_outside_root` with its message and hint, the model gets the
// standardized error as the tool result, and nothing outside is touched.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { toolResults } from "../lib/requests.js";
import { openai } from "../lib/wire.js";

/**
 * Names, sizes and times of everything in a folder, from stat alone: a
 * read of a file just written moves its atime (relatime updates it while
 * atime <= mtime), so reading here would hide a read by the app.
 */
function snapshot(dir) {
  return fs.readdirSync(dir, { recursive: true }).sort().map((name) => {
    const { size, mtimeMs, ctimeMs, atimeMs } = fs.statSync(path.join(dir, name));
    return { name, size, mtimeMs, ctimeMs, atimeMs };
  });
}

test("a read_file outside the project fails with path_outside_root, and the model is told", { timeout: 120_000 }, async (t) => {
  const read = openai.toolCalls([{ name: "read_file", input: { path: "../outside/secret.txt" } }]);
  const script = [read, openai.text("That file is outside the project, so I cannot read it.")];

  await withApp(t, { script }, async (app) => {
    const before = snapshot(app.dirs.outside);

    await app.send("Show me ../outside/secret.txt");

    const card = tid("tool-card", '[data-tool="read_file"]');
    await app.waitFor(card, { check: (e) => e.attrs["data-status"] === "failed", what: "the read_file card failed" });
    const [code] = await app.query(`${card} ${tid("error-code")}`);
    const [message] = await app.query(`${card} ${tid("error-message")}`);
    const [hint] = await app.query(`${card} ${tid("error-hint")}`);
    assert.equal(code?.text.trim(), "path_outside_root");

    // The model got the standardized error as the tool result of that call.
    await app.llm.waitForRequests(2);
    const [result] = toolResults(app.llm.requests[1]);
    assert.equal(result.tool_use_id, read.ids[0]);
    const error = JSON.parse(result.content);
    assert.equal(error.code, "path_outside_root");
    assert.equal(typeof error.retryable, "boolean");
    assert.ok(error.message && error.hint, `message and hint are set: ${result.content}`);
    // The card renders `code` spans, so its text has no backticks.
    const plain = (text) => text.replaceAll("`", "");
    assert.ok(message?.text.includes(plain(error.message)), `the card shows the message ${JSON.stringify(error.message)}; got ${JSON.stringify(message?.text)}`);
    assert.ok(hint?.text.includes(plain(error.hint)), `the card shows the hint ${JSON.stringify(error.hint)}; got ${JSON.stringify(hint?.text)}`);

    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("outside the project"), { what: "the model's reply" });

    // Nothing outside was read, written or created; nothing leaked.
    assert.deepEqual(snapshot(app.dirs.outside), before);
    assert.equal(fs.readFileSync(path.join(app.dirs.outside, "secret.txt"), "utf8"), "not for the agent\n");
    for (const request of app.llm.requests) {
      assert.doesNotMatch(JSON.stringify(request.body), /not for the agent/, "the secret's content never reaches the model");
    }
  });
});
