// The model switcher in the header: it lists what the server's `GET
// /v1/models` says (over the Anthropic format, asked with the key saved for
// the server's origin); another model picked there is the one the next
// request of the conversation names, while the settings keep theirs.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { anthropic } from "../lib/wire.js";

test("a model picked in the header is the one the next request names", { timeout: 120_000 }, async (t) => {
  const script = [anthropic.text("Answered by the default."), anthropic.text("Answered by the larger one.")];
  const llm = { models: ["scripted", "scripted-large"] };

  await withApp(t, { script, provider: "anthropic", llm }, async (app) => {
    await app.send("first");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("by the default"), { what: "the first reply" });
    await app.llm.waitForRequests(1);
    assert.equal(app.llm.requests[0].body.model, "scripted");

    await app.waitFor(tid("model-switcher"), { check: (e) => e.text.includes("scripted"), what: "the switcher naming the settings' model" });
    await app.click(tid("model-switcher"));
    await app.waitFor(tid("model-option", '[data-model="scripted-large"]'), { what: "the server's second model in the list" });
    // The switcher's list request (the context probe asks `/models` too, without the API's version).
    const asked = app.llm.modelLists.find((r) => new URL(r.path, "http://x").pathname === "/v1/models");
    assert.ok(asked, `a GET /v1/models among ${app.llm.modelLists.map((r) => r.path).join(", ")}`);
    assert.equal(asked.headers["anthropic-version"], "2023-06-01");
    assert.equal(asked.headers["x-api-key"], "test-key", "the key saved for this origin goes with the list request");
    await app.screenshot("menu");
    await app.click(tid("model-option", '[data-model="scripted-large"]'));
    await app.waitGone(tid("model-menu"));
    await app.waitFor(tid("model-switcher"), { check: (e) => e.text.includes("scripted-large"), what: "the switcher naming the pick" });

    await app.send("second");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("larger one"), { what: "the second reply" });
    await app.llm.waitForRequests(2);
    assert.equal(app.llm.requests[1].body.model, "scripted-large");
    const settings = JSON.parse(fs.readFileSync(path.join(app.dirs.appConfig, "settings.json"), "utf8"));
    assert.equal(settings.model, "scripted", "the settings keep the default");
  });
});
