// Stop while the model is still answering (cancel at any point leaves a
// consistent transcript): the stream's connection is
// dropped, the window says it stopped and keeps what had arrived, and the
// next message goes out with a valid conversation.

import assert from "node:assert/strict";
import { test } from "node:test";
import { tid, waitUntil, withApp } from "../lib/app.js";
import { dialogue } from "../lib/requests.js";
import { openai, slow } from "../lib/wire.js";

const WORDS = Array.from({ length: 40 }, (_, i) => `word${i + 1}`).join(" ");

test("Stop during a streamed reply keeps what arrived and the next message works", { timeout: 120_000 }, async (t) => {
  const script = [slow(openai.text(WORDS, { parts: 40 }), 250), openai.text("Carrying on.")];

  await withApp(t, { script }, async (app) => {
    await app.send("Count slowly.");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("word3"), { what: "the reply streaming in" });
    await app.click(tid("stop"));

    await app.waitForAny(tid("notice"), (e) => /stopped/i.test(e.text), { what: "a notice that the run stopped" });
    await waitUntil(() => app.llm.requests[0].aborted !== null, { what: "the first stream to end" });
    assert.equal(app.llm.requests[0].aborted, true, "Stop drops the model's connection");
    const [partial] = await app.query(tid("message-assistant"));
    assert.doesNotMatch(partial.text, /word40/, "the reply was cut short");
    await app.waitGone(tid("stop"));

    await app.send("Go on.");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Carrying on."), { what: "the next reply" });
    const sent = dialogue(app.llm.requests[1]);
    assert.deepEqual(sent[0], ["user", "Count slowly."]);
    assert.equal(sent[1][0], "assistant");
    assert.ok(WORDS.startsWith(sent[1][1].trim()), `the kept part is a prefix of the reply: ${JSON.stringify(sent[1][1])}`);
    assert.deepEqual(sent.at(-1), ["user", "Go on."]);
    assert.equal(sent.length, 3);
  });
});
