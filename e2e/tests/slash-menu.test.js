// The `/` menu of the message box, in the real window: typing `/` lists
// Corral's built-ins and the project's own commands (from
// .claude/commands/, with their argument hints); Tab completes the chosen
// name; and the command sent with its arguments reaches the model as the
// command's text with the arguments put in, while the conversation shows
// what the user typed; and the command palette (Ctrl+K) lists the command
// too and puts it in the box.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { Keys, pressCtrl } from "../lib/webdriver.js";
import { openai } from "../lib/wire.js";

// A command as Claude Code's docs write one: front matter, then the prompt with positional arguments.
const FIX_BUG = "---\ndescription: Fix a bug from the tracker\nargument-hint: [number] [priority]\n---\nFix bug #$1 with priority $2, then run the tests.\n";

test("typing / lists built-ins and the project's commands; Tab completes; the command's text reaches the model with its arguments", { timeout: 120_000 }, async (t) => {
  const script = [openai.text("Fixing bug 123.")];
  const setup = (dirs) => {
    fs.mkdirSync(path.join(dirs.project, ".claude", "commands", "tracker"), { recursive: true });
    fs.writeFileSync(path.join(dirs.project, ".claude", "commands", "tracker", "fix-bug.md"), FIX_BUG);
  };
  await withApp(t, { script, setup }, async (app) => {
    const options = tid("slash-option");
    await app.type(tid("chat-input"), "/");
    await app.waitForAny(options, (e) => e.attrs["data-name"] === "tracker:fix-bug", { what: "the project's command in the menu" });
    const names = (await app.query(options)).map((e) => e.attrs["data-name"]);
    for (const builtIn of ["compact", "new", "model", "undo"]) assert.ok(names.includes(builtIn), `/${builtIn} listed: ${names.join(" ")}`);
    const fix = (await app.query(options)).find((e) => e.attrs["data-name"] === "tracker:fix-bug");
    assert.match(fix.text, /\[number\] \[priority\]/);
    assert.match(fix.text, /Fix a bug from the tracker/);

    // Narrowed by what is typed, then completed with Tab.
    await app.session.keys("tr");
    await app.waitFor(options, { check: (e) => e.attrs["data-name"] === "tracker:fix-bug", what: "the command first once narrowed" });
    await app.session.keys(Keys.TAB);
    await app.waitGone(tid("slash-menu"));
    await app.session.keys("123 high");
    await app.click(tid("send"));

    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Fixing bug 123."), { what: "the reply" });
    assert.equal(app.llm.requests.length, 1);
    const sent = JSON.stringify(app.llm.requests[0].body.messages.at(-1));
    assert.match(sent, /Fix bug #123 with priority high, then run the tests\./, "the command's text with its arguments");
    // The window shows what the user typed.
    await app.waitForAny(tid("message-user"), (e) => e.text.includes("/tracker:fix-bug 123 high"), { what: "the typed command in the conversation" });

    // The command palette lists it too, after the actions: chosen, it waits in the box for its arguments.
    await pressCtrl(app.session, "k");
    await app.type(tid("palette-input"), "fix-bug");
    await app.waitFor(tid("palette-command"), { check: (e) => e.attrs["data-name"] === "tracker:fix-bug", what: "the command in the palette" });
    await app.session.keys(Keys.ENTER);
    await app.waitGone(tid("command-palette"));
    const boxValue = () => app.session.execute(`return document.querySelector('[data-testid="chat-input"]').value`, []);
    const until = Date.now() + 10_000;
    while ((await boxValue()) !== "/tracker:fix-bug " && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    assert.equal(await boxValue(), "/tracker:fix-bug ", "the command in the box");
  });
});
