// Two conversations in one project: New conversation keeps the first,
// switching shows each, both are there after a restart, search finds a word
// of the older one, and a fork from its first message is a new
// conversation while the original stays as it was. A conversation reopened
// shows its size in the context meter. A fork from before a turn that
// changed files asks whether to restore them too: without, the files stay
// as they are; with, the restore's diff shows first and the files are back.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { dialogue } from "../lib/requests.js";
import { openai } from "../lib/wire.js";

const item = (id) => `${tid("conversation-item")}[data-id="${id}"]`;

test("conversations: keep, switch, restart, search, fork", { timeout: 180_000 }, async (t) => {
  const script = [
    openai.text("The otter lives by the river."),
    openai.text("Noted: the kettle is green."),
    openai.text("Otters also like lakes."),
  ];

  await withApp(t, { script }, async (app) => {
    const items = () => app.query(tid("conversation-item"));
    const messages = async (kind) => (await app.query(tid(`message-${kind}`))).map((e) => e.text.trim());

    // The first conversation.
    await app.send("Where does the otter live?");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("by the river"), { what: "the first reply" });
    const first = await app.waitFor(`${tid("conversation-item")}[data-entries="2"]`, { what: "the first conversation stored" });
    const older = first.attrs["data-id"];

    // New conversation keeps it (the button is enabled once the run is over).
    await app.waitFor(`${tid("new-conversation")}:not([disabled])`, { what: "New conversation enabled" });
    await app.click(tid("new-conversation"));
    await app.waitGone(tid("message-user"));
    await app.send("Remember: the kettle is green.");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("kettle is green"), { what: "the second reply" });
    const second = await app.waitForAny(
      tid("conversation-item"),
      (e) => e.attrs["data-id"] !== older && e.attrs["data-entries"] === "2",
      { what: "the second conversation stored" },
    );
    const newer = second.attrs["data-id"];
    assert.deepEqual((await items()).map((e) => e.attrs["data-id"]), [newer, older], "newest first");
    assert.equal(second.attrs["data-current"], "true");

    // Switch to the first and back.
    await app.click(`${item(older)} ${tid("conversation-open")}`);
    await app.waitForAny(tid("message-user"), (e) => e.text.includes("otter"), { what: "the first conversation shown" });
    assert.deepEqual(await messages("user"), ["Where does the otter live?"]);
    await app.click(`${item(newer)} ${tid("conversation-open")}`);
    await app.waitForAny(tid("message-user"), (e) => e.text.includes("kettle"), { what: "the second conversation shown" });

    // Both are there after a restart; the newest is open.
    await app.restart();
    await app.waitForAny(tid("message-user"), (e) => e.text.includes("kettle"), { what: "the newest open after the restart" });
    // Its meter shows its size at once, before anything is sent.
    const requestsBefore = app.llm.requests.length;
    await app.waitFor(tid("context-meter"), { check: (e) => Number(e.attrs["data-used"]) > 0, what: "the reopened conversation's size in the meter" });
    assert.equal(app.llm.requests.length, requestsBefore, "nothing was sent to size it");
    const listed = await items();
    assert.deepEqual(listed.map((e) => [e.attrs["data-id"], e.attrs["data-entries"]]), [[newer, "2"], [older, "2"]]);
    assert.match(listed[1].text, /Where does the otter live\?/);

    // Search finds a word of the older one.
    await app.type(tid("conversation-search"), "otter");
    await app.waitFor(tid("search-hit"), { what: "a search result" });
    // The question and the answer of the older one, nothing of the newer.
    const hits = await app.query(tid("search-hit"));
    assert.deepEqual(hits.map((h) => h.attrs["data-id"]), [older, older]);
    const marked = await app.session.execute(
      `return [...document.querySelectorAll('[data-testid="search-hit"] mark')].map((m) => m.textContent);`,
    );
    assert.deepEqual(marked, ["otter", "otter"]);
    await app.click(tid("search-hit"));
    await app.waitForAny(tid("message-user"), (e) => e.text.includes("otter"), { what: "the search result opened" });
    // Clearing the search shows the list again.
    await app.session.execute(
      `const box = document.querySelector('[data-testid="conversation-search"]');
       box.value = ""; box.dispatchEvent(new Event("input", { bubbles: true }));`,
    );
    await app.waitFor(item(older), { what: "the list back" });

    // Fork from the first message: a new conversation with it and its answer.
    await app.click(tid("fork-message"));
    const fork = await app.waitForAny(
      tid("conversation-item"),
      (e) => e.attrs["data-id"] !== older && e.attrs["data-id"] !== newer && e.attrs["data-current"] === "true",
      { what: "the fork open" },
    );
    const forked = fork.attrs["data-id"];
    assert.equal(fork.attrs["data-entries"], "2");
    assert.deepEqual(await messages("user"), ["Where does the otter live?"]);
    // It goes on by itself, with the copied messages sent to the model.
    await app.send("And lakes?");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("like lakes"), { what: "the fork's reply" });
    await app.waitFor(`${item(forked)}[data-entries="4"]`, { what: "the fork's new messages stored" });
    assert.deepEqual(dialogue(app.llm.requests.at(-1)), [
      ["user", "Where does the otter live?"],
      ["assistant", "The otter lives by the river."],
      ["user", "And lakes?"],
    ]);

    // The original is unchanged.
    await app.click(`${item(older)} ${tid("conversation-open")}`);
    await app.waitFor(`${item(older)}[data-current="true"]`, { what: "the original open" });
    await app.waitForAny(tid("message-user"), (e) => e.text.includes("otter"), { what: "the original shown" });
    assert.deepEqual(await messages("user"), ["Where does the otter live?"]);
    assert.equal((await messages("assistant")).length, 1);
    assert.equal((await app.query(item(older)))[0].attrs["data-entries"], "2");
    await app.screenshot("conversations");
  });
});

