// The model picked in the header's switcher is kept with the conversation:
// after a restart the conversation opens with it named in the switcher,
// and its next request names it, while the settings keep their own.

import assert from "node:assert/strict";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { anthropic } from "../lib/wire.js";

test("a conversation's model outlives a restart", { timeout: 150_000 }, async (t) => {
  const script = [anthropic.text("Answered by the larger one."), anthropic.text("Still the larger one.")];
  const llm = { models: ["scripted", "scripted-large"] };

  await withApp(t, { script, provider: "anthropic", llm }, async (app) => {
    await app.waitFor(tid("model-switcher"), { check: (e) => e.text.includes("scripted"), what: "the switcher naming the settings' model" });
    await app.click(tid("model-switcher"));
    await app.click(tid("model-option", '[data-model="scripted-large"]'));
    await app.waitGone(tid("model-menu"));
    await app.send("first");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("larger one"), { what: "the first reply" });
    await app.llm.waitForRequests(1);
    assert.equal(app.llm.requests[0].body.model, "scripted-large");

    await app.restart();
    await app.waitFor(tid("model-switcher"), { check: (e) => e.text.includes("scripted-large"), what: "the switcher naming the stored pick" });
    await app.send("second");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Still the larger"), { what: "the second reply" });
    await app.llm.waitForRequests(2);
    assert.equal(app.llm.requests[1].body.model, "scripted-large");
  });
});
