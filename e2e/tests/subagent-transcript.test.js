// A `task` call starts an explore subagent: its card shows it done, and
// under it the subagent's transcript opens (its task, its own tool call,
// its answer); the subagent's requests carry only its own context; after a
// restart the transcript is still under the card.

import assert from "node:assert/strict";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { dialogue, toolNames } from "../lib/requests.js";
import { openai } from "../lib/wire.js";

const TASK = "List the project's top folder and say what is in it.";
const ANSWER = "The top folder holds the project's files, README.md among them.";

test("a task card's subagent transcript opens under it, also after a restart", { timeout: 180_000 }, async (t) => {
  const script = [
    openai.toolCalls([{ name: "task", input: { subagent_type: "explore", description: "top folder", prompt: TASK } }]),
    openai.toolCalls([{ name: "list_directory", input: { path: "." } }]),
    openai.text(ANSWER),
    openai.text("The explorer looked: README.md is there."),
  ];

  await withApp(t, { script }, async (app) => {
    await app.send("What is in this project?");
    const card = tid("tool-card", '[data-tool="task"]');
    await app.waitFor(card, { check: (e) => e.attrs["data-status"] === "done", what: "the task card done" });
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("README.md is there"), { what: "the parent's answer" });

    // The subagent's requests: its own instructions, its task alone, its own tools.
    const sub = app.llm.requests.slice(1, 3);
    for (const request of sub) {
      assert.equal(dialogue(request)[0][0], "user");
      assert.equal(dialogue(request)[0][1], TASK);
      assert.ok(!JSON.stringify(request.body.messages).includes("What is in this project?"), "the parent's conversation stays out");
      assert.ok(!toolNames(request).includes("task"), "no subagent starts another");
    }
    assert.ok(toolNames(app.llm.requests[0]).includes("task"));

    const opened = async () => {
      await app.waitFor(tid("subagent-summary"), { check: (e) => /Subagent explore: 1 call/.test(e.text), what: "the folded transcript under the card" });
      // The run has ended: nothing moves the row while it is clicked.
      await app.click(tid("subagent-summary"));
      await app.waitFor(tid("subagent-task"), { check: (e) => e.visible && e.text.includes(TASK), what: "the subagent's task shown" });
      await app.waitFor(`${tid("subagent-transcript")} ${tid("tool-card")}`, {
        check: (e) => e.visible && e.attrs["data-tool"] === "list_directory" && e.attrs["data-status"] === "done",
        what: "the subagent's own call",
      });
      await app.waitFor(tid("subagent-message"), { check: (e) => e.visible && e.text.includes(ANSWER), what: "the subagent's answer" });
    };
    await opened();

    await app.waitFor(`${tid("conversation-item")}[data-entries="4"]`, { what: "the conversation stored" });
    await app.restart();
    await app.waitForAny(tid("message-user"), (e) => e.text.includes("What is in this project?"), { what: "the conversation back" });
    await opened();
  });
});
