// The conversation's changes: after an approved edit of src/greet.js and a
// new file, the tree marks both, and the Changes view lists them with
// their diffs (from the checkpoint before the conversation's first change).

import assert from "node:assert/strict";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { openai } from "../lib/wire.js";

test("the tree marks the files the conversation changed and the Changes view shows their diffs", { timeout: 120_000 }, async (t) => {
  const script = [
    openai.toolCalls([{ name: "write_file", input: { path: "notes.txt", content: "a note\n" } }]),
    openai.text("Wrote notes.txt."),
  ];

  await withApp(t, { script }, async (app) => {
    await app.send("Write a note.");
    const card = tid("tool-card", '[data-tool="write_file"]');
    await app.waitFor(card, { check: (e) => e.attrs["data-status"] === "waiting", what: "the write waiting for approval" });
    await app.answer("approve-once");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Wrote notes.txt."), { what: "the reply" });

    await app.waitForAny(tid("tree-file"), (e) => e.attrs["data-path"] === "notes.txt" && e.attrs["data-changed"] === "true", {
      what: "notes.txt marked changed in the tree",
    });
    const [button] = await app.query(tid("show-changes"));
    assert.match(button.text, /Changes \(1\)/);
    await app.click(tid("show-changes"));
    const change = await app.waitForAny(tid("change"), (e) => e.attrs["data-path"] === "notes.txt", { what: "notes.txt in the Changes view" });
    assert.equal(change.attrs["data-status"], "added");
    assert.match(change.text, /a note/);
    await app.screenshot("changes");
    await app.click(tid("changes-close"));
    await app.waitGone(tid("changes-view"));
  });
});
