// an approved edit and an approved command change the project;
// the turn says what it changed; "Restore to here" shows the diff of what
// a restore will do, restores, and every file on disk matches the fixture
// again (created files gone, edited and deleted ones back); Undo redoes.
// Undo this call puts back the one call's file and leaves the others';
// Restore this file restores one path alone, and undoes that alone.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { openai } from "../lib/wire.js";

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/demo");

/** Every file under `dir` with its bytes, by relative path. */
function files(dir) {
  const out = {};
  const walk = (d) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else out[path.relative(dir, full)] = fs.readFileSync(full).toString("base64");
    }
  };
  walk(dir);
  return out;
}

const SCRIPT = [
  "const fs = require('fs');",
  "fs.writeFileSync('notes/todo.txt', 'made by the command\\n');",
  "fs.writeFileSync('package.json', '{}\\n');",
  "fs.rmSync('tick.js');",
].join(" ");

test("Restore to here shows the diff, restores, and the files match the fixture again", { timeout: 180_000 }, async (t) => {
  const edit = openai.toolCalls([
    { name: "edit_file", input: { path: "src/greet.js", old_string: "Hello, ${name}!", new_string: "Hi there, ${name}!" } },
  ]);
  const mkdir = openai.toolCalls([{ name: "exec_shell", input: { command: "mkdir", args: ["notes"] } }]);
  const run = openai.toolCalls([{ name: "exec_shell", input: { command: "node", args: ["-e", SCRIPT] } }]);
  const script = [edit, mkdir, run, openai.text("Changed the greeting and tidied up.")];

  await withApp(t, { script }, async (app) => {
    const project = app.dirs.project;
    const original = files(FIXTURE);
    assert.deepEqual(files(project), original, "the project starts as the fixture");

    await app.send("Change the greeting and tidy up.");
    for (const [tool, index] of [["edit_file", 0], ["exec_shell", 0], ["exec_shell", 1]]) {
      const cards = tid("tool-card", `[data-tool="${tool}"]`);
      await app.waitForAny(cards, (e, i) => i === index && e.attrs["data-status"] === "waiting", { what: `${tool} #${index} waiting` });
      await app.answer("approve-once");
      await app.waitForAny(cards, (e, i) => i === index && e.attrs["data-status"] === "done", { what: `${tool} #${index} done` });
    }
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("tidied up"), { what: "the final reply" });
    assert.equal(fs.readFileSync(path.join(project, "notes/todo.txt"), "utf8"), "made by the command\n");
    assert.equal(fs.existsSync(path.join(project, "tick.js")), false);
    const after = files(project);

    // Each changing card offers its own restore; the turn says what it did.
    await app.waitForAny(tid("restore-call"), (_e, i) => i === 2, { what: "three changing cards with Restore to here" });
    await app.waitFor(tid("turn-summary"), {
      check: (e) => e.text === "4 files changed, 1 created, 1 deleted",
      what: "the turn's summary",
    });
    await app.screenshot("turn");

    await app.click(tid("restore-turn"));
    await app.waitFor(tid("restore-dialog"), { what: "the restore dialog" });
    await app.waitForAny(tid("change"), (e) => e.attrs["data-path"] === "src/greet.js" && e.text.includes("Hello, ${name}!"), {
      what: "the diff of greet.js back to Hello",
    });
    const shown = await app.query(tid("change"));
    const byPath = Object.fromEntries(shown.map((e) => [e.attrs["data-path"], e.attrs["data-status"]]));
    assert.deepEqual(byPath, {
      "notes/todo.txt": "removed",
      "package.json": "modified",
      "src/greet.js": "modified",
      "tick.js": "added",
    });
    assert.deepEqual(files(project), after, "showing the diff changes nothing");
    await app.screenshot("restore-diff");

    await app.click(tid("restore-confirm"));
    await app.waitFor(tid("restore-done"), { what: "the restore done" });
    assert.deepEqual(files(project), original, "every file matches the fixture again");
    assert.equal(fs.existsSync(path.join(project, "notes")), false, "the folder the command made is gone");

    // Undo: the project as the turn left it.
    await app.click(tid("restore-undo"));
    const deadline = Date.now() + 15_000;
    while (JSON.stringify(files(project)) !== JSON.stringify(after) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(files(project), after, "undoing the restore brings the turn's changes back");
    await app.click(tid("restore-close"));
    await app.waitGone(tid("restore-dialog"));

    // Undo this call, on the edit's card: only greet.js goes back.
    await app.click(tid("undo-call"));
    await app.waitForAny(tid("change"), (e) => e.attrs["data-path"] === "src/greet.js" && e.text.includes("Hello, ${name}!"), {
      what: "the edit's diff in the undo dialog",
    });
    const callChanges = await app.query(tid("change"));
    assert.deepEqual(callChanges.map((e) => e.attrs["data-path"]), ["src/greet.js"], "only the call's path");
    assert.equal((await app.query(tid("undo-call-later"))).length, 0, "no later call changed greet.js");
    await app.click(tid("restore-confirm"));
    await app.waitFor(tid("restore-done"), { what: "the call undone" });
    const undone = { ...after, "src/greet.js": original["src/greet.js"] };
    assert.deepEqual(files(project), undone, "the edit is undone and the commands' changes stay");
    await app.click(tid("restore-close"));
    await app.waitGone(tid("restore-dialog"));

    // Restore this file, from the turn's dialog: package.json alone.
    await app.click(tid("restore-turn"));
    await app.waitForAny(tid("change"), (e) => e.attrs["data-path"] === "package.json", { what: "package.json in the restore dialog" });
    await app.click(`${tid("change", '[data-path="package.json"]')} ${tid("restore-file")}`);
    await app.waitFor(tid("restore-file-done"), { check: (e) => e.text.includes("package.json"), what: "package.json restored alone" });
    assert.deepEqual(files(project), { ...undone, "package.json": original["package.json"] }, "only package.json changed");
    await app.waitGone(`${tid("change", '[data-path="package.json"]')}`);
    await app.click(tid("restore-file-undo"));
    await app.waitFor(tid("restore-file-done"), { check: (e) => e.text.includes("is back as it was"), what: "that restore undone" });
    assert.deepEqual(files(project), undone, "undoing it puts package.json back as the command left it");
    await app.click(tid("restore-cancel"));
  });
});
