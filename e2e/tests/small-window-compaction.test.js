// Compaction in a 2,048-token window, as a small model on llama-server
// lives it: ten messages of the user, a paste and a large file among them.
// A summary is asked at most once per message of the user, the progress of
// one is in sight while it is read and written, and between summaries every
// request starts with the previous one byte for byte (system prompt, tools,
// messages), so the server's prompt cache is reused.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, waitUntil, withApp } from "../lib/app.js";
import { tokenCount } from "../lib/llm-server.js";
import { openai, slow, withUsage } from "../lib/wire.js";

const WINDOW = 2_048;
const props = { default_generation_settings: { n_ctx: WINDOW }, total_slots: 1, chat_template_caps: { supports_tools: true } };
const tokensOf = (req) => tokenCount(JSON.stringify(req.body));
const isSummary = (req) => !(req.body.tools?.length > 0);

/** llama.cpp's prompt progress chunk (`return_progress`). */
const progress = (processed, total) => ({
  data: JSON.stringify({ choices: [], prompt_progress: { total, cache: 0, processed, time_ms: processed } }),
  delay: 150,
});

/** A summary as llama-server streams it: the prompt read in steps, then the text, slowly. */
function summaryReply(req) {
  const total = tokensOf(req);
  const reply = slow(openai.text("Summary: questions asked and answered; the paste and big.txt were read. Nothing changed.", { parts: 12 }), 150);
  const steps = [0.25, 0.5, 0.75, 1].map((share) => progress(Math.round(total * share), total));
  return withUsage({ ...reply, events: [reply.events[0], ...steps, ...reply.events.slice(1)] }, total);
}

