// The approval's controls stay put. A user denies a write, then clicks
// out of habit where Deny was when a `node -e` command asks next: the
// click lands on Deny again (Approve once and Deny are in the same place
// for every kind of call), never on a button that saves a permanent rule;
// that one sits elsewhere and saves only once its rule is confirmed. Keys
// pressed while the approval area has the focus answer nothing.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { openai } from "../lib/wire.js";

const RECT = `const r = document.querySelector(arguments[0]).getBoundingClientRect();
  return { x: r.x, y: r.y, width: r.width, height: r.height };`;
const overlap = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

/** Every file under `dir`, with its text. */
function files(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true }).map((f) => path.join(dir, f)).filter((f) => fs.statSync(f).isFile()).map((f) => [f, fs.readFileSync(f, "utf8")]);
}

test("Approve and Deny stay put across kinds of call; a habitual click on Deny's spot never saves a rule", { timeout: 180_000 }, async (t) => {
  const script = [
    openai.toolCalls([{ name: "write_file", input: { path: "notes.txt", content: "a note\n" } }]),
    openai.toolCalls([{ name: "exec_shell", input: { command: "node", args: ["-e", "require('fs').writeFileSync('ran.txt', 'x')"] } }]),
    openai.text("Fine, nothing done."),
  ];
  await withApp(t, { script }, async (app) => {
    const area = tid("approval");
    const rect = async (testid) => app.session.execute(RECT, [`${area} ${tid(testid)}`]);
    await app.send("Take a note, then run something.");

    // The write asks: where its answers are.
    await app.waitFor(`${area}[data-tool="write_file"] [data-armed="true"]`, { what: "the write's approval taking clicks" });
    const writeOnce = await rect("approve-once");
    const writeDeny = await rect("deny");
    await app.answer("deny");
    await app.waitForAny(tid("tool-card"), (e, i) => i === 0 && e.attrs["data-status"] === "denied", { what: "the write denied" });

    // The command asks: the same answers in the same places; the rule's button elsewhere.
    await app.waitFor(`${area}[data-tool="exec_shell"] [data-armed="true"]`, { what: "the command's approval taking clicks" });
    assert.deepEqual(await rect("approve-once"), writeOnce, "Approve once has not moved");
    assert.deepEqual(await rect("deny"), writeDeny, "Deny has not moved");
    const always = await rect("approve-always");
    assert.ok(!overlap(always, writeDeny) && !overlap(always, writeOnce), `"Always allow" is not where Approve or Deny were: ${JSON.stringify({ always, writeDeny, writeOnce })}`);

    // Keys with the focus on the area (not on a control) answer nothing.
    await app.session.keys("\uE007 ya");
    await app.waitFor(`${area}[data-tool="exec_shell"]`, { what: "the command still waiting" });
    const card = await app.waitForAny(tid("tool-card"), (_e, i) => i === 1, { what: "the command's card" });
    assert.equal(card.attrs["data-status"], "waiting", "no key answered the approval");

    // The habitual click where Deny was.
    await app.session.clickAt(writeDeny.x + writeDeny.width / 2, writeDeny.y + writeDeny.height / 2);
    await app.waitForAny(tid("tool-card"), (e, i) => i === 1 && e.attrs["data-status"] === "denied", { what: "the command denied by that click" });
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("nothing done"), { what: "the reply" });
    assert.equal(fs.existsSync(path.join(app.dirs.project, "ran.txt")), false, "the command did not run");
    const rules = files(app.dirs.appConfig).filter(([, text]) => text.includes("writeFileSync") || /"program"\s*:\s*"node"/.test(text));
    assert.deepEqual(rules, [], "no rule was saved");
  });
});
