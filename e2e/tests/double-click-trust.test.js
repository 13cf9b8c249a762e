// A cloned project ships a hook in `.claude/settings.json`; the user leaves
// "trust these hooks?" unanswered. The model's next call asks for approval
// and the user double-clicks Approve (two real clicks 150 ms apart): the
// first approves and the approval area goes, the hooks panel slides down
// into its place, and the second click lands on Trust. Trust, moved, takes
// no click until it has stood still for the arming delay: the hooks stay
// untrusted, the hook does not run at the next message, and the window
// still asks.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, waitUntil, withApp } from "../lib/app.js";
import { openai } from "../lib/wire.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const RECT = `const r = document.querySelector(arguments[0]).getBoundingClientRect();
  return { left: r.left, top: r.top, right: r.right, bottom: r.bottom };`;
/** The test id of what is drawn at a point (or of its nearest ancestor with one). */
const AT = `return document.elementFromPoint(arguments[0], arguments[1])?.closest("[data-testid]")?.dataset.testid ?? null;`;
const HOOK = 'echo "context from the hook: apple"';
const settings = JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command: HOOK }] }] } }, null, 2);

test("a double click on Approve does not trust the project's hooks that slide into its place", { timeout: 180_000 }, async (t) => {
  const script = [
    openai.toolCalls([{ name: "write_file", input: { path: "notes.txt", content: "a note\n" } }], { text: "I'll note that down." }),
    openai.text("Noted."),
    openai.text("Second reply."),
  ];
  const setup = (dirs) => {
    fs.mkdirSync(path.join(dirs.project, ".claude"));
    fs.writeFileSync(path.join(dirs.project, ".claude", "settings.json"), settings);
  };
  await withApp(t, { script, setup }, async (app) => {
    const rect = (css) => app.session.execute(RECT, [css]);
    const at = (x, y) => app.session.execute(AT, [x, y]);
    /** The user's message of request `i`, as the model got it. */
    const sent = (i) => JSON.stringify(app.llm.requests[i].body.messages.at(-1));

    // The hooks are listed and left unanswered. Where Trust stands with no
    // approval under it is where it will be once the approval area goes.
    await app.waitFor(tid("hook-line"), { check: (e) => e.text.includes(HOOK), what: "the hook listed for trust" });
    let trustAlone = null;
    await waitUntil(
      async () => {
        const [before, now] = [trustAlone, await rect(tid("hook-trust-yes"))];
        trustAlone = now;
        return JSON.stringify(before) === JSON.stringify(now);
      },
      { interval: 300, what: "Trust drawn and still" },
    );

    await app.send("Take a note.");
    await app.waitFor(`${tid("approval")} [data-armed="true"]`, { what: "the approval's buttons to take clicks" });
    await app.readWhole();
    const approve = await rect(`${tid("approval")} ${tid("approve-once")}`);
    // A point on Approve that Trust will cover once the area is gone.
    const both = {
      left: Math.max(approve.left, trustAlone.left),
      right: Math.min(approve.right, trustAlone.right),
      top: Math.max(approve.top, trustAlone.top),
      bottom: Math.min(approve.bottom, trustAlone.bottom),
    };
    assert.ok(both.right - both.left >= 4 && both.bottom - both.top >= 4, `Trust, with the approval gone, lies where Approve is: ${JSON.stringify({ approve, trustAlone })}`);
    const [x, y] = [(both.left + both.right) / 2, (both.top + both.bottom) / 2];
    assert.equal(await at(x, y), "approve-once", "the point is on Approve");
    await app.screenshot("approval");

    // The double click.
    await app.session.clicksAt(x, y, { count: 2, gap: 150 });
    await app.waitForAny(tid("tool-card"), (e, i) => i === 0 && e.attrs["data-status"] === "done", { what: "the write approved by the first click" });
    assert.equal(fs.readFileSync(path.join(app.dirs.project, "notes.txt"), "utf8"), "a note\n");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Noted."), { what: "the reply after the write" });
    await sleep(1_000);
    assert.equal((await app.query(tid("hook-trust"))).length, 1, "the hooks still wait for an answer: the second click trusted nothing");
    assert.equal(await at(x, y), "hook-trust-yes", "the second click's point is on Trust, which slid into Approve's place");

    // Not trusted: the hook does not run at the next message, and the window still asks.
    await app.send("Again.");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Second reply."), { what: "the second reply" });
    assert.doesNotMatch(sent(2), /context from the hook/, "the hook did not run: it was never trusted");
    await app.waitFor(tid("hook-line"), { check: (e) => e.text.includes(HOOK), what: "the hook still listed for trust" });
  });
});
