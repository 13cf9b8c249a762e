// Small windows, small models: the real app against scripted servers that
// answer as llama-server does with a 2,048-, 4,096- or 8,192-token context
// (`/props`, usage counted by the server, its real 400 for a request over
// the window). Every request must fit: the server refuses one that does
// not, and the test fails on any error shown.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, waitUntil, withApp } from "../lib/app.js";
import { startLlmServer, tokenCount } from "../lib/llm-server.js";
import { toolResults } from "../lib/requests.js";
import { openai, slow, withUsage } from "../lib/wire.js";

const propsFor = (window) => ({ default_generation_settings: { n_ctx: window }, total_slots: 1, chat_template_caps: { supports_tools: true } });
/** A request's prompt tokens as the scripted server counts them. */
const tokensOf = (req) => tokenCount(JSON.stringify(req.body));
const isSummary = (req) => !(req.body.tools?.length > 0);
const notices = async (app) => (await app.queryConversation(tid("notice"))).map((n) => n.text);

/**
 * A turn as llama-server answers: its 400 when the prompt and the reply's
 * limit do not fit the window, a summary for a summary request, else
 * `next(req)`; usage counted the server's way.
 */
function serverTurn(window, next) {
  return (req) => {
    if (tokensOf(req) + (req.body.max_tokens ?? 0) > window) {
      refused.push(`${tokensOf(req)} + ${req.body.max_tokens}`);
      return openai.contextExceeded(tokensOf(req), window);
    }
    if (isSummary(req)) return withUsage(openai.text("Summary: the task so far, nothing changed."), tokensOf(req));
    return withUsage(next(req), tokensOf(req));
  };
}

/** Requests the scripted servers refused as over the window (prompt + reply limit, in tokens). */
const refused = [];

/** Asserts every request fit its window by the server's count, and no error is on screen. */
async function assertFitted(app, window) {
  assert.deepEqual(refused, [], "requests over the window");
  for (const req of app.llm.requests) {
    assert.ok(tokensOf(req) + req.body.max_tokens <= window, `a request of ${tokensOf(req)} + ${req.body.max_tokens} tokens in ${window}`);
  }
  assert.equal((await app.query(tid("error-banner"))).length, 0, "no error on screen");
}

