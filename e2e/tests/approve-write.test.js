// open a project by its command-line path, the agent proposes
// a new file, the approval card shows the diff, the user approves, the file
// is on disk with exactly the proposed bytes and the card says done.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { dialogue, toolNames, toolResults } from "../lib/requests.js";
import { openai } from "../lib/wire.js";

const CONTENT = "Hello from Corral\nnon-ASCII: héllo ✓\n";

test("an approved write_file creates the file shown in the diff", { timeout: 120_000 }, async (t) => {
  const write = openai.toolCalls([{ name: "write_file", input: { path: "hello.txt", content: CONTENT } }], {
    text: "I'll create `hello.txt`.",
  });
  const script = [write, openai.text("Created `hello.txt` with a greeting.")];

  await withApp(t, { script }, async (app) => {
    const file = path.join(app.dirs.project, "hello.txt");

    // The project given on the command line is open.
    await app.waitFor(tid("project-name"), { check: (e) => e.text.includes("demo"), what: "the project name `demo`" });
    await app.waitFor(tid("file-tree"), { check: (e) => e.text.includes("README.md"), what: "README.md in the file tree" });

    await app.send("Create hello.txt with a greeting.");

    const card = tid("tool-card", '[data-tool="write_file"]');
    await app.waitFor(card, { check: (e) => e.attrs["data-status"] === "waiting", what: "the write_file card waiting for approval" });
    await app.waitFor(`${tid("approval")} ${tid("diff")}`, {
      check: (e) => e.text.includes("Hello from Corral") && e.text.includes("héllo ✓"),
      what: "the diff with the new content",
    });
    assert.equal(fs.existsSync(file), false, "nothing is written before the approval");
    await app.screenshot("approval");

    await app.answer("approve-once");
    await app.waitFor(card, { check: (e) => e.attrs["data-status"] === "done", what: "the write_file card done" });
    assert.deepEqual(fs.readFileSync(file), Buffer.from(CONTENT, "utf8"), "the file holds exactly the proposed bytes");

    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Created"), { what: "the model's final reply" });

    // What the model was sent: the user's words and the tools, then the result.
    await app.llm.waitForRequests(2);
    const [first, second] = app.llm.requests;
    assert.equal(first.body.model, "scripted");
    assert.equal(first.body.stream, true);
    assert.deepEqual(dialogue(first).at(-1), ["user", "Create hello.txt with a greeting."]);
    assert.ok(toolNames(first).includes("write_file"), `write_file is offered; got ${toolNames(first)}`);
    const [result] = toolResults(second);
    assert.equal(result.tool_use_id, write.ids[0]);
    assert.doesNotMatch(result.content, /"code"\s*:/, `the write succeeded: ${result.content}`);
  });
});
