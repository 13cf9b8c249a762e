// The editor's side of `corral-cli acp` in the Rust tests (tests/all/acp.rs),
// through the official ACP TypeScript SDK (pinned in package.json): it
// parses every message Corral sends with the protocol's own schemas, so an
// update or a permission request that does not fit never reaches the
// handlers below and the test misses it.
//
//   node client.mjs PLAN_JSON
//
// PLAN: { "command": [corral-cli, ...args], "cwd": project,
//         "meta"?: session/new's _meta, "load"?: a session id to load instead,
//         "prompts": [text, ...], "answers": [optionId | "cancel", ...],
//         "cancelAfter"?: an update kind that cancels the first prompt once seen,
//         "noSession"?: true (no session/new nor load), "steps"?: [{method, params}] }
// Prints one JSON report: { "session", "updates": [[prompt index, update]],
// "permissions": [request params], "stops": [stopReason or error],
// "loadError"?: the error session/load answered, "created"?: session/new's
// answer, "newError"?: the error it answered instead, "steps": each step's
// {ok} or {error}; a step's prompt updates are those of turn 100 + its index }.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const plan = JSON.parse(process.argv[2]);
const [program, ...args] = plan.command;
const agent = spawn(program, args, { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

const report = { session: null, updates: [], permissions: [], stops: [] };
const answers = [...(plan.answers ?? [])];
let turn = -1;
let cancel = () => undefined;

const app = acp
  .client({ name: "corral-acp-test" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    report.updates.push([turn, params.update]);
    if (plan.cancelAfter && turn === 0 && params.update.sessionUpdate === plan.cancelAfter) cancel();
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    report.permissions.push(params);
    const answer = answers.shift() ?? "deny";
    if (answer === "cancel") {
      cancel();
      return { outcome: { outcome: "cancelled" } };
    }
    return { outcome: { outcome: "selected", optionId: answer } };
  });

await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  report.initialize = init;
  let sessionId;
  if (plan.noSession) {
    // Only the steps below, on sessions stored before.
  } else if (plan.load) {
    try {
      await ctx.request(acp.methods.agent.session.load, { sessionId: plan.load, cwd: plan.cwd, mcpServers: [] });
    } catch (error) {
      report.loadError = { code: error.code, message: error.message, data: error.data };
      return;
    }
    sessionId = plan.load;
  } else {
    let created;
    try {
      created = await ctx.request(acp.methods.agent.session.new, {
        cwd: plan.cwd,
        mcpServers: [],
        ...(plan.meta ? { _meta: plan.meta } : {}),
      });
    } catch (error) {
      report.newError = { code: error.code, message: error.message, data: error.data };
      return;
    }
    sessionId = created.sessionId;
    report.created = created;
  }
  report.session = sessionId;
  cancel = () => void ctx.notify(acp.methods.agent.session.cancel, { sessionId });
  for (const [index, text] of (plan.prompts ?? []).entries()) {
    turn = index;
    try {
      const answer = await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
      report.stops.push(answer.stopReason);
    } catch (error) {
      report.stops.push({ error: { code: error.code, message: error.message, data: error.data } });
    }
  }
  // Then each step: a session method by its name in the SDK ("list",
  // "resume", "prompt", "close", "delete"...), "$cwd" standing for the
  // project's folder; each answer or error in report.steps.
  report.steps = [];
  for (const step of plan.steps ?? []) {
    const params = JSON.parse(JSON.stringify(step.params ?? {}).replaceAll('"$cwd"', JSON.stringify(plan.cwd)));
    if (step.method === "prompt") turn = 100 + report.steps.length;
    try {
      report.steps.push({ ok: await ctx.request(acp.methods.agent.session[step.method], params) });
    } catch (error) {
      report.steps.push({ error: { code: error.code, message: error.message, data: error.data } });
    }
  }
});
agent.stdin.end();
await new Promise((done) => agent.on("exit", done));
process.stdout.write(`${JSON.stringify(report)}\n`);
