// The README's screenshots: each main view of the real app under Xvfb,
// reached the way a user reaches it, against the scripted LLM server.
// Run with `scripts/screenshots.sh`, which writes docs/screenshots/; not
// part of the e2e suite (it checks only that each view appears).

import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { tid, withApp } from "../lib/app.js";
import { pressCtrl } from "../lib/webdriver.js";
import { openai } from "../lib/wire.js";

const OUT =
  process.env.CORRAL_SCREENSHOTS ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "artifacts", "tour");
const shot = (app, name) => app.screenshotTo(path.join(OUT, `${name}.png`));
const DARK = { GTK_THEME: "Adwaita:dark" };

const READS = [
  { name: "list_directory", input: { path: "." } },
  { name: "read_file", input: { path: "src/greet.js" } },
  { name: "search_files", input: { query: "greet", max_results: 20 } },
];

const ANSWER = `The project is a tiny Node package:

- \`src/greet.js\` exports **\`greet(name)\`**, which returns a greeting.
- \`check.js\` checks it and prints a coloured report.

To make the greeting louder, I would change it like this:

\`\`\`js
export function greet(name, { shout = false } = {}) {
  const text = \`Hello, \${name}!\`;
  return shout ? text.toUpperCase() : text;
}
\`\`\``;

const EDIT = {
  name: "edit_file",
  input: {
    path: "src/greet.js",
    old_string: "export function greet(name) {\n  return `Hello, ${name}!`;\n}",
    new_string:
      "export function greet(name, { shout = false } = {}) {\n  const text = `Hello, ${name}!`;\n  return shout ? text.toUpperCase() : text;\n}",
  },
};

test("welcome screen", { timeout: 60_000 }, async (t) => {
  const setup = (dirs) => {
    fs.mkdirSync(dirs.appConfig, { recursive: true });
    const recent = [
      { root: dirs.project, name: path.basename(dirs.project) },
      { root: path.join(path.dirname(dirs.project), "api-server"), name: "api-server" },
      { root: path.join(path.dirname(dirs.project), "website"), name: "website" },
    ];
    fs.writeFileSync(path.join(dirs.appConfig, "recent.json"), JSON.stringify(recent));
  };
  await withApp(t, { script: [], fixture: "greeter", openProject: false, setup }, async (app) => {
    await app.waitFor(tid("recent-project"), { what: "the recent projects" });
    await shot(app, "welcome");
  });
});

test("chat with tool cards, an approval with a diff, a command panel", { timeout: 120_000 }, async (t) => {
  const script = [
    openai.toolCalls(READS, { text: "Let me look at the project first." }),
    openai.text(ANSWER),
    openai.toolCalls([EDIT]),
    openai.toolCalls([{ name: "exec_shell", input: { command: "node", args: ["check.js"] } }]),
    openai.text("I changed `src/greet.js` so `greet` takes a `shout` option. One test fails: the name is not trimmed."),
  ];
  await withApp(t, { script, fixture: "greeter" }, async (app) => {
    await app.send("What does this project do?");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("tiny Node package"), { what: "the answer" });
    await shot(app, "chat");

    await app.send("Add a shout option to greet, then run the tests.");
    await app.waitFor(`${tid("approval")} [data-armed="true"]`, { what: "the approval, ready" });
    await app.waitFor(tid("diff"), { what: "the diff of the edit" });
    await shot(app, "approval");
    await app.answer("approve-once");

    const cards = tid("tool-card", '[data-tool="exec_shell"]');
    await app.waitForAny(cards, (e) => e.attrs["data-status"] === "waiting", { what: "the command waiting" });
    await app.answer("approve-once");
    await app.waitFor(tid("command-panel"), { check: (e) => e.attrs["data-exit-code"] === "1", what: "the command's exit code" });
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("One test fails"), { what: "the report" });
    await shot(app, "command");
  });
});

