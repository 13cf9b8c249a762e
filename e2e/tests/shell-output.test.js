// a command printing coloured lines over a few seconds shows
// them as they arrive, then its exit code and duration; a second, long
// command is stopped with Stop, the panel says so and the model is told.

import assert from "node:assert/strict";
import { test } from "node:test";
import { processesIn, tid, waitUntil, withApp } from "../lib/app.js";
import { toolResults } from "../lib/requests.js";
import { elementRef } from "../lib/webdriver.js";
import { openai } from "../lib/wire.js";

/**
 * Whether some text in `root` that contains `needle` is drawn in another
 * colour than the panel's own: the ANSI colour was rendered, not dropped.
 */
const COLOURED = `
  const [root, needle] = arguments;
  const base = getComputedStyle(root).color;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.textContent.includes(needle) && getComputedStyle(node.parentElement).color !== base) return true;
  }
  return false;`;

test("command output streams in with colours, then exit code and duration; Stop stops a long command", { timeout: 150_000 }, async (t) => {
  const short = openai.toolCalls([{ name: "exec_shell", input: { command: "node", args: ["tick.js", "8", "300"] } }]);
  const long = openai.toolCalls([{ name: "exec_shell", input: { command: "node", args: ["tick.js", "40", "600"] } }]);
  const script = [short, long, openai.text("The second command was stopped, as you asked.")];

  await withApp(t, { script }, async (app) => {
    await app.send("Run the tick script, then a long one.");

    // First command: allowed in this conversation by a pattern the user
    // edits from `node *` to `node tick.js *` (any arguments after those).
    const cards = tid("tool-card", '[data-tool="exec_shell"]');
    await app.waitForAny(cards, (e, i) => i === 0 && e.attrs["data-status"] === "waiting", { what: "the first command waiting for approval" });
    await app.allowInConversation(async () => {
      await app.click(tid("grant-pattern"));
      await app.type(tid("grant-pattern-text"), "\uE003tick.js *");
      await app.waitFor(tid("grant-pattern-meaning"), {
        check: (e) => e.text.includes("commands starting with node tick.js, whatever follows"),
        what: "the pattern read back",
      });
    });

    const panels = tid("command-panel");
    const outputs = tid("command-output");

    // Lines arrive while it runs: line 1 is shown before the exit code and line 8.
    const early = await waitUntil(
      async () => {
        const [panel] = await app.query(panels);
        const [output] = await app.query(outputs);
        return output?.text.includes("line 1") ? { panel, output } : null;
      },
      { what: "`line 1` in the first command's output", timeout: 15_000 },
    );
    assert.equal(early.panel.attrs["data-exit-code"] ?? "", "", "no exit code while the command runs");
    assert.doesNotMatch(early.output.text, /line 8(?!\d)/, "not all lines at once");
    assert.doesNotMatch(early.output.text, /\x1b|\[32m/, "ANSI escapes are rendered, not shown");

    const done = await app.waitForAny(panels, (e, i) => i === 0 && e.attrs["data-exit-code"] === "0", {
      what: "the first command's exit code 0",
      timeout: 15_000,
    });
    assert.match(done.text, /\d(\.\d+)?\s*(ms|s)\b/, `the panel shows a duration: ${JSON.stringify(done.text)}`);
    const [output] = await app.query(outputs);
    for (let n = 1; n <= 8; n++) assert.match(output.text, new RegExp(`line ${n}(?!\\d)`));
    const [outputId] = await app.session.findAll(outputs);
    assert.equal(
      await app.session.execute(COLOURED, [elementRef(outputId), "line 1"]),
      true,
      "the green of `\\x1b[32m` is rendered",
    );

    // Second command: runs without asking (the pattern covers it), then Stop.
    const second = await app.waitForAny(cards, (e, i) => i === 1 && e.attrs["data-status"] === "running", {
      what: "the second command running without a new approval",
    });
    assert.doesNotMatch(second.text, /approve/i);
    assert.match(second.text, /Allowed without asking by what you allowed in this conversation: commands starting with node tick\.js/);
    await app.waitForAny(outputs, (e, i) => i === 1 && e.text.includes("line 2"), { what: "the second command's output" });
    await app.screenshot("running");
    const stopButtons = await app.session.findAll(tid("command-stop"));
    assert.equal(stopButtons.length, 1, "only the running command has a Stop button");

    // With the mouse on Stop, lines still arriving do not move it from
    // under the click: the log has passed its height and follows its end,
    // and the panel grows a row a line up to its 20.
    const lineCount = async () => Number((await app.query(panels))[1]?.text.match(/(\d+) lines?/)?.[1] ?? 0);
    await waitUntil(
      () => app.session.execute(`const log = document.querySelector(".chat .log"); return log.scrollHeight > log.clientHeight + 40;`),
      { what: "the log past its height" },
    );
    await app.session.hover(tid("command-stop"));
    await app.waitFor(`.log[data-held="true"] ${tid("command-stop")}:hover`, { what: "the log held with the mouse on Stop" });
    const place = () => app.session.execute(`return document.querySelector(arguments[0]).getBoundingClientRect().top;`, [tid("command-stop")]);
    const [before, linesBefore] = [await place(), await lineCount()];
    assert.ok(linesBefore < 17, `the panel still grows while the mouse rests on Stop (${linesBefore} lines)`);
    await waitUntil(async () => (await lineCount()) >= linesBefore + 3, { what: "three more lines with the mouse on Stop" });
    assert.equal(await place(), before, "Stop stays where the mouse is while lines arrive");

    const stopAt = Date.now();
    await app.clickInLog(tid("command-stop"));

    const stopped = await app.waitForAny(cards, (e, i) => i === 1 && ["done", "failed", "cancelled"].includes(e.attrs["data-status"]), {
      what: "the second command finished after Stop",
      timeout: 10_000,
    });
    // The command would run 24 s; a loaded machine still stops it well before.
    assert.ok(Date.now() - stopAt < 15_000, "Stop ends the command at once, not after its 24 s");
    assert.equal(stopped.attrs["data-status"], "cancelled", "a stopped command is cancelled, not failed or done");
    assert.match(stopped.text, /stopped/i, `the panel says it was stopped: ${JSON.stringify(stopped.text)}`);
    const [, secondOutput] = await app.query(outputs);
    assert.doesNotMatch(secondOutput.text, /line 40(?!\d)/);
    assert.deepEqual(processesIn(app.dirs.project), [], "no process is left running in the project");

    // The model saw the full first output, and that the second was stopped.
    await app.llm.waitForRequests(3);
    const [firstResult] = toolResults(app.llm.requests[1]);
    assert.equal(firstResult.tool_use_id, short.ids[0]);
    const firstOut = JSON.parse(firstResult.content);
    assert.equal(firstOut.exit_code, 0);
    assert.ok(firstOut.stdout.includes("\x1b[32mline 8\x1b[0m"), "the model gets the raw output");
    const secondResult = toolResults(app.llm.requests[2]).find((r) => r.tool_use_id === long.ids[0]);
    assert.ok(secondResult, "the stopped call has a tool result");
    assert.match(secondResult.content, /cancel|stopped/i);
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("was stopped"), { what: "the model's reply" });
  });
});
