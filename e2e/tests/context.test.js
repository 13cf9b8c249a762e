// Context that fits, against a scripted server that answers as llama.cpp's
// llama-server does: its /props says the context size, its usage counts
// the prompt, and a request over the context gets its real 400.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { openai, withUsage } from "../lib/wire.js";

const WINDOW = 8192;
/**
 * The window of the 30-call task, sized for exactly one compaction: a
 * request is about 3,500 tokens (system prompt and tools) plus about 480
 * a call, so the 80 % mark (13,107) is passed near the 20th call; the
 * summary and the last three calls (about 4,900) grow by the ten calls
 * left to about 9,800, far from it again.
 */
const TASK_WINDOW = 16_384;
const props = { default_generation_settings: { n_ctx: TASK_WINDOW }, total_slots: 1, chat_template_caps: { supports_tools: true } };
/** What the scripted server counts as a request's prompt tokens (about 4 characters a token). */
const tokensOf = (req) => Math.ceil(JSON.stringify(req.body).length / 4);
const isSummary = (req) => !(req.body.tools?.length > 0) && /compact/i.test(JSON.stringify(req.body.messages[0]));
const notices = async (app) => (await app.queryConversation(tid("notice"))).map((n) => n.text);

test("a task of 30 tool calls fits a 16k window: compacted exactly once, never over the window", { timeout: 240_000 }, async (t) => {
  const CALLS = 30;
  let made = 0;
  const turn = (req) => {
    if (isSummary(req)) return withUsage(openai.text(`Summary: notes.txt was read ${made} times; nothing changed.`), tokensOf(req));
    if (made < CALLS) {
      made += 1;
      return withUsage(openai.toolCalls([{ name: "read_file", input: { path: "notes.txt" } }]), tokensOf(req));
    }
    return withUsage(openai.text(`Done: read notes.txt ${CALLS} times.`), tokensOf(req));
  };
  const script = Array.from({ length: CALLS + 10 }, () => turn);
  const setup = (dirs) => {
    fs.writeFileSync(path.join(dirs.project, "notes.txt"), `${"A line of notes for the context test.\n".repeat(40)}`);
    fs.writeFileSync(path.join(dirs.project, "AGENTS.md"), "Always answer in haiku when asked about tabs.\n");
  };

  await withApp(t, { script, setup, llm: { props } }, async (app) => {
    await app.send("Read notes.txt thirty times.");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes(`Done: read notes.txt ${CALLS} times.`), {
      what: "the task's end",
      timeout: 180_000,
    });
    const requests = app.llm.requests;
    const work = requests.filter((r) => !isSummary(r));
    const summaries = requests.filter(isSummary);
    assert.equal(work.length, CALLS + 1, "every call, and the answer");
    assert.equal(summaries.length, 1, `one compaction request, at work requests of ${work.map(tokensOf).join(", ")} tokens`);
    // The project's instructions are in the first request's system prompt.
    const system = work[0].body.messages[0];
    assert.equal(system.role, "system");
    assert.match(system.content, /Always answer in haiku when asked about tabs\./);
    // The summary is what the model sees of the earlier part afterwards.
    const after = work.find((r) => JSON.stringify(r.body.messages).includes("Summary of the earlier part"));
    assert.ok(after, "a request after compaction starts from the summary");
    assert.match(JSON.stringify(after.body.messages), /Summary: notes.txt was read/);
    for (const request of requests) {
      assert.ok(tokensOf(request) <= TASK_WINDOW, `a request of ${tokensOf(request)} tokens`);
      // The reply's limit leaves it room inside the window too.
      assert.ok(tokensOf(request) + request.body.max_tokens <= TASK_WINDOW, `${tokensOf(request)} + ${request.body.max_tokens} tokens`);
    }

    const shown = await notices(app);
    assert.ok(shown.some((n) => n.startsWith("Instructions: AGENTS.md")), shown.join(" | "));
    assert.ok(shown.some((n) => n.startsWith("Compacted:")), shown.join(" | "));
    const [meter] = await app.query(tid("context-meter"));
    assert.equal(meter.attrs["data-window"], String(TASK_WINDOW));
    assert.ok(Number(meter.attrs["data-used"]) > 0, "the meter moved");
    assert.ok(app.llm.probes.some((p) => p.path === "/props"), "the window came from the server");
  });
});

test("llama.cpp's context error: the app compacts, sends again, and the conversation goes on", { timeout: 120_000 }, async (t) => {
  const script = [
    openai.toolCalls([{ name: "read_file", input: { path: "README.md" } }]),
    openai.toolCalls([{ name: "read_file", input: { path: "package.json" } }]),
    openai.contextExceeded(9120, WINDOW),
    (req) => {
      assert.ok(isSummary(req), "the request after the error asks for a summary");
      return openai.text("Summary: README.md and package.json were read.");
    },
    openai.text("Both files are read; carrying on."),
  ];

  // An AGENTS.md that is a link leading out of the project is refused like any read.
  const setup = (dirs) => {
    fs.writeFileSync(path.join(dirs.root, "outside-agents.md"), "OUTSIDE-INSTRUCTIONS-MUST-NOT-LEAK\n");
    fs.symlinkSync(path.join(dirs.root, "outside-agents.md"), path.join(dirs.project, "AGENTS.md"));
  };

  await withApp(t, { script, setup }, async (app) => {
    await app.send("Read the README and package.json.");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("carrying on"), { what: "the reply after the retry" });
    const [, , overflowed, , retried] = app.llm.requests;
    assert.match(JSON.stringify(retried.body.messages), /Summary: README.md and package.json were read/);
    assert.ok(JSON.stringify(retried.body).length < JSON.stringify(overflowed.body).length, "the retry is smaller");
    assert.equal((await app.query(tid("error-banner"))).length, 0, "no error left on screen");
    const shown = await notices(app);
    assert.ok(shown.some((n) => n.includes("9,120 of 8,192 tokens")), shown.join(" | "));
    assert.ok(!shown.some((n) => n.startsWith("Instructions:")), shown.join(" | "));
    for (const request of app.llm.requests) assert.doesNotMatch(JSON.stringify(request.body), /OUTSIDE-INSTRUCTIONS/);
  });
});

test("a reply cut at max tokens that carries tool calls runs none of them", { timeout: 120_000 }, async (t) => {
  const cut = openai.toolCalls(
    [
      { name: "delete_file", input: { path: "README.md" } },
      { name: "write_file", input: { path: "half.txt", content: "cut" } },
    ],
    { finish: "length" },
  );

  await withApp(t, { script: [cut], mode: "full_auto" }, async (app) => {
    await app.send("Tidy up.");
    const card = tid("tool-card");
    await app.waitForAny(card, (e) => e.attrs["data-tool"] === "write_file" && e.attrs["data-status"] === "cancelled", {
      what: "the write card marked as not run",
    });
    const cards = await app.query(card);
    assert.deepEqual(cards.map((c) => c.attrs["data-status"]), ["cancelled", "cancelled"]);
    await app.waitForAny(tid("notice"), (e) => e.text.includes("2 tool calls were not run"), { what: "the notice" });
    assert.ok(fs.existsSync(path.join(app.dirs.project, "README.md")), "README.md is still there");
    assert.equal(fs.existsSync(path.join(app.dirs.project, "half.txt")), false);
    assert.equal(app.llm.requests.length, 1);
  });
});
