// Nothing outlives the app — not its WebKit processes, not a
// command still running (commands run in their own process groups).
//
// WebKitWebDriver ends the app with SIGKILL when its window is closed, so
// that test covers the last resort (the command dies with the thread that
// started it); SIGTERM (a logout, `kill`) goes through the app's own stop,
// which also ends the command's children.

import assert from "node:assert/strict";
import { test } from "node:test";
import { APP_BINARY, processesIn, processesWithHome, tid, waitUntil, withApp } from "../lib/app.js";
import { openai } from "../lib/wire.js";

/** A command quiet after its first line (one that keeps printing would die of EPIPE anyway). */
function quietCommand({ withChild }) {
  const child = withChild ? "require('child_process').spawn('sleep', ['60'], { stdio: 'ignore' }); " : "";
  return { command: "node", args: ["-e", `${child}console.log('started'); setInterval(() => {}, 1000);`] };
}

/** The command's own processes in the project, not the sandbox (bwrap) around them. */
const commandsIn = (dir) => processesIn(dir).filter((p) => !/^\d+: \S*bwrap /.test(p));

async function startCommand(app, expected) {
  await app.send("Start the server.");
  await app.waitForAny(tid("command-output"), (e) => e.text.includes("started"), { what: "the command's output" });
  await waitUntil(() => commandsIn(app.dirs.project).length === expected, { what: `${expected} processes running in the project` });
}

/** The app and its WebKit processes (not the driver). */
const appProcesses = (app) => processesWithHome(app.dirs.home).filter((p) => !/WebKitWebDriver|tauri-driver/.test(p));

async function allGone(app) {
  await waitUntil(() => appProcesses(app).length === 0 && processesIn(app.dirs.project).length === 0, {
    timeout: 10_000,
    what: "the app, its WebKit processes and the command to end",
  }).catch((error) => {
    error.message += `\n  app: ${appProcesses(app).join("; ")}\n  in the project: ${processesIn(app.dirs.project).join("; ")}`;
    throw error;
  });
}

test("SIGTERM to the app stops a running command and its children", { timeout: 120_000 }, async (t) => {
  // The app may tell the model the command was stopped before it exits:
  // that request gets an answer too (the test is about the processes).
  const script = [openai.toolCalls([{ name: "exec_shell", input: quietCommand({ withChild: true }) }]), openai.text("Stopped.")];
  await withApp(t, { script, mode: "full_auto" }, async (app) => {
    await startCommand(app, 2);
    const main = appProcesses(app).filter((p) => p.split(" ")[1] === APP_BINARY);
    assert.equal(main.length, 1, `one app process: ${appProcesses(app).join("; ")}`);
    app.windowClosed = true;
    process.kill(Number(main[0].split(" ")[0]), "SIGTERM");
    await allGone(app);
  });
});

test("closing the window ends the app, its WebKit processes and a running command", { timeout: 120_000 }, async (t) => {
  const script = [openai.toolCalls([{ name: "exec_shell", input: quietCommand({ withChild: false }) }]), openai.text("Stopped.")];
  await withApp(t, { script, mode: "full_auto" }, async (app) => {
    await startCommand(app, 1);
    assert.ok(appProcesses(app).length >= 3, `the app and its WebKit processes: ${appProcesses(app).join("; ")}`);
    await app.closeWindow();
    await allGone(app);
  });
});
