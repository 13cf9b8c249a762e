// axe-core (WCAG 2.x A and AA rules) over each view of the window: the
// welcome screen, a conversation with a reply, an approval waiting, the
// settings, the file viewer, the model switcher's list and the command
// palette. None may have a
// `serious` or `critical` violation.

import assert from "node:assert/strict";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { Keys, pressCtrl } from "../lib/webdriver.js";
import { openai } from "../lib/wire.js";


/** The serious or critical violations of the view, each with where it is ("" when none). */
async function violations(app, view) {
  const found = await app.axe();
  await app.screenshot(view);
  if (found.length === 0) return "";
  const shown = found
    .map((v) => `${v.impact} ${v.id}: ${v.help}\n${v.nodes.map((n) => `      ${n.target.join(" ")}: ${n.html}\n        ${n.summary?.replaceAll("\n", "\n        ")}`).join("\n")}`)
    .join("\n    ");
  return `${view}: ${found.length} serious or critical violation(s):\n    ${shown}`;
}

/** Checks every view, then fails once with all that was found. */
function report(found) {
  const bad = found.filter(Boolean);
  assert.equal(bad.length, 0, `axe found violations:\n  ${bad.join("\n  ")}`);
}

test("the welcome screen has no serious accessibility violations", { timeout: 90_000 }, async (t) => {
  await withApp(t, { script: [], openProject: false }, async (app) => {
    await app.waitFor(tid("welcome"), { what: "the welcome screen" });
    report([await violations(app, "welcome")]);
  });
});

test("the project's views have no serious accessibility violations", { timeout: 180_000 }, async (t) => {
  const script = [
    openai.text("Hello! The project has a `README.md` and **src/greet.js**."),
    openai.toolCalls([{ name: "write_file", input: { path: "notes.txt", content: "hello\n" } }], { text: "I'll write notes.txt." }),
    openai.text("Understood."),
  ];

  await withApp(t, { script }, async (app) => {
    const found = [];
    await app.waitFor(tid("file-tree"), { check: (e) => e.text.includes("README.md"), what: "README.md in the file tree" });

    await app.send("hi");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Hello!"), { what: "the reply" });
    found.push(await violations(app, "chat"));

    await app.send("write notes.txt");
    await app.waitFor(`${tid("approval")} [data-armed="true"]`, { what: "the approval waiting" });
    found.push(await violations(app, "approval"));
    await app.answer("deny");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Understood."), { what: "the reply after the denial" });

    await app.click(tid("open-settings"));
    await app.waitFor(tid("settings"), { what: "the settings" });
    found.push(await violations(app, "settings"));
    await app.click(tid("settings-close"));
    await app.waitGone(tid("settings"));

    await app.click(`${tid("tree-file")}[data-path$="README.md"]`);
    await app.waitFor(tid("file-viewer-code"), { check: (e) => e.text.includes("# demo"), what: "README.md in the viewer" });
    found.push(await violations(app, "file-viewer"));
    await app.session.keys(Keys.ESCAPE);
    await app.waitGone(tid("file-viewer"));

    await app.click(tid("model-switcher"));
    await app.waitFor(tid("model-option"), { what: "the model switcher's list" });
    found.push(await violations(app, "model-switcher"));
    await app.session.keys(Keys.ESCAPE);
    await app.waitGone(tid("model-menu"));

    await pressCtrl(app.session, "k");
    await app.waitFor(tid("command-palette"), { what: "the command palette" });
    found.push(await violations(app, "command-palette"));
    report(found);
  });
});
