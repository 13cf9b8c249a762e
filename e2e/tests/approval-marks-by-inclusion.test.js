// What the user approves is drawn as-is only where it is visibly drawn:
// a hostile model pads a `node -e` payload with 8,000 object replacement
// characters (U+FFFC, drawn as a blank box) on each side, and hides
// pieces behind a blank musical notehead (U+1D159), an unassigned code
// point, a noncharacter and an enclosing mark. None of them had ink or a
// marker before: the approval area now shows each as a counted marker,
// and the payload's work stays in sight.

import assert from "node:assert/strict";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { RECT, TEXT_RECT, within } from "../lib/page.js";
import { elementRef } from "../lib/webdriver.js";
import { openai } from "../lib/wire.js";

const PAD = "\uFFFC".repeat(8000);
const PAYLOAD = `console.log("hi")${PAD};require("fs").writeFileSync("fffc.txt", "ran")${PAD}`;
const HIDDEN = `console.log(1)\u{1D159}\u0378\uFDD0x\u20DD;process.exit(0)`;

test("object replacement padding, blank noteheads, unassigned and noncharacter code points and enclosing marks are marked in the approval", { timeout: 180_000 }, async (t) => {
  const script = [
    openai.toolCalls([{ name: "exec_shell", input: { command: "node", args: ["-e", PAYLOAD] } }]),
    openai.toolCalls([{ name: "exec_shell", input: { command: "node", args: ["-e", HIDDEN] } }]),
    openai.text("All done."),
  ];
  await withApp(t, { script }, async (app) => {
    await app.send("Say hi.");
    const area = tid("approval");
    await app.waitFor(area, { check: (e) => e.attrs["data-tool"] === "exec_shell", what: "the padded command in the approval area" });
    const padded = await app.query(`${area} ${tid("call-args")} li`);
    assert.deepEqual(
      padded.map((li) => li.text),
      ["-e", 'console.log("hi")⟨U+FFFC ×8000⟩;require("fs").writeFileSync("fffc.txt", "ran")⟨U+FFFC ×8000⟩'],
    );
    const [details] = await app.session.findAll(tid("approval-details"));
    const work = await app.session.execute(TEXT_RECT, [elementRef(details), 'writeFileSync("fffc.txt"']);
    const box = await app.session.execute(RECT, [elementRef(details)]);
    assert.ok(work && within(work, box), `the command's work is in sight: ${JSON.stringify({ work, box })}`);
    await app.answer("deny");

    await app.waitFor(area, { check: (e) => e.attrs["data-tool"] === "exec_shell" && !e.text.includes("fffc"), what: "the second command" });
    await app.waitFor(`${area} ${tid("call-args")} li:nth-child(2)`, { check: (e) => e.text.startsWith("console.log(1)"), what: "its arguments" });
    const [, hidden] = await app.query(`${area} ${tid("call-args")} li`);
    assert.equal(hidden.text, "console.log(1)⟨U+1D159⟩⟨U+0378⟩⟨U+FDD0⟩x⟨U+20DD⟩;process.exit(0)");
    await app.answer("deny");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("All done."), { what: "the end" });
  });
});
