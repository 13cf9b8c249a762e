// the conversation of a project survives a restart of the
// app, on screen and in what the model is sent next.

import assert from "node:assert/strict";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { dialogue } from "../lib/requests.js";
import { openai } from "../lib/wire.js";

test("the project's conversation is back after a restart", { timeout: 120_000 }, async (t) => {
  const script = [openai.text("Noted: the fox is blue."), openai.text("It is blue, as you said.")];

  await withApp(t, { script }, async (app) => {
    await app.send("Remember: the fox is blue.");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Noted: the fox is blue."), { what: "the first reply" });
    // Both messages are stored once the list counts them (the app appends each as it completes).
    await app.waitFor(`${tid("conversation-item")}[data-entries="2"]`, { what: "the conversation stored" });

    await app.restart();

    await app.waitFor(tid("project-name"), { check: (e) => e.text.includes("demo"), what: "the project open again" });
    await app.waitForAny(tid("message-user"), (e) => e.text.includes("Remember: the fox is blue."), { what: "the user's message back" });
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Noted: the fox is blue."), { what: "the reply back" });

    // The model is sent the restored conversation with the new message.
    await app.send("What colour is the fox?");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("It is blue, as you said."), { what: "the second reply" });
    assert.deepEqual(dialogue(app.llm.requests[1]), [
      ["user", "Remember: the fox is blue."],
      ["assistant", "Noted: the fox is blue."],
      ["user", "What colour is the fox?"],
    ]);
  });
});
