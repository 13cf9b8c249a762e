// The memory soak's driver: the release app, in its own window under Xvfb,
// worked for SOAK_MINUTES (60 by default) against the scripted model as a
// user would work it. A long conversation goes on the whole time, each
// message a read, an edit approved in the window, a command with output
// approved too, now and then a new file, then an answer; between its
// messages a new conversation is started, an older one opened again, and
// now and then a task is started, waited for and discarded. The window is
// 8,192 tokens (the server answers as llama-server), so the long
// conversation is summarized every few messages. Run by bench/soak.sh,
// which samples the app's memory once a minute: this file writes the app's
// process id and the moment it started to SOAK_OUT/app.pid, what it has
// done so far to SOAK_OUT/progress (one line, replaced after each step),
// and at the end waits for the sampler's last row before the app closes.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { APP_BINARY, processesWithHome, tid, waitUntil, withApp } from "../e2e/lib/app.js";
import { tokenCount } from "../e2e/lib/llm-server.js";
import { toolResults } from "../e2e/lib/requests.js";
import { openai, withUsage } from "../e2e/lib/wire.js";

const MINUTES = Number(process.env.SOAK_MINUTES ?? 60);
const OUT = process.env.SOAK_OUT ?? fs.mkdtempSync(path.join(os.tmpdir(), "corral-soak-"));
const WINDOW = 8_192;
const props = { default_generation_settings: { n_ctx: WINDOW }, total_slots: 1, chat_template_caps: { supports_tools: true } };
const FILES = 10;
/** Messages to the long conversation between two visits elsewhere. */
const LONG_RUN = 3;
/** A task every this many rounds. */
const TASK_EVERY = 6;
/** The most a message may take before the soak stops and says where it was stuck. */
const STEP_DEADLINE = 300_000;

const tokensOf = (req) => tokenCount(JSON.stringify(req.body));
const isSummary = (req) => !(req.body?.tools?.length > 0);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** What has been done so far (written to SOAK_OUT/progress for the sampler). */
const done = { calls: 0, results: 0, approvals: 0, messages: 0, summaries: 0, conversations: 0, switches: 0, tasks: 0, overWindow: 0, dom: 0 };
const seenResults = new Set();
const steps = new Map();
let current = null;
let project = null;

function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((b) => (typeof b === "string" ? b : (b.text ?? ""))).join("");
  return "";
}

/** The message a request works on: the tag of the last user message that has one (`m12`, `s3`, `t1`), else the one just sent. */
function keyOf(request) {
  for (const message of [...(request.body?.messages ?? [])].reverse()) {
    if (message.role !== "user") continue;
    const tag = /\[soak ([mst]\d+)\]/.exec(textOf(message.content));
    if (tag) return tag[1];
  }
  return current;
}

/** An edit of one of the project's files: its value line, as it is on disk now, set to the message's. */
function editValue(file, key) {
  const text = fs.readFileSync(path.join(project, file), "utf8");
  const line = /^export const value = .*$/m.exec(text)[0];
  return { name: "edit_file", input: { path: file, old_string: line, new_string: `export const value = "${key}"; // set by ${key}` } };
}

/** A command with output: coloured lines over a moment, a block of rows, or a failure with its stderr. */
function command(key, n) {
  if (n % 3 === 0) return { name: "exec_shell", input: { command: "node", args: ["tick.js", "15", "20"] } };
  if (n % 6 === 5) {
    return { name: "exec_shell", input: { command: "node", args: ["-e", `console.log("checking ${key}"); console.error("${key}: 2 checks failed"); process.exit(1)`] } };
  }
  return { name: "exec_shell", input: { command: "node", args: ["-e", `for (let i = 0; i < 120; i++) console.log("${key} row " + i + ": " + "output of the check ".repeat(4))`] } };
}

/** What the model does for a message, step by step (a step is its calls; a function makes them when asked). */
function planOf(key) {
  const n = Number(key.slice(1));
  const file = `src/mod${n % FILES}.js`;
  if (key[0] === "t") {
    return [[{ name: "read_file", input: { path: "README.md" } }, { name: "search_files", input: { query: "value" } }]];
  }
  if (key[0] === "s") {
    return [[{ name: "read_file", input: { path: file } }], [command(key, n + 1)]];
  }
  const plan = [
    n % 2 ? [{ name: "read_file", input: { path: file } }, { name: "search_files", input: { query: `mod${n % FILES}` } }] : [{ name: "read_file", input: { path: file } }],
    () => [editValue(file, key)],
    [command(key, n)],
  ];
  if (n % 3 === 0) plan.push([{ name: "write_file", input: { path: `notes/n${n % 5}.txt`, content: `Notes of ${key}\n${"- a line of the notes\n".repeat(20)}` } }]);
  return plan;
}

function answer(key) {
  const n = Number(key.slice(1));
  if (key[0] === "t") return `Task ${key} finished: the project has ${FILES} modules.`;
  return [
    `Done with ${key}. The value of \`src/mod${n % FILES}.js\` is set and the check ran.`,
    "",
    "- read the module",
    "- changed its value",
    "- ran the check",
    "",
    "```js",
    `export const value = "${key}";`,
    "```",
  ].join("\n");
}

