// Over the Anthropic wire format: the user denies a write.
// Nothing is written, and the next request tells the model, in a
// tool_result marked as an error, that the user denied it.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { toolResults } from "../lib/requests.js";
import { anthropic } from "../lib/wire.js";

const listing = (dir) => fs.readdirSync(dir, { recursive: true }).sort();

test("a denied write_file writes nothing and the model is told it was denied", { timeout: 120_000 }, async (t) => {
  const write = anthropic.toolCalls([{ name: "write_file", input: { path: "denied.txt", content: "should never exist\n" } }], {
    text: "I'll write `denied.txt`.",
  });
  const script = [write, anthropic.text("Understood, I won't create it.")];

  await withApp(t, { script, provider: "anthropic" }, async (app) => {
    const before = listing(app.dirs.project);

    await app.send("Create denied.txt");

    const card = tid("tool-card", '[data-tool="write_file"]');
    await app.waitFor(card, { check: (e) => e.attrs["data-status"] === "waiting", what: "the write_file card waiting for approval" });
    await app.waitFor(`${tid("approval")} ${tid("diff")}`, { check: (e) => e.text.includes("should never exist"), what: "the diff" });
    await app.answer("deny");
    await app.waitFor(card, { check: (e) => e.attrs["data-status"] === "denied", what: "the card denied" });

    await app.llm.waitForRequests(2);
    const [first, second] = app.llm.requests;
    assert.equal(first.path, "/v1/messages");
    assert.equal(first.headers["x-api-key"], "test-key");
    assert.ok(first.headers["anthropic-version"], "the anthropic-version header is sent");
    const [result] = toolResults(second);
    assert.equal(result.tool_use_id, write.ids[0]);
    assert.equal(result.is_error, true);
    assert.match(result.content, /denied/i);

    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Understood"), { what: "the model's reply" });
    assert.equal(fs.existsSync(path.join(app.dirs.project, "denied.txt")), false);
    assert.deepEqual(listing(app.dirs.project), before, "nothing in the project changed");
  });
});
