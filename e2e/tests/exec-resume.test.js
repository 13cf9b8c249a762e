// A conversation `corral-cli exec` began, and `exec --resume` continued,
// opens in the window with both turns: exec writes the same history the
// window shows, under the same project.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import fs from "node:fs";
import { test } from "node:test";
import { CLI_BINARY, driverEnv, tid, withApp } from "../lib/app.js";
import { openai } from "../lib/wire.js";

/**
 * Runs `corral-cli exec --json` as the app's user; its last event. Not
 * synchronously: the scripted LLM server answers from this process.
 */
async function exec(dirs, args) {
  const { stdout } = await promisify(execFile)(CLI_BINARY, ["exec", "--root", dirs.project, "--json", ...args], { env: driverEnv(dirs) });
  return JSON.parse(stdout.trim().split("\n").at(-1));
}

test("a conversation exec began and exec --resume continued opens in the window with both turns", { timeout: 120_000 }, async (t) => {
  assert.ok(fs.existsSync(CLI_BINARY), `corral-cli is built beside the app: ${CLI_BINARY}`);
  const script = [openai.text("The heron fishes at dawn."), openai.text("It fishes at dusk too.")];
  let id = null;
  const setup = async (dirs) => {
    const first = await exec(dirs, ["When does the heron fish?"]);
    assert.equal(first.type, "final");
    assert.equal(first.outcome, "done", JSON.stringify(first));
    id = first.conversation;
    const second = await exec(dirs, ["--resume", id, "Any other time?"]);
    assert.deepEqual([second.outcome, second.conversation], ["done", id]);
  };
  await withApp(t, { script, setup }, async (app) => {
    // The project opens on its newest conversation: exec's, whole.
    const item = await app.waitFor(tid("conversation-item"), { what: "exec's conversation in the list" });
    assert.equal(item.attrs["data-id"], id);
    await app.click(`${tid("conversation-item")}[data-id="${id}"] ${tid("conversation-open")}`);
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("at dusk too"), { what: "the resumed turn's answer" });
    const texts = async (kind) => (await app.query(tid(`message-${kind}`))).map((e) => e.text.trim());
    assert.deepEqual(await texts("user"), ["When does the heron fish?", "Any other time?"]);
    assert.deepEqual(await texts("assistant"), ["The heron fishes at dawn.", "It fishes at dusk too."]);
    // The resumed run was sent the first turn too.
    const sent = app.llm.requests[1].body.messages.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
    assert.ok(sent.some((c) => c.includes("The heron fishes at dawn.")));
  });
});
