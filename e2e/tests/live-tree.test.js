// The file tree follows the disk: a file a command of the model's creates
// (approved in the window) shows in the tree within 2 s, while that command
// still runs, so before the tree's refresh at the end of the run.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { openai } from "../lib/wire.js";

// Writes the file, then keeps the run busy for 6 s.
const SCRIPT = "require('fs').writeFileSync('made-by-agent.txt', 'hi\\n'); setTimeout(() => {}, 6000);";

test("live tree: a file made by an approved command appears in the tree within 2 s", { timeout: 150_000 }, async (t) => {
  const run = openai.toolCalls([{ name: "exec_shell", input: { command: "node", args: ["-e", SCRIPT] } }]);
  const script = [run, openai.text("Made it.")];

  await withApp(t, { script }, async (app) => {
    const made = path.join(app.dirs.project, "made-by-agent.txt");
    await app.waitFor(tid("file-tree"), { check: (e) => e.text.includes("README.md"), what: "README.md in the file tree" });
    assert.equal((await app.query(`${tid("tree-file")}[data-path="made-by-agent.txt"]`)).length, 0);

    await app.send("Make a file.");
    const card = tid("tool-card", `[data-tool="exec_shell"]`);
    await app.waitFor(card, { check: (e) => e.attrs["data-status"] === "waiting", what: "the command waiting for approval" });
    await app.answer("approve-once");

    const started = Date.now();
    while (!fs.existsSync(made)) {
      assert.ok(Date.now() - started < 20_000, "the command never wrote the file");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const written = Date.now();
    await app.waitFor(`${tid("tree-file")}[data-path="made-by-agent.txt"]`, { timeout: 2_000, what: "made-by-agent.txt in the tree within 2 s" });
    const shownAfter = Date.now() - written;
    const [still] = await app.query(card);
    assert.equal(still.attrs["data-status"], "running", "the command still runs: the watcher, not the end of the run, showed it");
    await app.screenshot("live-tree");
    t.diagnostic(`made-by-agent.txt shown ${shownAfter} ms after it was written`);

    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Made it"), { timeout: 30_000, what: "the final reply" });
  });
});
