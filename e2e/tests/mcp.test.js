// The user's MCP server in the window: a fixture server (a Python script
// of the standard library) configured in the app's config folder starts
// with the project under the sandbox; Settings shows it running with its
// tools; the scripted model calls one of them; the card and the approval
// show it, and once approved its result reaches the model and the card.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { toolResults } from "../lib/requests.js";
import { openai } from "../lib/wire.js";

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../crates/corral-testkit/fixtures/mcp_server.py");

test("the model calls a tool of the user's MCP server: card, approval, result", { timeout: 120_000 }, async (t) => {
  const script = [
    (req) => {
      const names = req.body.tools.map((tool) => (tool.function ?? tool).name);
      assert.ok(names.includes("fixture__echo"), `the MCP tool is offered: ${names.join(" ")}`);
      assert.ok(names.includes("read_file"), "beside the built-in tools");
      return openai.toolCalls([{ name: "fixture__echo", input: { text: "from the window" } }]);
    },
    (req) => {
      const [result] = toolResults(req);
      assert.match(result.content, /echo: from the window/);
      return openai.text("The MCP server echoed it.");
    },
  ];
  // The script goes into the project: the sandbox shows the server a /tmp
  // of its own, where a checkout of this repository may be.
  const setup = (dirs) => {
    const script = path.join(dirs.project, ".fixture", "mcp_server.py");
    fs.mkdirSync(path.dirname(script), { recursive: true });
    fs.copyFileSync(FIXTURE, script);
    const servers = [{ name: "fixture", command: "/usr/bin/python3", args: [script] }];
    fs.writeFileSync(path.join(dirs.appConfig, "mcp.json"), JSON.stringify({ servers }, null, 2));
  };

  await withApp(t, { script, setup }, async (app) => {
    // Settings: the server runs, with its tools.
    await app.click(tid("open-settings"));
    await app.waitForAny(tid("mcp-state"), (e) => e.text === "running", { what: "the MCP server running", timeout: 30_000 });
    // Its tools by the names "Read-only tools" takes.
    const [tools] = await app.query(tid("mcp-tools"));
    assert.match(tools.text, /^\d+ tools, read-only ticked:/);
    assert.match(tools.text, /\becho\b/);
    assert.doesNotMatch(tools.text, /fixture__echo/);
    await app.click(tid("settings-close"));

    await app.send("Echo something through the MCP server.");
    const card = tid("tool-card", '[data-tool="fixture__echo"]');
    await app.waitForAny(card, (e) => e.attrs["data-status"] === "waiting", { what: "the MCP call waiting for approval" });
    const [approval] = await app.query(tid("approval"));
    assert.match(approval.text, /fixture__echo/);
    assert.match(approval.text, /from the window/);
    await app.answer("approve-once");
    await app.waitForAny(card, (e) => e.attrs["data-status"] === "done", { what: "the MCP call done" });
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("The MCP server echoed it."), { what: "the reply" });
    const [done] = await app.query(card);
    assert.match(done.text, /from the window/);
    await app.screenshot("mcp");
  });
});
