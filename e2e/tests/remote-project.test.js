// a remote project in the window: `corral ssh://corral-test/…` against an
// sshd of the test's own on 127.0.0.1 (lib/sshd.js). The remote has no
// corral-cli: the window asks, naming the host and the folder, and copies
// it there once the user agrees. The scripted model's edit shows its diff
// and, approved, changes the file in the remote folder; its command runs
// there and its output shows in the panel. The "remote" is this machine,
// so the test reads the folder directly.

import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { toolResults } from "../lib/requests.js";
import { SSH_HOST, sshdMissing, startSshd } from "../lib/sshd.js";
import { openai } from "../lib/wire.js";

const VERSION = fs.readFileSync(new URL("../../Cargo.toml", import.meta.url), "utf8").match(/^version = "([^"]+)"/m)[1];

test("a remote project opens after asking, edits with approval and runs a command there", { timeout: 180_000, skip: sshdMissing() ?? false }, async (t) => {
  const sshDir = fs.mkdtempSync(path.join(os.tmpdir(), "corral-e2e-sshd-"));
  const sshd = await startSshd(sshDir, VERSION);
  t.after(async () => {
    await sshd.stop();
    fs.rmSync(sshDir, { recursive: true, force: true });
  });

  const edit = openai.toolCalls([{ name: "edit_file", input: { path: "README.md", old_string: "A small project", new_string: "A remote project" } }]);
  const run = openai.toolCalls([{ name: "exec_shell", input: { command: "node", args: ["-e", "console.log('ran in ' + process.cwd())"] } }]);
  const script = [edit, run, openai.text("Edited README.md and ran the command there.")];

  await withApp(
    t,
    {
      script,
      args: (dirs) => [`ssh://${SSH_HOST}${dirs.project}`],
      env: { CORRAL_SSH_CONFIG: sshd.config },
    },
    async (app) => {
      const project = app.dirs.project;
      const readme = path.join(project, "README.md");

      // corral-cli is not there: the window asks, naming the host and where it goes.
      const question = await app.waitFor(tid("install-remote"), { what: "the question about copying corral-cli", timeout: 30_000 });
      assert.match(question.text, new RegExp(`Copy corral-cli to ${SSH_HOST}\\?`));
      const folder = await app.waitFor(tid("install-remote-folder"));
      assert.equal(folder.text, path.join(sshDir, "remote-cache", "corral", "bin"));
      assert.equal(fs.existsSync(sshd.installed), false, "nothing is copied before the user agrees");
      await app.screenshot("asked");
      await app.click(tid("install-remote-yes"));

      // Copied, and the project open as user@host:/path.
      await app.waitFor(tid("project-name"), {
        check: (e) => e.text === `${SSH_HOST}:${project}`,
        what: "the remote project's name in the project bar",
        timeout: 30_000,
      });
      assert.equal(fs.existsSync(sshd.installed), true, "corral-cli was copied to the remote");
      await app.waitFor(tid("file-tree"), { check: (e) => e.text.includes("README.md"), what: "the remote's README.md in the file tree" });

      await app.send("Edit the README there, then run a command.");

      // The edit's approval shows the diff, from the remote's check.
      const editCard = tid("tool-card", '[data-tool="edit_file"]');
      await app.waitFor(editCard, { check: (e) => e.attrs["data-status"] === "waiting", what: "the edit waiting for approval", timeout: 30_000 });
      await app.waitFor(`${tid("approval")} ${tid("diff")}`, {
        check: (e) => e.text.includes("A remote project") && e.text.includes("A small project"),
        what: "the edit's diff",
      });
      assert.match(fs.readFileSync(readme, "utf8"), /A small project/, "nothing changes before the approval");
      await app.screenshot("approval");
      await app.answer("approve-once");
      await app.waitFor(editCard, { check: (e) => e.attrs["data-status"] === "done", what: "the edit done" });
      assert.match(fs.readFileSync(readme, "utf8"), /A remote project/, "the remote folder's file changed");

      // The command asks, runs there, and its output shows in the panel.
      const runCard = tid("tool-card", '[data-tool="exec_shell"]');
      await app.waitFor(runCard, { check: (e) => e.attrs["data-status"] === "waiting", what: "the command waiting for approval" });
      await app.answer("approve-once");
      await app.waitFor(tid("command-panel"), { check: (e) => e.attrs["data-exit-code"] === "0", what: "the command's exit code 0", timeout: 30_000 });
      const [output] = await app.query(tid("command-output"));
      assert.ok(output.text.includes(`ran in ${project}`), `the output: ${output.text}`);
      await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("ran the command there"), { what: "the model's final reply" });

      // The model got both results (the last request carries the whole conversation).
      await app.llm.waitForRequests(3);
      const results = toolResults(app.llm.requests[2]);
      assert.equal(results.length, 2, JSON.stringify(results));
      for (const result of results) assert.doesNotMatch(result.content, /"code"\s*:/, `a result without an error: ${result.content}`);
      sshd.closeShared(app.dirs.runtime);
    },
  );
});
