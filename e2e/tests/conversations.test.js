// Two conversations in one project: New conversation keeps the first,
// switching shows each, both are there after a restart, search finds a word
// of the older one, and a fork from its first message is a new
// conversation while the original stays as it was.

import assert from "node:assert/strict";
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

    // New conversation keeps it.
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
