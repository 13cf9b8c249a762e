// A shell for real projects, in the window: a Python project's tests run
// with python3 (a known program) after one approval; a program the user
// added in Settings is offered to the model, asks, and runs with its output panel;
// a server started in the background shows in the Processes panel with the
// port this computer reaches it on, answers there, and Stop ends it.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { processesIn, tid, waitUntil, withApp } from "../lib/app.js";
import { toolResults } from "../lib/requests.js";
import { openai } from "../lib/wire.js";

test("a Python project's tests run without a trip to Settings: python3 is known, asks, and runs", { timeout: 120_000 }, async (t) => {
  const setup = (dirs) => {
    const test = "import unittest\n\nclass T(unittest.TestCase):\n    def test_sum(self):\n        self.assertEqual(6 * 7, 42)\n";
    fs.writeFileSync(path.join(dirs.project, "test_sum.py"), test);
  };
  const script = [
    (req) => {
      const shell = req.body.tools.find((tool) => (tool.function ?? tool).name === "exec_shell");
      assert.match(JSON.stringify(shell), /python3 pytest uv make go/, "the model is told python3 is known");
      assert.doesNotMatch(JSON.stringify(shell), /The user added/);
      return openai.toolCalls([{ name: "exec_shell", input: { command: "python3", args: ["-m", "unittest", "-v"] } }]);
    },
    (req) => {
      const [result] = toolResults(req);
      assert.match(JSON.stringify(result), /test_sum/);
      assert.match(JSON.stringify(result), /profile\W+build/);
      return openai.text("The tests pass.");
    },
  ];

  await withApp(t, { script, setup }, async (app) => {
    await app.send("Run the tests.");
    const cards = tid("tool-card", '[data-tool="exec_shell"]');
    await app.waitForAny(cards, (e) => e.attrs["data-status"] === "waiting", { what: "python3 waiting for approval" });
    const [approval] = await app.query(tid("approval"));
    assert.match(approval.text, /python3/);
    await app.answer("approve-once");
    await app.waitForAny(tid("command-panel"), (e) => e.attrs["data-exit-code"] === "0", { what: "python3's exit code 0", timeout: 20_000 });
    const [output] = await app.query(tid("command-output"));
    assert.match(output.text, /Ran 1 test/);
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("The tests pass."), { what: "the reply" });
  });
});

test("a program added in Settings is offered, asks, and runs with its output panel", { timeout: 120_000 }, async (t) => {
  const script = [
    (req) => {
      const shell = req.body.tools.find((tool) => (tool.function ?? tool).name === "exec_shell");
      assert.match(JSON.stringify(shell), /The user added these programs[^"]*perl/, "the model is told of perl");
      return openai.toolCalls([{ name: "exec_shell", input: { command: "perl", args: ["-e", "print 'hello from perl ', 6 * 7, qq(\\n)"] } }]);
    },
    (req) => {
      const [result] = toolResults(req);
      assert.match(JSON.stringify(result), /hello from perl 42/);
      return openai.text("Perl said hello.");
    },
  ];

  await withApp(t, { script }, async (app) => {
    await app.click(tid("open-settings"));
    await app.type(tid("shell-project-programs"), "perl");
    await app.click(tid("settings-save"));
    await app.waitForAny(tid("settings-status"), (e) => e.text.includes("with the programs"), { what: "the programs saved" });
    await app.click(tid("settings-close"));

    await app.send("Say hello from Perl.");
    const cards = tid("tool-card", '[data-tool="exec_shell"]');
    await app.waitForAny(cards, (e) => e.attrs["data-status"] === "waiting", { what: "perl waiting for approval" });
    const [approval] = await app.query(tid("approval"));
    assert.match(approval.text, /perl/);
    await app.answer("approve-once");
    await app.waitForAny(tid("command-panel"), (e) => e.attrs["data-exit-code"] === "0", { what: "perl's exit code 0", timeout: 20_000 });
    const [output] = await app.query(tid("command-output"));
    assert.match(output.text, /hello from perl 42/);
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Perl said hello."), { what: "the reply" });
  });
});

test("a background server shows in the Processes panel with its port, answers there, and Stop ends it", { timeout: 120_000 }, async (t) => {
  const server = `import http from "node:http";
http.createServer((q, s) => s.end("hello from the dev server"))
  .listen(0, "127.0.0.1", function () { console.log("dev server on port " + this.address().port); });
`;
  const script = [
    openai.toolCalls([{ name: "exec_shell", input: { command: "node", args: ["server.js"], background: true } }]),
    (req) => {
      const [result] = toolResults(req);
      assert.match(JSON.stringify(result), /bg-\d+/, "the model got a run_id");
      return openai.text("The dev server runs in the background.");
    },
  ];
  const setup = (dirs) => fs.writeFileSync(path.join(dirs.project, "server.js"), server);

  await withApp(t, { script, setup }, async (app) => {
    await app.send("Start the dev server.");
    const cards = tid("tool-card", '[data-tool="exec_shell"]');
    await app.waitForAny(cards, (e) => e.attrs["data-status"] === "waiting", { what: "node waiting for approval" });
    await app.answer("approve-once");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("runs in the background"), { what: "the reply" });

    // The panel: the command, its banner, its port and where this computer reaches it.
    const banner = await app.waitForAny(tid("process-output"), (e) => /dev server on port \d+/.test(e.text), {
      what: "the server's banner in the Processes panel",
      timeout: 20_000,
    });
    const inside = banner.text.match(/dev server on port (\d+)/)[1];
    const port = await app.waitForAny(tid("process-port"), (e) => e.attrs["data-port"] === inside && e.attrs["data-reach-at"] !== "", {
      what: `port ${inside} listed with where it is reached`,
      timeout: 20_000,
    });
    const [status] = await app.query(tid("process-status"));
    assert.equal(status.text, "running");
    const reply = await fetch(`http://127.0.0.1:${port.attrs["data-reach-at"]}/`).then((r) => r.text());
    assert.equal(reply, "hello from the dev server");
    await app.screenshot("processes");

    await app.click(tid("process-stop"));
    await app.waitForAny(tid("process-status"), (e) => e.text === "stopped", { what: "the server stopped" });
    await waitUntil(async () => processesIn(app.dirs.project).length === 0, { what: "no process left in the project", timeout: 10_000 });
    await assert.rejects(fetch(`http://127.0.0.1:${port.attrs["data-reach-at"]}/`), "the forward closed with the server");
  });
});
