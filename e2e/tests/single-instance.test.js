// `corral FOLDER` with Corral already running: the second start hands the
// folder to the running app over the session bus and exits; the window
// opens that folder. A folder that cannot be opened is said in the window
// and the open project stays.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { APP_BINARY, processesWithHome, tid, withApp } from "../lib/app.js";

/** A second `corral ARGS...` started in `cwd`; resolves to its exit and output. */
function secondStart(app, args, cwd) {
  return new Promise((resolve) => {
    execFile(APP_BINARY, args, { cwd, env: app.env, timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (error.code ?? error.signal) : 0, stdout, stderr }),
    );
  });
}

/** The app processes (not the driver's, not WebKit's) of this test. */
function apps(app) {
  return processesWithHome(app.dirs.home).filter((p) => p.split(" ")[1] === APP_BINARY);
}

test("a second `corral FOLDER` opens FOLDER in the running app", { timeout: 120_000 }, async (t) => {
  // desktop: a private session bus, where the first app owns its name.
  await withApp(t, { script: [], desktop: true }, async (app) => {
    await app.waitFor(tid("project-name"), { check: (e) => e.text.includes("demo"), what: "the first project" });
    assert.equal(apps(app).length, 1);

    const work = path.dirname(app.dirs.project);
    fs.mkdirSync(path.join(work, "other"));
    fs.writeFileSync(path.join(work, "other", "notes.txt"), "the other project\n");
    // A relative folder: taken from the second start's working folder, not the app's.
    const second = await secondStart(app, ["other"], work);
    assert.equal(second.code, 0, `the second start failed: ${second.stderr}`);

    await app.waitFor(tid("project-name"), { check: (e) => e.text.includes("other"), what: "the other project open in the first app" });
    assert.equal(apps(app).length, 1, "the second start did not stay");
    await app.screenshot("other-open");

    const missing = await secondStart(app, [path.join(work, "missing")], work);
    assert.equal(missing.code, 0, `the second start failed: ${missing.stderr}`);
    const failure = await app.waitFor(tid("launch-failure"), { what: "the window saying the folder failed" });
    assert.match(failure.text, /missing/);
    await app.waitFor(tid("project-name"), { check: (e) => e.text.includes("other"), what: "the other project still open" });
  });
});
