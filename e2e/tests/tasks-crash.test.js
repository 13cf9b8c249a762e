// Tasks survive a crash: with two tasks running (each has written a file
// in its worktree and waits on the model) and a third waiting for a slot
// (tasks_at_once is 2, so it never reached the model), the app is killed
// with SIGKILL. Started again, it lists all three with their changes, and
// a task goes on from its conversation: the model is sent what it had.

import assert from "node:assert/strict";
import { test } from "node:test";
import { APP_BINARY, processesWithHome, tid, waitUntil, withApp } from "../lib/app.js";
import { dialogue, toolResults } from "../lib/requests.js";
import { openai } from "../lib/wire.js";

const NAMES = ["alpha", "beta", "gamma"];
const taskOf = (request) => NAMES.find((name) => (dialogue(request)[0]?.[1] ?? "").includes(name));
const appMain = (app) => processesWithHome(app.dirs.home).filter((p) => p.split(" ")[1] === APP_BINARY);

test("tasks after kill -9: listed with their changes, and they go on", { timeout: 300_000 }, async (t) => {
  // Held until the test ends: the app is killed while the model "thinks".
  let release = () => undefined;
  const never = { promise: new Promise((resolve) => (release = resolve)) };
  t.after(() => release());
  async function turn(request) {
    const name = taskOf(request);
    const said = dialogue(request).map(([, text]) => text).join("\n");
    if (said.includes("Go on")) return openai.text(`Resumed ${name}.`);
    if (toolResults(request).length === 0) {
      return openai.toolCalls([{ name: "write_file", input: { path: `${name}.txt`, content: `${name}\n` } }]);
    }
    // Its second turn waits: the app is killed while it does.
    await never.promise;
    return openai.text("too late");
  }

  await withApp(
    t,
    { script: Array(8).fill(turn), mode: "auto_edit", setup: (dirs) => repository(dirs), settings: { tasks_at_once: 2 } },
    async (app) => {
      for (const name of NAMES) {
        await app.click(tid("new-task"));
        await app.type(tid("new-task-prompt"), `Task ${name}: write your file.`);
        await app.type(tid("new-task-name"), name);
        await app.click(tid("new-task-start"));
        await app.waitFor(`${tid("task-row")}[data-task="${name}"]`, { what: `${name} listed` });
      }
      // Two run (their second requests wait); the third waits for a slot.
      await waitUntil(() => app.llm.requests.filter((r) => toolResults(r).length > 0).length >= 2, {
        timeout: 60_000,
        what: "both running tasks' second requests",
      });
      await app.waitFor(`${tid("task-row")}[data-task="gamma"][data-status="waiting for a slot"]`, { what: "gamma waiting for a slot" });
      assert.equal(app.llm.requests.filter((r) => taskOf(r) === "gamma").length, 0, "gamma reached the model over the limit");

      // kill -9, then start again on the same folders.
      const main = appMain(app);
      assert.equal(main.length, 1, `one app process: ${main.join("; ")}`);
      process.kill(Number(main[0].split(" ")[0]), "SIGKILL");
      await app.session.delete().catch(() => undefined);
      await waitUntil(() => appMain(app).length === 0, { what: "the killed app gone" });
      await app.open();

      // All three listed; the two that wrote show their change.
      for (const name of NAMES) await app.waitFor(`${tid("task-row")}[data-task="${name}"]`, { what: `${name} listed again` });
      for (const name of ["alpha", "beta"]) {
        const size = await app.waitFor(`${tid("task-row")}[data-task="${name}"] ${tid("task-size")}`, { what: `${name}'s change` });
        assert.match(size.text, /1 file, \+1/);
      }

      // alpha goes on from its conversation.
      await app.click(`${tid("task-row")}[data-task="alpha"]`);
      await app.waitFor(`${tid("task-panel")}[data-task="alpha"]`, { what: "alpha's panel" });
      await app.send("Go on, please.");
      await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Resumed alpha."), { what: "alpha resumed" });
      const resumed = app.llm.requests.at(-1);
      assert.equal(taskOf(resumed), "alpha");
      assert.ok(toolResults(resumed).length >= 1, "its earlier call's result was sent again");
      assert.deepEqual(dialogue(resumed).at(-1), ["user", "Go on, please."]);
    },
  );
});

function repository(dirs) {
  return import("node:child_process").then(({ execFileSync }) => {
    const git = (...args) => execFileSync("git", ["-C", dirs.project, ...args]);
    git("init", "-q", "-b", "main");
    git("add", "-A");
    git("-c", "user.name=E2E", "-c", "user.email=e2e@corral.invalid", "commit", "-q", "-m", "fixture");
  });
}
