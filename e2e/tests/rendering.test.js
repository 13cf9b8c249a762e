// Where the machine has no GPU (no DRM render node, as under Xvfb), the app
// turns OpenGL off in GTK and WebKit before they start: their GL paths
// would only run on Mesa's software rasterizer, at about 90 MiB more. The
// web process inherits the switches, and the window works with them. A
// user's own choice of any of those variables stands instead.

import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { processesWithHome, tid, withApp } from "../lib/app.js";
import { openai } from "../lib/wire.js";

const SWITCHES = ["GDK_GL=disable", "WEBKIT_DISABLE_DMABUF_RENDERER=1", "WEBKIT_DISABLE_COMPOSITING_MODE=1"];

const hasGpu = () => {
  try {
    return fs.readdirSync("/dev/dri").some((name) => name.startsWith("renderD"));
  } catch {
    return false;
  }
};

/** The environment the app's WebKitWebProcess was started with, as NAME=value lines. */
function webProcessEnvironment(app) {
  const web = processesWithHome(app.dirs.home).find((p) => /WebKitWebProcess/.test(p));
  assert.ok(web, "the app has a web process");
  return fs.readFileSync(`/proc/${web.split(" ")[0]}/environ`, "utf8").split("\0");
}

async function replies(app) {
  await app.send("Hello?");
  await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Hello back"), { what: "the reply" });
}

test("without a GPU the web process draws on the CPU, and the window works", { timeout: 60_000 }, async (t) => {
  if (hasGpu()) return t.skip("this machine has a GPU");
  await withApp(t, { script: [openai.text("Hello back.")] }, async (app) => {
    const env = webProcessEnvironment(app);
    for (const line of SWITCHES) assert.ok(env.includes(line), `the web process has ${line}`);
    await replies(app);
  });
});

test("a user's own rendering choice stands", { timeout: 60_000 }, async (t) => {
  const env = { WEBKIT_DISABLE_DMABUF_RENDERER: "0" };
  await withApp(t, { script: [openai.text("Hello back.")], env }, async (app) => {
    const seen = webProcessEnvironment(app);
    assert.ok(seen.includes("WEBKIT_DISABLE_DMABUF_RENDERER=0"), "the user's value is kept");
    assert.ok(!seen.includes("GDK_GL=disable"), "nothing else is switched off");
    assert.ok(!seen.includes("WEBKIT_DISABLE_COMPOSITING_MODE=1"), "nothing else is switched off");
    await replies(app);
  });
});