test("ten messages in a 2,048-token window: one summary per message at most, in sight while it comes, and an unchanged prefix between summaries", { timeout: 600_000 }, async (t) => {
  const refused = [];
  let current = 0;
  // What each message of the user makes the model do first; then it answers.
  const plan = { 1: { name: "read_file", input: { path: "notes/n1.txt" } }, 2: { name: "read_paste", input: { paste: 1, part: 2 } }, 4: { name: "read_file", input: { path: "big.txt" } }, 6: { name: "read_file", input: { path: "notes/n6.txt" } }, 8: { name: "read_file", input: { path: "notes/n8.txt" } } };
  const answer = (i) => openai.text(`Answer ${i}: ${"the work goes on as planned. ".repeat(6)}`);
  const turn = (req) => {
    if (tokensOf(req) + (req.body.max_tokens ?? 0) > WINDOW) {
      refused.push(`${tokensOf(req)} + ${req.body.max_tokens}`);
      return openai.contextExceeded(tokensOf(req), WINDOW);
    }
    if (isSummary(req)) return summaryReply(req);
    const last = req.body.messages.at(-1);
    const call = last.role === "user" ? plan[current] : undefined;
    return withUsage(call ? openai.toolCalls([call]) : answer(current), tokensOf(req));
  };
  const script = Array.from({ length: 80 }, () => turn);
  const setup = (dirs) => {
    fs.mkdirSync(path.join(dirs.project, "notes"));
    for (const i of [1, 6, 8]) fs.writeFileSync(path.join(dirs.project, "notes", `n${i}.txt`), `Note ${i}: ${"a line of the note. ".repeat(40)}\n`);
    fs.writeFileSync(path.join(dirs.project, "big.txt"), Array.from({ length: 900 }, (_, i) => `line ${i}: ${"the quick brown fox ".repeat(2)}`).join("\n"));
  };
  const paste = Array.from({ length: 300 }, (_, i) => `row ${String(i).padStart(3, "0")}: a line of pasted log\n`).join("");

  await withApp(t, { script, setup, mode: "full_auto", llm: { props } }, async (app) => {
    const perMessage = [];
    let sawProgress = false;
    for (current = 0; current < 10; current++) {
      const before = app.llm.requests.length;
      const text = `Question ${current}: ${"please keep going with the task at hand. ".repeat(5)}`;
      if (current === 2) {
        // Pasted: the text arrives in the box at once, as a paste puts it there.
        await app.waitFor(tid("chat-input"), { what: "the chat input" });
        await app.session.execute(
          `const box = document.querySelector('[data-testid="chat-input"]'); box.value = arguments[0]; box.dispatchEvent(new Event("input", { bubbles: true }));`,
          [paste],
        );
        await app.click(tid("send"));
      } else {
        await app.send(text);
      }
      // The first summary's progress, while it is read and written; or the answer, when none is asked.
      const answered = (e) => e.text.includes(`Answer ${current}:`);
      if (!sawProgress) {
        const seen = await waitUntil(
          async () => {
            const line = (await app.query(tid("compacting"))).find((e) => /^Compacting: the (server is reading|model is writing)/.test(e.text));
            if (line) return "progress";
            return (await app.query(tid("message-assistant"))).some(answered) ? "answer" : null;
          },
          { what: `the compaction's progress or the answer to message ${current}`, timeout: 120_000 },
        );
        if (seen === "progress") {
          sawProgress = true;
          assert.ok(app.llm.requests.slice(before).some(isSummary), "a summary was being asked");
          // Still in sight while the summary's text comes in.
          await app.waitForAny(tid("compacting"), (e) => e.text.startsWith("Compacting: the model is writing the summary"), { what: "the summary streaming" });
        }
      }
      await app.waitForAny(tid("message-assistant"), answered, { what: `the answer to message ${current}`, timeout: 120_000 });
      await app.waitGone(tid("stop"));
      assert.equal((await app.query(tid("compacting"))).length, 0, "no progress line once the summary is in");
      perMessage.push(app.llm.requests.slice(before).filter(isSummary).length);
    }
    assert.deepEqual(refused, [], "requests over the window");
    assert.equal((await app.query(tid("error-banner"))).length, 0, "no error on screen");
    assert.ok(sawProgress, "the compaction's progress was shown");
    assert.ok(perMessage.some((n) => n > 0), `some message was compacted: ${perMessage}`);
    assert.ok(perMessage.every((n) => n <= 1), `summaries per message of the user: ${perMessage}`);

    // Between summaries each request starts with the one before it, byte for byte.
    const requests = app.llm.requests;
    let unchanged = 0;
    for (let i = 1; i < requests.length; i++) {
      const [a, b] = [requests[i - 1], requests[i]];
      if (isSummary(a) || isSummary(b)) continue;
      assert.equal(JSON.stringify(b.body.messages[0]), JSON.stringify(a.body.messages[0]), `the system prompt of request ${i}`);
      // The one change allowed: read_paste offered from the request that carries the paste on.
      const names = (req) => req.body.tools.map((tool) => tool.function.name);
      const grown = JSON.stringify(b.body.tools.filter((tool) => tool.function.name !== "read_paste")) === JSON.stringify(a.body.tools) && !names(a).includes("read_paste");
      assert.ok(JSON.stringify(b.body.tools) === JSON.stringify(a.body.tools) || grown, `the tools of request ${i}`);
      const lead = b.body.messages.slice(0, a.body.messages.length);
      assert.equal(JSON.stringify(lead), JSON.stringify(a.body.messages), `request ${i} starts with request ${i - 1}'s messages`);
      unchanged++;
    }
    assert.ok(unchanged >= 8, `consecutive requests compared: ${unchanged}`);
    const [meter] = await app.query(tid("context-meter"));
    assert.ok(Number(meter.attrs["data-used"]) < WINDOW, "the meter within the window");
    // scripts/llama-reread.sh replays these on a real llama-server to count what it reads again.
    if (process.env.CORRAL_E2E_RECORD) fs.writeFileSync(process.env.CORRAL_E2E_RECORD, JSON.stringify(requests.map((req) => req.body)));
  });
});
