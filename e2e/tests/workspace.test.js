// The workspace around the chat: `@src/gr` and Enter in the message box
// pick src/greet.js, and the request the model gets holds the file's text
// (the transcript shows a chip, not the file); a click on README.md in the
// tree shows it highlighted in the viewer; Ctrl+K opens the command palette
// and its "New conversation" starts one.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { dialogue } from "../lib/requests.js";
import { Keys, pressCtrl } from "../lib/webdriver.js";
import { openai } from "../lib/wire.js";


test("workspace: @-mention attaches a file, the tree's viewer, the command palette", { timeout: 150_000 }, async (t) => {
  const script = [openai.text("It returns a greeting for the name.")];

  await withApp(t, { script }, async (app) => {
    const greet = fs.readFileSync(path.join(app.dirs.project, "src", "greet.js"), "utf8");
    await app.waitFor(tid("file-tree"), { check: (e) => e.text.includes("README.md"), what: "README.md in the file tree" });

    // @src/gr, then Enter: the picker's first match is picked.
    await app.waitFor(tid("chat-input"), { what: "the chat input" });
    await app.type(tid("chat-input"), "What does @src/gr");
    await app.waitFor(`${tid("file-option")}[aria-selected="true"]`, {
      check: (e) => e.text.includes("src/greet.js"),
      what: "src/greet.js chosen in the picker",
    });
    await app.screenshot("picker");
    await app.session.keys(Keys.ENTER);
    await app.waitGone(tid("file-picker"));
    await app.waitFor(tid("mention-chip"), { check: (e) => e.text.includes("src/greet.js"), what: "the chip of src/greet.js" });
    assert.equal(await app.session.execute(`return document.querySelector('[data-testid="chat-input"]').value;`), "What does @src/greet.js ");
    await app.session.keys("do?");
    await app.session.keys(Keys.ENTER);

    // The model gets the file's text; the transcript shows the message and a chip.
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("greeting"), { what: "the reply" });
    await app.llm.waitForRequests(1);
    const [, sent] = dialogue(app.llm.requests[0]).at(-1);
    assert.ok(sent.startsWith("What does @src/greet.js do?"), sent);
    assert.ok(sent.includes(`Attached file src/greet.js:\n\`\`\`\n${greet.trimEnd()}\n\`\`\``), `the file's text is attached: ${sent}`);
    const [user] = await app.query(tid("message-user"));
    assert.equal(user.text.includes("return `Hello"), false, "the transcript does not show the file");
    await app.waitFor(`${tid("message-user")} ${tid("attached-file")}`, { check: (e) => e.text === "src/greet.js", what: "the attachment chip in the transcript" });

    // The tree's README.md in the viewer, highlighted as Markdown.
    await app.click(`${tid("tree-file")}[data-path$="README.md"]`);
    await app.waitFor(tid("file-viewer-code"), { check: (e) => e.text.includes("# demo"), what: "README.md in the viewer" });
    const heading = await app.session.execute(
      `return document.querySelector('[data-testid="file-viewer-code"] .hljs-section')?.textContent ?? null;`,
    );
    assert.equal(heading, "# demo", "the heading is highlighted markup");
    await app.screenshot("viewer");
    await app.session.keys(Keys.ESCAPE);
    await app.waitGone(tid("file-viewer"));

    // Ctrl+K, "new", Enter: a new conversation.
    await app.waitFor(`${tid("conversation-item")}[data-entries="2"]`, { what: "the first conversation stored" });
    await pressCtrl(app.session, "k");
    await app.waitFor(tid("command-palette"), { what: "the command palette" });
    await app.screenshot("palette");
    await app.session.keys("new");
    await app.waitFor(`${tid("palette-action")}[aria-selected="true"]`, {
      check: (e) => e.text.includes("New conversation"),
      what: "New conversation chosen in the palette",
    });
    await app.session.keys(Keys.ENTER);
    await app.waitGone(tid("command-palette"));
    await app.waitGone(tid("message-user"));
    const items = await app.query(tid("conversation-item"));
    assert.equal(items.length, 1, "the first conversation is kept");
    assert.notEqual(items[0].attrs["data-current"], "true", "and no longer the one shown");
  });
});