for (const window of [4_096, 2_048]) {
  test(`a task of 10 tool calls completes in a ${window}-token window, every request inside it`, { timeout: 300_000 }, async (t) => {
    refused.length = 0;
    let made = 0;
    const next = () => {
      if (made < 10) return openai.toolCalls([{ name: "read_file", input: { path: `notes/n${made++}.txt` } }]);
      return openai.text("Done: read the ten notes.");
    };
    const script = Array.from({ length: 40 }, () => serverTurn(window, next));
    const setup = (dirs) => {
      fs.mkdirSync(path.join(dirs.project, "notes"));
      for (let i = 0; i < 10; i++) fs.writeFileSync(path.join(dirs.project, "notes", `n${i}.txt`), `Note ${i}: ${"a line of the note. ".repeat(30)}\n`);
    };
    await withApp(t, { script, setup, mode: "full_auto", llm: { props: propsFor(window) } }, async (app) => {
      await app.send("Read the ten notes in notes/.");
      await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Done: read the ten notes."), { what: "the task's end", timeout: 240_000 });
      await assertFitted(app, window);
      const work = app.llm.requests.filter((r) => !isSummary(r));
      assert.equal(work.length, 11, "ten calls and the answer");
      // The short prefix: the core tools whole, the others named in more_tools;
      // at 2k read, edit and run only, and the others by name alone.
      const first = work[0].body;
      const tiny = window <= 2_048;
      assert.ok(tokenCount(JSON.stringify({ system: first.messages[0], tools: first.tools })) <= (tiny ? 500 : 1_200), "the fixed prefix");
      const names = first.tools.map((tool) => tool.function.name);
      assert.deepEqual(names, tiny ? ["read_file", "edit_file", "exec_shell", "more_tools"] : ["read_file", "edit_file", "search_files", "exec_shell", "more_tools"]);
      const more = first.tools.find((tool) => tool.function.name === "more_tools").function.description;
      assert.match(more, tiny ? /write_file, .*search_files, / : /write_file \(Create a file/);
      assert.match(more, tiny ? /\btask\b/ : /task \(Starts a subagent/);
      await assertFitted(app, window);
      const [meter] = await app.query(tid("context-meter"));
      assert.equal(meter.attrs["data-window"], String(window));
    });
  });
}

for (const window of [2_048, 4_096, 8_192]) {
  // An 8k window has room for 12k characters once llama.cpp's own count
  // corrects the estimate (whether that answer is in before the send is a
  // race): there the paste is twice as big, so it is an attachment either way.
  const rows = window >= 8_192 ? 800 : 400;
  test(`a ${(rows * 30) / 1000}k-character paste and a 43 KB file read complete in a ${window}-token window`, { timeout: 300_000 }, async (t) => {
    refused.length = 0;
    const big = Array.from({ length: 900 }, (_, i) => `line ${i}: ${"the quick brown fox ".repeat(2)}`).join("\n");
    assert.ok(big.length > 43_000);
    const paste = Array.from({ length: rows }, (_, i) => `row ${String(i).padStart(3, "0")}: a line of pasted log\n`).join("");
    const steps = [
      () => openai.toolCalls([{ name: "read_paste", input: { paste: 1, part: 2 } }]),
      () => openai.toolCalls([{ name: "read_file", input: { path: "big.txt" } }]),
      () => openai.text("Read the paste and big.txt."),
    ];
    const script = Array.from({ length: 20 }, () => serverTurn(window, () => steps.shift()()));
    const setup = (dirs) => fs.writeFileSync(path.join(dirs.project, "big.txt"), big);
    await withApp(t, { script, setup, mode: "full_auto", llm: { props: propsFor(window) } }, async (app) => {
      // Pasted: the text arrives in the box at once, as a paste puts it there.
      await app.waitFor(tid("chat-input"), { what: "the chat input" });
      await app.session.execute(
        `const box = document.querySelector('[data-testid="chat-input"]'); box.value = arguments[0]; box.dispatchEvent(new Event("input", { bubbles: true }));`,
        [paste],
      );
      await app.click(tid("send"));
      await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Read the paste and big.txt."), { what: "the end", timeout: 240_000 });
      const work = app.llm.requests.filter((r) => !isSummary(r));
      assert.equal(paste.length, rows * 30);
      assert.match(JSON.stringify(work[0].body.messages), new RegExp(`${paste.length.toLocaleString("en-US")} characters`));
      assert.doesNotMatch(JSON.stringify(work[0].body.messages), new RegExp(`row ${rows - 1}`));
      const [part, read] = [toolResults(work[1]).at(-1), toolResults(work[2]).at(-1)];
      assert.match(part.content, /^\[Attachment 1, part 2 of \d+\]/);
      assert.match(read.content, /characters left out to fit the context window/);
      assert.match(read.content, /line 0:/);
      await assertFitted(app, window);
    });
  });
}

test("after Stop, the next message compacts nothing and the meter shows an estimate", { timeout: 180_000 }, async (t) => {
  refused.length = 0;
  const window = 4_096;
  const words = Array.from({ length: 40 }, (_, i) => `word${i + 1}`).join(" ");
  const replies = [() => slow(openai.text(words, { parts: 40 }), 250), () => openai.text("Carrying on.")];
  const script = Array.from({ length: 4 }, () => serverTurn(window, () => replies.shift()()));
  await withApp(t, { script, llm: { props: propsFor(window) } }, async (app) => {
    await app.send("Count slowly.");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("word3"), { what: "the reply streaming in" });
    await app.click(tid("stop"));
    await app.waitForAny(tid("notice"), (e) => /stopped/i.test(e.text), { what: "the stop" });
    await app.waitGone(tid("stop"));
    const [meter] = await app.query(tid("context-meter"));
    const used = Number(meter.attrs["data-used"]);
    assert.ok(used > 600 && used < 1_400, `the meter after Stop: ${used} of ${window}`);

    await app.send("Go on.");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Carrying on."), { what: "the next reply" });
    assert.equal(app.llm.requests.filter(isSummary).length, 0, "no summary was asked");
    assert.ok(!(await notices(app)).some((n) => n.startsWith("Compacted")));
    await assertFitted(app, window);
  });
});

test("first run with no key: the welcome card lists servers detected on three ports, and one click uses one", { timeout: 180_000 }, async (t) => {
  refused.length = 0;
  const servers = [];
  try {
    servers.push(await startLlmServer([openai.text("Hello from Jan.")], { port: 1337, models: ["jan-model"], props: propsFor(4_096) }));
    servers.push(await startLlmServer([], { port: 8000, models: ["vllm-model"] }));
    servers.push(await startLlmServer([], { port: 5000, models: ["webui-model"] }));
  } catch (error) {
    for (const server of servers) await server.close();
    throw new Error(`the usual ports of Jan, vLLM and text-generation-webui (1337, 8000, 5000) must be free: ${error.message}`);
  }
  const [jan] = servers;
  try {
    // A hosted provider and no key, as a fresh install has.
    const settings = { provider: "openai", base_url: "https://api.openai.com/v1", model: "gpt-5" };
    await withApp(t, { script: [], settings }, async (app) => {
      await app.waitFor(tid("provider-welcome"), { what: "the welcome card" });
      await waitUntil(async () => (await app.query(tid("provider-welcome-use"))).length >= 3, { what: "three detected servers", timeout: 15_000 });
      const offered = (await app.query(tid("provider-welcome-use"))).map((b) => b.text);
      for (const model of ["jan-model", "vllm-model", "webui-model"]) assert.ok(offered.includes(`Use ${model}`), offered.join(" | "));
      const index = offered.indexOf("Use jan-model");
      await app.session.execute(`document.querySelectorAll('[data-testid="provider-welcome-use"]')[arguments[0]].click();`, [index]);
      await app.waitGone(tid("provider-welcome"));
      // The header follows the settings at once.
      await app.waitForAny(tid("model-switcher"), (e) => e.text.includes("jan-model"), { what: "the header's model label" });

      await app.send("hi");
      await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Hello from Jan."), { what: "Jan's reply" });
      assert.equal(jan.requests.length, 1);
      assert.equal(jan.requests[0].body.model, "jan-model");
      // Max tokens fitted to the 4,096 window Jan's server reports.
      assert.ok(jan.requests[0].body.max_tokens <= 1_024, `max_tokens ${jan.requests[0].body.max_tokens}`);
      const saved = JSON.parse(fs.readFileSync(path.join(app.dirs.appConfig, "settings.json"), "utf8"));
      assert.equal(saved.base_url, "http://127.0.0.1:1337/v1");
      assert.equal(app.llm.requests.length, 0, "the hosted provider was never asked");
    });
  } finally {
    for (const server of servers) await server.close();
  }
});