/** Every turn of the scripted model. */
function turn(request) {
  if (tokensOf(request) + (request.body.max_tokens ?? 0) > WINDOW) done.overWindow++;
  for (const result of toolResults(request)) {
    if (!seenResults.has(result.tool_use_id)) {
      seenResults.add(result.tool_use_id);
      done.results++;
    }
  }
  if (isSummary(request)) {
    done.summaries++;
    return withUsage(openai.text(`Summary ${done.summaries}: the user asks for one module at a time; each value was set and checked. Nothing is pending.`), tokensOf(request));
  }
  const key = keyOf(request);
  const step = steps.get(key) ?? 0;
  steps.set(key, step + 1);
  const plan = planOf(key);
  if (step >= plan.length) return withUsage(openai.text(answer(key), { parts: 6 }), tokensOf(request));
  const calls = typeof plan[step] === "function" ? plan[step]() : plan[step];
  done.calls += calls.length;
  return withUsage(openai.toolCalls(calls), tokensOf(request));
}

function setup(dirs) {
  project = dirs.project;
  fs.mkdirSync(path.join(dirs.project, "notes"));
  for (let i = 0; i < FILES; i++) {
    const body = Array.from({ length: 30 }, (_, j) => `export function part${j}(x) {\n  return x * ${j} + ${i};\n}\n`).join("\n");
    fs.writeFileSync(path.join(dirs.project, "src", `mod${i}.js`), `// Module ${i}.\n${body}\nexport const value = "v0";\n`);
  }
  // A git repository: tasks run in worktrees of it.
  const git = (...args) => execFileSync("git", ["-C", dirs.project, ...args], { encoding: "utf8" });
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("-c", "user.name=Soak", "-c", "user.email=soak@corral.invalid", "commit", "-q", "-m", "fixture");
}

/** What the window shows now: an approval ready for a click, the answer, whether a run goes on. */
const STATE = `
  const [answerText] = arguments;
  const area = document.querySelector('[data-testid="approval"]');
  return {
    approval: area ? area.innerText.slice(0, 2000) : null,
    armed: !!(area && area.querySelector('[data-armed="true"]')),
    answered: [...document.querySelectorAll('[data-testid="message-assistant"]')].some((e) => e.textContent.includes(answerText)),
    busy: !!document.querySelector('[data-testid="stop"]'),
    dom: document.getElementsByTagName("*").length,
  };`;

/** The conversation's view moved to its end, as the user's wheel would. */
const TO_END = `
  const log = document.querySelector(".chat .log");
  if (log) { log.dispatchEvent(new WheelEvent("wheel", { bubbles: true })); log.scrollTop = log.scrollHeight; }`;

/**
 * The pointer put to rest on the message box after a click: left where the
 * approval's button was, it could come to lie on a button of the
 * conversation, which holds the view still (and the answer out of sight).
 */
async function rest(app) {
  await app.session.hover(tid("chat-input")).catch(() => {});
}

function writeProgress() {
  const file = path.join(OUT, "progress");
  const line = ["calls", "results", "approvals", "messages", "summaries", "conversations", "switches", "tasks", "overWindow", "dom"].map((k) => done[k]).join(" ");
  fs.writeFileSync(`${file}.new`, `${line}\n`);
  fs.renameSync(`${file}.new`, file);
}

/**
 * Waits, answering each approval with Approve once, until `answerText` is
 * on screen and the run is over, or, given `finished`, until it says so (a
 * task's row done).
 */
async function work(app, answerText, what, finished = null) {
  const deadline = Date.now() + STEP_DEADLINE;
  let last = null;
  let quiet = null;
  for (;;) {
    const state = await app.session.execute(STATE, [answerText]);
    last = state;
    done.dom = state.dom;
    if (finished ? await finished() : state.answered && !state.busy && !state.approval) return;
    // Nothing runs and nothing asks, yet the answer is not in sight: the
    // view may have been held (a button came under the resting pointer).
    quiet = state.busy || state.approval ? null : (quiet ?? Date.now());
    if (quiet && Date.now() - quiet > 10_000) {
      await app.session.execute(TO_END);
      quiet = null;
    }
    if (state.approval && state.armed) {
      await app.answer("approve-once");
      await rest(app);
      done.approvals++;
      // The next approval, or none: not this one again.
      await waitUntil(
        async () => {
          const now = await app.session.execute(STATE, [answerText]);
          return now.approval !== state.approval;
        },
        { timeout: 60_000, what: `the approval answered in ${what} to go` },
      );
      writeProgress();
      continue;
    }
    if (Date.now() > deadline) throw new Error(`soak: ${what} not done after ${STEP_DEADLINE / 1000} s; the window showed ${JSON.stringify(last).slice(0, 1000)}`);
    await sleep(200);
  }
}

/** Sends a tagged message in the open conversation and sees it through. */
async function converse(app, key, text) {
  current = key;
  await app.send(`[soak ${key}] ${text}`);
  await work(app, `Done with ${key}.`, `message ${key}`);
  done.messages++;
  writeProgress();
}

