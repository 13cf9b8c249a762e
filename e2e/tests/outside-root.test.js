// the model asks to read a file outside the project (by `..`,
// by absolute path, through a symlink). Each card shows `path_outside_root`
// with its message and hint, the model gets the standardized error as the
// tool result, and nothing outside is touched.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, waitUntil, withApp } from "../lib/app.js";
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

test("read_file outside the project fails with path_outside_root, and the model is told", { timeout: 120_000 }, async (t) => {
  // Three ways out: `..`, an absolute path, and a symlink inside the
  // project pointing out (made once the temp folders exist).
  const paths = ["../outside/secret.txt"];
  let read;
  const script = [
    () => (read = openai.toolCalls(paths.map((p) => ({ name: "read_file", input: { path: p } })))),
    openai.text("Those files are outside the project, so I cannot read them."),
  ];

  await withApp(t, { script }, async (app) => {
    const secret = path.join(app.dirs.outside, "secret.txt");
    fs.symlinkSync(secret, path.join(app.dirs.project, "link.txt"));
    paths.push(secret, "link.txt");
    const before = snapshot(app.dirs.outside);

    await app.send("Show me ../outside/secret.txt");

    const cards = tid("tool-card", '[data-tool="read_file"]');
    await waitUntil(
      async () => {
        const found = await app.query(cards);
        return found.length === 3 && found.every((c) => c.attrs["data-status"] === "failed");
      },
      { what: "three read_file cards, all failed" },
    );
    const codes = await app.query(`${cards} ${tid("error-code")}`);
    const messages = await app.query(`${cards} ${tid("error-message")}`);
    const hints = await app.query(`${cards} ${tid("error-hint")}`);
    assert.deepEqual(codes.map((c) => c.text.trim()), ["path_outside_root", "path_outside_root", "path_outside_root"]);

    // The model got the standardized error as the tool result of each call.
    await app.llm.waitForRequests(2);
    const results = toolResults(app.llm.requests[1]);
    assert.deepEqual(results.map((r) => r.tool_use_id), read.ids);
    // The card renders `code` spans, so its text has no backticks.
    const plain = (text) => text.replaceAll("`", "");
    results.forEach((result, i) => {
      const error = JSON.parse(result.content);
      assert.equal(error.code, "path_outside_root", `${paths[i]}: ${result.content}`);
      assert.equal(typeof error.retryable, "boolean");
      assert.ok(error.message && error.hint, `message and hint are set: ${result.content}`);
      assert.ok(messages[i].text.includes(plain(error.message)), `card ${i} shows the message ${JSON.stringify(error.message)}; got ${JSON.stringify(messages[i].text)}`);
      assert.ok(hints[i].text.includes(plain(error.hint)), `card ${i} shows the hint ${JSON.stringify(error.hint)}; got ${JSON.stringify(hints[i].text)}`);
    });

    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("outside the project"), { what: "the model's reply" });

    // Nothing outside was read, written or created; nothing leaked.
    assert.deepEqual(snapshot(app.dirs.outside), before);
    assert.equal(fs.readFileSync(secret, "utf8"), "not for the agent\n");
    for (const request of app.llm.requests) {
      assert.doesNotMatch(JSON.stringify(request.body), /not for the agent/, "the secret's content never reaches the model");
    }
  });
});