test("an approval's grant and rule panels", { timeout: 90_000 }, async (t) => {
  const script = [openai.toolCalls([{ name: "exec_shell", input: { command: "node", args: ["check.js"] } }]), openai.text("Not run.")];
  await withApp(t, { script, fixture: "greeter" }, async (app) => {
    await app.send("Run the tests.");
    await app.answer("approve-conversation");
    await app.waitFor(`${tid("grant-chooser")} [data-armed="true"]`, { what: "the grant panel" });
    await app.click(tid("grant-pattern"));
    await app.type(tid("grant-pattern-text"), "\uE003check.js *");
    await app.waitFor(tid("grant-pattern-meaning"), { check: (e) => e.text.includes("node check.js"), what: "the pattern read back" });
    await shot(app, "approval-grant");
    await app.click(tid("grant-cancel"));
    await app.answer("approve-always");
    await app.waitFor(`${tid("rule-confirm")} [data-armed="true"]`, { what: "the rule to confirm" });
    await shot(app, "approval-rule");
    await app.click(tid("rule-cancel"));
    await app.answer("deny");
  });
});

test("a tool error and a provider error", { timeout: 60_000 }, async (t) => {
  const script = [
    openai.toolCalls([{ name: "read_file", input: { path: "../outside/secret.txt" } }]),
    openai.error(401, "Incorrect API key provided.", "invalid_request_error"),
  ];
  await withApp(t, { script, fixture: "greeter" }, async (app) => {
    await app.send("Read ../outside/secret.txt");
    await app.waitFor(tid("error-code"), { what: "the tool error" });
    await app.waitFor(tid("error-banner"), { what: "the provider error" });
    await shot(app, "error");
  });
});

test("settings, and the chat in the dark theme", { timeout: 90_000 }, async (t) => {
  const script = [openai.toolCalls(READS.slice(0, 2)), openai.text(ANSWER)];
  await withApp(t, { script, fixture: "greeter", env: DARK }, async (app) => {
    await app.send("What does this project do?");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("tiny Node package"), { what: "the answer" });
    await shot(app, "chat-dark");
    await app.click(tid("open-settings"));
    await app.waitFor(tid("settings"), { what: "the settings" });
    await shot(app, "settings-dark");
  });
});

test("settings", { timeout: 60_000 }, async (t) => {
  await withApp(t, { script: [], fixture: "greeter" }, async (app) => {
    await app.click(tid("open-settings"));
    await app.waitFor(tid("settings"), { what: "the settings" });
    await shot(app, "settings");
  });
});

test("the workspace: the file picker, the viewer, the command palette, the changes", { timeout: 150_000 }, async (t) => {
  const script = [openai.toolCalls([EDIT]), openai.text("`greet` can now shout.")];
  await withApp(t, { script, fixture: "greeter" }, async (app) => {
    await app.send("Let greet shout.");
    await app.waitFor(`${tid("approval")} [data-armed="true"]`, { what: "the approval" });
    await app.answer("approve-once");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("shout"), { what: "the reply" });

    await app.type(tid("chat-input"), "Explain @src/gr");
    await app.waitFor(`${tid("file-option")}[aria-selected="true"]`, { what: "the picker" });
    await shot(app, "picker");
    await app.session.keys("\uE00C");
    await app.waitGone(tid("file-picker"));

    await app.click(`${tid("tree-file")}[data-path$="README.md"]`);
    await app.waitFor(tid("file-viewer-code"), { what: "the viewer" });
    await shot(app, "viewer");
    await app.click(tid("file-viewer-close"));
    await app.waitGone(tid("file-viewer"));

    await pressCtrl(app.session, "k");
    await app.waitFor(tid("command-palette"), { what: "the palette" });
    await shot(app, "palette");
    await app.session.keys("\uE00C");
    await app.waitGone(tid("command-palette"));

    await app.click(tid("show-changes"));
    await app.waitFor(tid("change"), { what: "the changes" });
    await shot(app, "changes");
  });
});