test("fork from before a turn that changed files: restore them too, or not", { timeout: 240_000 }, async (t) => {
  const edit = openai.toolCalls([
    { name: "edit_file", input: { path: "src/greet.js", old_string: "Hello, ${name}!", new_string: "Hi there, ${name}!" } },
  ]);
  const script = [openai.text("Hello to you."), edit, openai.text("Changed the greeting.")];

  await withApp(t, { script }, async (app) => {
    const greet = path.join(app.dirs.project, "src/greet.js");
    const original = fs.readFileSync(greet, "utf8");
    const messages = async (kind) => (await app.query(tid(`message-${kind}`))).map((e) => e.text.trim());
    const currentId = async () => (await app.waitFor(`${tid("conversation-item")}[data-current="true"]`, { what: "a current conversation" })).attrs["data-id"];
    /** Clicks `button` on the row of the user message that says `text`. */
    const onMessage = async (text, button) => {
      const row = await app.waitForAny(".row", (e) => e.text.includes(text) && e.text.includes("Edit and resend"), { what: `the row of "${text}"` });
      await app.click(`.row[data-index="${row.attrs["data-index"]}"] ${tid(button)}`);
    };

    // A turn that changes nothing, then one that edits a file.
    await app.send("Say hello.");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Hello to you"), { what: "the first reply" });
    await app.send("Change the greeting.");
    await app.waitFor(tid("tool-card", '[data-tool="edit_file"][data-status="waiting"]'), { what: "the edit waiting" });
    await app.answer("approve-once");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Changed the greeting"), { what: "the final reply" });
    const changed = fs.readFileSync(greet, "utf8");
    assert.match(changed, /Hi there/);
    await app.waitFor(`${tid("conversation-item")}[data-entries="6"]`, { what: "the conversation stored" });
    const first = await currentId();
    await app.waitFor(tid("restore-turn"), { what: "the edit's checkpoint offered" });

    // Edit and resend, files as they are: the fork asks, and its plain answer leaves them.
    await onMessage("Change the greeting.", "edit-message");
    await app.waitFor(tid("fork-dialog"), { what: "the fork's question" });
    await app.screenshot("fork-question");
    await app.click(tid("fork-only"));
    await app.waitForAny(`${tid("conversation-item")}[data-current="true"]`, (e) => e.attrs["data-id"] !== first, { what: "the plain fork open" });
    const plain = await currentId();
    assert.deepEqual(await messages("user"), ["Say hello."]);
    assert.equal(fs.readFileSync(greet, "utf8"), changed, "a fork without restore leaves the files");

    // Back to the first; this time the files go back too, after the diff.
    await app.click(`${item(first)} ${tid("conversation-open")}`);
    await app.waitFor(`${item(first)}[data-current="true"]`, { what: "the first open again" });
    await app.waitFor(tid("restore-turn"), { what: "its checkpoint offered again" });
    await onMessage("Change the greeting.", "edit-message");
    await app.waitFor(tid("fork-dialog"), { what: "the fork's question again" });
    await app.click(tid("fork-restore"));
    await app.waitForAny(tid("change"), (e) => e.attrs["data-path"] === "src/greet.js" && e.text.includes("Hello, ${name}!"), {
      what: "the diff of greet.js back to Hello",
    });
    await app.waitFor(tid("restore-then-fork"), { what: "the restore saying it forks after" });
    assert.equal(fs.readFileSync(greet, "utf8"), changed, "showing the diff changes nothing");
    await app.click(tid("restore-confirm"));
    await app.waitForAny(
      `${tid("conversation-item")}[data-current="true"]`,
      (e) => e.attrs["data-id"] !== first && e.attrs["data-id"] !== plain,
      { what: "the restoring fork open" },
    );
    assert.deepEqual(await messages("user"), ["Say hello."]);
    assert.equal(fs.readFileSync(greet, "utf8"), original, "a fork with restore puts the files back");
    // The original conversation keeps its turns.
    const listed = await app.query(tid("conversation-item"));
    assert.equal(listed.find((e) => e.attrs["data-id"] === first)?.attrs["data-entries"], "6");
    await app.screenshot("fork-restored");
  });
});
