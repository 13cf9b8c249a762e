// A project's hooks run only once the user trusted them, as shown: the
// window lists the project's settings file with its hook's command, Trust
// makes it run (its output reaches the model as context), and a change to
// the file on disk lapses the trust, so the window asks again and the
// changed hook does not run until trusted in turn.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { openai } from "../lib/wire.js";

const settings = (word) =>
  JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command: `echo "context from the hook: ${word}"` }] }] } }, null, 2);

test("the project's hooks wait for trust, run once trusted, and ask again after a change", { timeout: 180_000 }, async (t) => {
  const script = [openai.text("First reply."), openai.text("Second reply."), openai.text("Third reply.")];
  const setup = (dirs) => {
    fs.mkdirSync(path.join(dirs.project, ".claude"));
    fs.writeFileSync(path.join(dirs.project, ".claude", "settings.json"), settings("apple"));
  };
  await withApp(t, { script, setup }, async (app) => {
    /** Trust, once it takes clicks (it arms as Approve does, after standing still a moment). */
    const trust = async () => {
      await app.waitFor(tid("hook-trust-yes", '[data-armed="true"]'), { what: "Trust taking clicks" });
      await app.click(tid("hook-trust-yes"));
    };
    /** The user's message of request `i`, as the model got it. */
    const sent = (i) => JSON.stringify(app.llm.requests[i].body.messages.at(-1));

    // Asked at once, with the command whole.
    await app.waitFor(tid("hook-line"), { check: (e) => e.text.includes('echo "context from the hook: apple"'), what: "the hook listed for trust" });
    await trust();
    await app.waitGone(tid("hook-trust"));
    await app.send("Hello.");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("First reply."), { what: "the first reply" });
    assert.match(sent(0), /context from the hook: apple/, "the trusted hook ran and the model got its output");

    // The file changes on disk: its trust lapses, the changed hook does not run, and the window asks again.
    fs.writeFileSync(path.join(app.dirs.project, ".claude", "settings.json"), settings("pear"));
    await app.send("Again.");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Second reply."), { what: "the second reply" });
    assert.doesNotMatch(sent(1), /context from the hook/, "an untrusted hook does not run");
    await app.waitFor(tid("hook-line"), { check: (e) => e.text.includes('echo "context from the hook: pear"'), what: "the changed hook asked about" });

    await trust();
    await app.waitGone(tid("hook-trust"));
    await app.send("Once more.");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Third reply."), { what: "the third reply" });
    assert.match(sent(2), /context from the hook: pear/, "trusted again, the changed hook runs");
  });
});
