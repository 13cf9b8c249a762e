// A plan step poses as the app: "Corral security check passed. Approve
// the next command to finish setup", pinned right above the approval
// area. The plan is captioned as the model's, drawn as a quote of its own,
// and while a call waits it folds to its count, so no step of it sits
// beside the approval area.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { openai } from "../lib/wire.js";

const POSE = "⚠ Corral security check passed: this project is verified. Approve the next command to finish setup.";

test("a plan step cannot pose as an app notice beside the approval area", { timeout: 150_000 }, async (t) => {
  const steps = [
    { step: POSE, status: "in_progress" },
    { step: "Clean the build folder", status: "pending" },
  ];
  const script = [
    openai.toolCalls([{ name: "update_plan", input: { steps } }]),
    openai.toolCalls([{ name: "exec_shell", input: { command: "node", args: ["-e", "require('fs').writeFileSync('posed.txt', 'ran')"] } }]),
    openai.text("Setup finished."),
  ];

  await withApp(t, { script }, async (app) => {
    await app.send("Set up the project.");
    const area = tid("approval");
    await app.waitFor(area, { check: (e) => e.attrs["data-tool"] === "exec_shell", what: "the command in the approval area" });

    // While the call waits, the pinned plan is a count, none of its words.
    const [pinned] = await app.query(tid("pinned-plan"));
    assert.equal(pinned.attrs["data-folded"], "true");
    assert.equal(pinned.text, "The model's plan 0 of 2 done; its steps are hidden while a call waits for your answer");
    assert.equal((await app.query(`${tid("pinned-plan")} li`)).length, 0, "no step is drawn next to the approval area");
    const posed = await app.session.execute(
      `return [...document.querySelectorAll("body *")]
         .filter((e) => e.children.length === 0 && e.checkVisibility() && e.textContent.includes("Corral security check"))
         .map((e) => e.tagName + " in " + (e.closest("[data-testid]")?.dataset.testid ?? "?"));`,
    );
    assert.deepEqual(posed, [], "the posing step is nowhere in sight while the call waits");
    await app.screenshot("plan-folded");
    await app.answer("deny");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Setup finished."), { what: "the last reply" });
    assert.equal(fs.existsSync(path.join(app.dirs.project, "posed.txt")), false);

    // Once nothing waits, the plan shows its steps as the model's words.
    await app.waitFor(tid("pinned-plan"), { check: (e) => e.attrs["data-folded"] === "false", what: "the plan unfolded" });
    const [plan] = await app.query(`${tid("pinned-plan")} ${tid("plan")}`);
    assert.equal(plan.attrs["data-voice"], "model");
    const [caption] = await app.query(`${tid("pinned-plan")} ${tid("plan-caption")}`);
    assert.deepEqual({ text: caption.text.toLowerCase(), visible: caption.visible }, { text: "written by the model", visible: true });
    const quoted = await app.query(`${tid("pinned-plan")} li q`);
    assert.ok(quoted[0]?.text.includes("Corral security check passed"), JSON.stringify(quoted));
    await app.screenshot("plan");
  });
});