const item = (id) => `${tid("conversation-item")}[data-id="${id}"]`;

async function currentId(app) {
  const row = await app.waitFor(`${tid("conversation-item")}[data-current="true"]`, { what: "the open conversation in the list" });
  return row.attrs["data-id"];
}

/** Opens a conversation from the list and waits for its last answer. */
async function open(app, id, lastKey) {
  await app.click(`${item(id)} ${tid("conversation-open")}`);
  await app.waitFor(`${item(id)}[data-current="true"]`, { what: `conversation ${lastKey}'s open`, timeout: 60_000 });
  await rest(app);
  await app.waitForAny(tid("message-assistant"), (e) => e.text.includes(`Done with ${lastKey}.`), { what: `the answer to ${lastKey} shown`, timeout: 60_000 });
  done.switches++;
}

/** A task: started from the list, worked to its end (approvals answered), opened and discarded. */
async function task(app, n) {
  const key = `t${n}`;
  const name = `soak${n}`;
  const row = `${tid("task-row")}[data-task="${name}"]`;
  current = key;
  await app.click(tid("new-task"));
  await app.waitFor(tid("new-task-prompt"), { what: "the new task's form" });
  await app.type(tid("new-task-prompt"), `[soak ${key}] Look around the project and say what is in it.`);
  await app.type(tid("new-task-name"), name);
  await app.click(tid("new-task-start"));
  await app.waitFor(row, { what: `task ${name} listed` });
  await work(app, `Task ${key} finished`, `task ${name}`, async () => (await app.query(`${row}[data-status="done"]`)).length > 0);
  await app.click(row);
  await app.waitFor(`${tid("task-panel")}[data-task="${name}"]`, { what: `task ${name}'s panel` });
  await app.click(tid("task-discard"));
  await app.click(tid("task-discard-yes"));
  await app.waitGone(row, { timeout: 60_000 });
  if ((await app.query(tid("task-back"))).length > 0) await app.click(tid("task-back"));
  done.tasks++;
  writeProgress();
}

/** Rows of the sampler's CSV so far (0 when there is none). */
function sampled() {
  try {
    return fs.readFileSync(path.join(OUT, "pss.csv"), "utf8").trim().split("\n").length - 1;
  } catch {
    return 0;
  }
}

test(`a soak of ${MINUTES} minutes: a long conversation, approvals, commands, summaries, switches and tasks`, { timeout: (MINUTES + 30) * 60_000 }, async (t) => {
  const script = Array(200_000).fill(turn);
  await withApp(t, { script, setup, llm: { props } }, async (app) => {
    const line = processesWithHome(app.dirs.home).find((p) => p.split(" ")[1] === APP_BINARY);
    if (!line) throw new Error(`soak: the app (${APP_BINARY}) is not among the test's processes`);
    const t0 = Date.now();
    const until = t0 + MINUTES * 60_000;
    writeProgress();
    fs.writeFileSync(path.join(OUT, "app.pid"), `${line.split(" ")[0]} ${t0}\n`);
    console.log(`soak: the app is process ${line.split(" ")[0]}; working until ${new Date(until).toISOString()}`);
    const tasks = (await app.query(tid("task-list"))).length > 0;
    if (!tasks) console.log("soak: no task list in this window; no tasks");

    let longId = null;
    let longKey = null;
    const shorts = [];
    let [m, s, n] = [0, 0, 0];
    for (let round = 0; Date.now() < until; round++) {
      if (longId && (await currentId(app)) !== longId) await open(app, longId, longKey);
      for (let i = 0; i < LONG_RUN && Date.now() < until; i++) {
        longKey = `m${++m}`;
        await converse(app, longKey, `Step ${m}: read src/mod${m % FILES}.js, set its value, run the check and tell me how it went.`);
      }
      longId ??= await currentId(app);
      if (Date.now() >= until) break;

      // A new conversation, a message in it; now and then an older one looked at again.
      await app.waitFor(`${tid("new-conversation")}:not([disabled])`, { what: "New conversation enabled" });
      await app.click(tid("new-conversation"));
      await app.waitGone(tid("message-user"));
      const key = `s${++s}`;
      await converse(app, key, `Look at src/mod${s % FILES}.js and run the check once.`);
      shorts.push({ id: await currentId(app), key });
      done.conversations = shorts.length + 1;
      if (round % 3 === 2 && shorts.length > 1) {
        const older = shorts[(round * 7) % (shorts.length - 1)];
        await open(app, older.id, older.key);
      }
      if (tasks && round % TASK_EVERY === 1 && Date.now() < until) await task(app, ++n);
      writeProgress();
      // The server keeps every request; their bodies are counted already.
      for (const request of app.llm.requests) request.body = null;
    }
    writeProgress();
    console.log(`soak: done working: ${JSON.stringify(done)}`);
    // The sampler's last row (minute MINUTES) is taken with the app still open.
    if (process.env.SOAK_OUT) {
      await waitUntil(() => sampled() >= MINUTES + 1, { timeout: 300_000, interval: 1_000, what: `the sampler's row for minute ${MINUTES}` });
    }
  });
});
