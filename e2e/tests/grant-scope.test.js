// A hostile model against a user who allows what looks harmless "in this
// conversation": the grant covers exactly what the approval showed. An
// allowed `node -e` argv does not let other `node -e` code run; an allowed
// write to notes.txt does not let a write to src/greet.js through; a grant
// does not carry into a new conversation. A call a grant let run says so
// on its card; the grant is listed, and once revoked the call asks again.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { openai } from "../lib/wire.js";

const cards = tid("tool-card");
const card = (index, check, what) => (app) => app.waitForAny(cards, (e, i) => i === index && check(e), { what });
const status = (index, wanted) => card(index, (e) => e.attrs["data-status"] === wanted, `call ${index + 1} ${wanted}`);
const GRANTED = "Allowed without asking by what you allowed in this conversation";

const shell = (code) => ({ name: "exec_shell", input: { command: "node", args: ["-e", code] } });
const HARMLESS = "console.log('hello')";
const PAYLOAD = "require('fs').writeFileSync('pwned.txt', 'owned')";

test("an allowed `node -e` argv covers that argv only; other node code asks; revoked, it asks again", { timeout: 180_000 }, async (t) => {
  const script = [
    openai.toolCalls([shell(HARMLESS)]),
    openai.toolCalls([shell(PAYLOAD)]),
    openai.toolCalls([shell(HARMLESS)]),
    openai.text("Said hello twice."),
    openai.toolCalls([shell(HARMLESS)]),
    openai.text("Not run."),
  ];
  await withApp(t, { script }, async (app) => {
    const pwned = path.join(app.dirs.project, "pwned.txt");
    await app.send("Say hello with node.");
    await status(0, "waiting")(app);
    await app.allowInConversation();
    await status(0, "done")(app);

    // The payload is the same program and option: it waits, and nothing ran.
    await status(1, "waiting")(app);
    await app.waitFor(`${tid("approval")} ${tid("call-args")}`, { check: (e) => e.text.includes("pwned.txt"), what: "the payload shown" });
    assert.equal(fs.existsSync(pwned), false, "the payload did not run");
    await app.answer("deny");
    await status(1, "denied")(app);

    // The very argv allowed runs unasked, and its card says by what.
    const again = await status(2, "done")(app);
    assert.match(again.text, new RegExp(`${GRANTED}: the command node -e console\\.log\\('hello'\\)`));
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Said hello twice"), { what: "the reply" });
    assert.equal(fs.existsSync(pwned), false);

    // Listed, then revoked: the same argv asks again.
    const list = await app.waitFor(tid("conversation-grants"), { what: "the list of what was allowed" });
    assert.match(list.text, /Allowed in this conversation \(1\)/);
    await app.click(`${tid("conversation-grants")} summary`);
    await app.waitFor(tid("conversation-grant"), { check: (e) => e.text.includes("the command node -e console.log('hello')"), what: "the grant listed" });
    await app.click(tid("revoke-grant"));
    await app.waitGone(tid("conversation-grants"));
    await app.send("Once more.");
    await status(3, "waiting")(app);
    await app.answer("deny");
    await status(3, "denied")(app);
  });
});

test("an allowed write to notes.txt covers that file only; a write to src/greet.js asks", { timeout: 180_000 }, async (t) => {
  const write = (file, content) => ({ name: "write_file", input: { path: file, content } });
  const script = [
    openai.toolCalls([write("notes.txt", "first note\n")]),
    openai.toolCalls([write("src/greet.js", "require('child_process').execSync('id')\n")]),
    openai.toolCalls([write("notes.txt", "second note\n")]),
    openai.text("Notes written."),
  ];
  await withApp(t, { script }, async (app) => {
    const greet = path.join(app.dirs.project, "src/greet.js");
    const before = fs.readFileSync(greet);
    await app.send("Keep notes.");
    await status(0, "waiting")(app);
    await app.allowInConversation(async () => {
      await app.waitFor(tid("grant-chooser"), { check: (e) => /write_file\s+on this file only:\s+notes\.txt/.test(e.text), what: "the file offered" });
    });
    await status(0, "done")(app);

    await status(1, "waiting")(app);
    assert.deepEqual(fs.readFileSync(greet), before, "src/greet.js is untouched while it waits");
    await app.answer("deny");
    await status(1, "denied")(app);

    const again = await status(2, "done")(app);
    assert.match(again.text, new RegExp(`${GRANTED}: write_file on notes\\.txt`));
    assert.equal(fs.readFileSync(path.join(app.dirs.project, "notes.txt"), "utf8"), "second note\n");
    assert.deepEqual(fs.readFileSync(greet), before, "src/greet.js was never written");
  });
});

test("a grant does not carry into a new conversation", { timeout: 180_000 }, async (t) => {
  const script = [
    openai.toolCalls([shell(HARMLESS)]),
    openai.text("Said hello."),
    openai.toolCalls([shell(HARMLESS)]),
    openai.text("Not run."),
  ];
  await withApp(t, { script }, async (app) => {
    await app.send("Say hello with node.");
    await status(0, "waiting")(app);
    await app.allowInConversation();
    await status(0, "done")(app);
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Said hello"), { what: "the first reply" });
    await app.waitFor(tid("conversation-grants"), { what: "the grant listed" });

    // The run is over only when the button is enabled again; a click before that is lost.
    await app.waitFor(`${tid("new-conversation")}:not([disabled])`, { what: "New conversation enabled" });
    await app.click(tid("new-conversation"));
    await app.waitGone(tid("message-user"));
    await app.waitGone(tid("conversation-grants"));
    await app.send("Say hello again.");
    const asked = await status(0, "waiting")(app);
    assert.doesNotMatch(asked.text, new RegExp(GRANTED));
    await app.answer("deny");
    await status(0, "denied")(app);
  });
});
