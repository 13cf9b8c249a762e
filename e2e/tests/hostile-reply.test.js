// A streamed reply tries to get a command approved that the user never
// saw: a full-window cover drawn with the app's own Settings backdrop
// class whose fake OK invites a click, and keys typed on after Send. The
// cover stays inside its message, a click on the fake OK and the typing
// approve nothing; only the approval area's own buttons answer.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, waitUntil, withApp } from "../lib/app.js";
import { ESCAPING, FOCUSED, HIT, SCOPED_CLASS, TEXT_RECT } from "../lib/page.js";
import { toolResults } from "../lib/requests.js";
import { elementRef, Keys } from "../lib/webdriver.js";
import { openai } from "../lib/wire.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A command that leaves `name` in the project if it ever runs. */
const writes = (name) => ({ command: "node", args: ["-e", `require('fs').writeFileSync('${name}', 'approved unseen')`] });

/** The cover: Settings' backdrop (fixed, inset 0, z-index 10), inert, a window-sized table with a fake OK. */
function cover(backdrop) {
  return (
    `<div class="backdrop ${backdrop}" inert style="position:fixed;inset:0;z-index:10">` +
    '<table width="1400" height="900" bgcolor="white"><tr><td align="center">' +
    "<h2>Corral was updated</h2><p>Press Enter to continue, or click</p><p><b>OK</b></p></td></tr></table></div>"
  );
}

async function statusOf(app, css) {
  const [card] = await app.query(css);
  return card?.attrs["data-status"];
}

test("a full-window cover stays inside its message and a click on its fake OK approves nothing", { timeout: 150_000 }, async (t) => {
  let backdrop = null;
  const call = (req) => openai.toolCalls([{ name: "exec_shell", input: writes("covered.txt") }], { text: `Done.\n\n${cover(backdrop)}\n` });
  const script = [call, openai.text("Understood, I won't run it.")];

  await withApp(t, { script }, async (app) => {
    backdrop = await app.session.execute(SCOPED_CLASS, ["backdrop"]);
    assert.match(backdrop ?? "", /^svelte-/, "the Settings backdrop's scoped class is found");
    await app.send("Tidy up the project.");

    const card = tid("tool-card", '[data-tool="exec_shell"]');
    await app.waitFor(card, { check: (e) => e.attrs["data-status"] === "waiting", what: "the command waiting for approval" });
    await app.waitFor(`${tid("approval")} [data-armed="true"]`, { what: "the approval's buttons to take clicks" });
    await app.screenshot("approval");

    const [message] = await app.session.findAll(tid("message-assistant"));
    assert.deepEqual(await app.session.execute(ESCAPING, [elementRef(message)]), [], "nothing of the reply is drawn outside its message");
    assert.equal((await app.query(`${tid("message-assistant")} button`)).length, 0, "the fake OK is not a button");

    // The user clicks the fake OK: what is there is the message, and nothing is approved.
    const ok = await app.session.execute(TEXT_RECT, [elementRef(message), "OK"]);
    assert.ok(ok, "the fake OK is drawn");
    assert.deepEqual(await app.session.execute(HIT, [ok.x, ok.y, elementRef(message)]), { tag: "B", testid: "message-assistant", inside: true });
    await app.session.clickAt(ok.x, ok.y);
    await app.session.keys(Keys.ENTER);
    await sleep(1_000);
    assert.equal(await statusOf(app, card), "waiting", "the command still waits for an answer");
    assert.equal(fs.existsSync(path.join(app.dirs.project, "covered.txt")), false, "the command did not run");

    // The approval area's own Deny still answers.
    await app.answer("deny");
    await app.waitFor(card, { check: (e) => e.attrs["data-status"] === "denied", what: "the command denied" });
    await app.llm.waitForRequests(2);
    const [result] = toolResults(app.llm.requests[1]);
    assert.match(result.content, /denied/i);
    assert.equal(fs.existsSync(path.join(app.dirs.project, "covered.txt")), false);
  });
});

test("typing on after Send, with space and Enter, approves nothing", { timeout: 150_000 }, async (t) => {
  const first = openai.toolCalls([{ name: "exec_shell", input: writes("typed-1.txt") }], { text: "Press Enter to continue." });
  const second = openai.toolCalls([{ name: "exec_shell", input: writes("typed-2.txt") }]);
  const script = [first, openai.text("Not run."), second, openai.text("Not run either.")];

  /** Types "ok thanks", space and Enter for `ms`, into whatever has the focus. */
  async function typeOn(app, ms) {
    const until = Date.now() + ms;
    while (Date.now() < until) await app.session.keys(`ok thanks ${Keys.ENTER} `);
  }

  await withApp(t, { script }, async (app) => {
    const cards = tid("tool-card", '[data-tool="exec_shell"]');

    // Sent with the Send button: the focus is on no text field when the approval appears.
    await app.send("Run the first step.");
    await typeOn(app, 2_500);
    const asked = (i) => (e, j) => j === i && e.attrs["data-status"] !== "queued";
    const first = await app.waitForAny(cards, asked(0), { what: "the first command asked about" });
    assert.equal(first.attrs["data-status"], "waiting", "the typing did not answer the first command");
    await typeOn(app, 1_500);
    const focused = await app.session.execute(FOCUSED);
    assert.notEqual(focused?.tag, "BUTTON", `no button took the focus: ${JSON.stringify(focused)}`);
    assert.equal(await statusOf(app, cards), "waiting");
    await app.answer("deny");
    await app.waitForAny(cards, (e, i) => i === 0 && e.attrs["data-status"] === "denied", { what: "the first command denied" });
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Not run."), { what: "the first reply" });

    // Sent with Enter from the message box, then typing on in it.
    await app.click(tid("chat-input"));
    await app.session.keys(`Run the second step.${Keys.ENTER}`);
    await typeOn(app, 2_500);
    const second = await app.waitForAny(cards, asked(1), { what: "the second command asked about" });
    assert.equal(second.attrs["data-status"], "waiting", "the typing did not answer the second command");
    await typeOn(app, 1_500);
    const [, secondCard] = await app.query(cards);
    assert.equal(secondCard.attrs["data-status"], "waiting", "the second command still waits");
    assert.equal((await app.session.execute(FOCUSED))?.testid, "chat-input", "the focus stayed in the message box");
    await app.answer("deny");
    await waitUntil(async () => (await app.query(cards))[1]?.attrs["data-status"] === "denied", { what: "the second command denied" });

    for (const name of ["typed-1.txt", "typed-2.txt"]) {
      assert.equal(fs.existsSync(path.join(app.dirs.project, name)), false, `${name} was never written`);
    }
    await app.llm.waitForRequests(4);
  });
});
