// Ollama spoken to in its own API: the real app, set to the Ollama
// provider, against a scripted server that answers as Ollama does
// (`/api/show` with the model's trained length, `/api/chat` streaming one
// JSON object a line, tool calls whole with their arguments as objects).
// Every request carries the window the settings give as `num_ctx`, so the
// model runs with the window the agent plans for.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { ollama } from "../lib/wire.js";

test("set to Ollama, the window completes a read (after thinking, shown) and a write (asked for in an 8k window) over /api/chat, num_ctx sent each time", { timeout: 180_000 }, async (t) => {
  // A thinking model: its reasoning before the call is shown, never sent back.
  const read = ollama.toolCalls([{ name: "read_file", input: { path: "README.md" } }], { thinking: "The summary needs what README.md says." });
  // An 8k window names write_file in more_tools only: a direct call of it is told its parameters are offered now.
  const write = () => ollama.toolCalls([{ name: "write_file", input: { path: "summary.txt", content: "A small project.\n" } }], { text: "Writing the summary." });
  const script = [read, write(), write(), ollama.text("Done: summary.txt says what the project is.")];
  const llm = { ollama: { contextLength: 40_960 } };
  await withApp(t, { script, provider: "ollama", mode: "full_auto", llm, settings: { context_window: 8_192 } }, async (app) => {
    await app.send("Summarize README.md into summary.txt.");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Done: summary.txt"), { what: "the task's end", timeout: 60_000 });
    assert.equal(fs.readFileSync(path.join(app.dirs.project, "summary.txt"), "utf8"), "A small project.\n");
    const [thought] = await app.queryConversation(tid("reasoning"));
    assert.ok(thought, "the reasoning is on screen");
    assert.match(thought.text, /^Thought/, "folded once the turn ended");
    // Unfolded, it reads as the model thought it.
    // A click that lands while the row re-renders may not take: the
    // disclosure is clicked again until it is open (never toggled shut).
    for (let tries = 1; ; tries++) {
      if ((await app.queryConversation(`${tid("reasoning")}[open]`)).length === 0) await app.clickInLog(`${tid("reasoning")} summary`);
      try {
        await app.waitFor(`${tid("reasoning")}[open] pre`, { check: (e) => e.text === "The summary needs what README.md says.", what: "the reasoning unfolded", timeout: 5_000 });
        break;
      } catch (error) {
        if (tries === 3) throw error;
      }
    }

    const requests = app.llm.requests;
    assert.equal(requests.length, 4);
    for (const req of requests) {
      assert.equal(req.path, "/api/chat");
      assert.equal(req.body.stream, true);
      assert.equal(req.body.options.num_ctx, 8_192, "the window set, as num_ctx");
      assert.ok(req.body.options.num_predict > 0 && req.body.options.num_predict < 8_192, "the reply's limit, inside the window");
      assert.ok(req.body.tools.some((tool) => tool.function.name === "read_file"));
    }
    assert.ok(requests.every((req) => !JSON.stringify(req.body.messages).includes("The summary needs")), "the reasoning is never sent back");
    // The call went back as Ollama takes it: the arguments an object, the result a `tool` message naming its tool.
    const second = requests[1].body.messages;
    const call = second.find((m) => m.role === "assistant" && m.tool_calls);
    assert.deepEqual(call.tool_calls, [{ id: read.ids[0], function: { name: "read_file", arguments: { path: "README.md" } } }]);
    const result = second.find((m) => m.role === "tool");
    assert.equal(result.tool_name, "read_file");
    assert.equal(result.tool_call_id, read.ids[0]);
    assert.match(result.content, /A small project the end-to-end suite opens in Corral\./);
    const writes = (req) => req.body.messages.filter((m) => m.role === "tool" && m.tool_name === "write_file").map((m) => m.content);
    assert.deepEqual(writes(requests[2]), ["Not run: write_file's parameters are offered now. Call it again with them."]);
    assert.equal(writes(requests[3]).length, 2);
    assert.ok(requests[2].body.tools.find((tool) => tool.function.name === "write_file").function.parameters.properties.content, "offered whole once asked for");

    // The model's facts came from /api/show: the meter's window is the one sent, below the trained length.
    assert.ok(app.llm.probes.some((p) => p.path === "/api/show" && p.body?.model === "scripted"));
    const [meter] = await app.query(tid("context-meter"));
    assert.equal(meter.attrs["data-window"], "8192");
    assert.equal((await app.query(tid("error-banner"))).length, 0, "no error on screen");
  });
});
