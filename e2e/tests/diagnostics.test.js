// Diagnostics in the window: the model checks src/total.ts (which starts
// the project's TypeScript server, installed in the test's ~/.local; twice,
// for a slow first start), then edits it into a type error. The edit's card shows
// the error with its file and line, the tree counts it on the file and its
// folder, and the Problems panel lists it.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { tid, withApp } from "../lib/app.js";
import { openai } from "../lib/wire.js";

// The test language servers (scripts/setup.sh --test installs them).
const SERVERS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../crates/corral-lsp/tests/servers/node_modules");

/**
 * typescript-language-server and TypeScript in `home`'s `~/.local`: the packages where a global npm install puts
 * them, started by a launcher script in `~/.local/bin` (the sandbox shows a server its whole install prefix).
 */
function installTypeScriptServer(home) {
  const prefix = path.join(home, ".local");
  for (const pkg of ["typescript-language-server", "typescript"]) {
    fs.cpSync(path.join(SERVERS, pkg), path.join(prefix, "lib/node_modules", pkg), { recursive: true });
  }
  fs.mkdirSync(path.join(prefix, "bin"), { recursive: true });
  const cli = path.join(prefix, "lib/node_modules/typescript-language-server/lib/cli.mjs");
  fs.writeFileSync(path.join(prefix, "bin/typescript-language-server"), `#!/bin/sh\nexec node '${cli}' "$@"\n`, { mode: 0o755 });
}

const TOTAL = "export function total(xs: number[]): number {\n  return xs.length;\n}\n\nexport const n: number = total([1, 2]);\n";

test("an edit into a type error: its card shows it, the tree counts it, the Problems panel lists it", { timeout: 180_000 }, async (t) => {
  if (!fs.existsSync(path.join(SERVERS, ".bin/typescript-language-server"))) {
    t.skip("the test language servers are not installed; run scripts/setup.sh --test");
    return;
  }
  const script = [
    // Each check waits up to 20 s; on a loaded machine tsserver's first load of the project may take longer.
    openai.toolCalls([{ name: "diagnostics", input: { path: "src/total.ts" } }]),
    openai.toolCalls([{ name: "diagnostics", input: { path: "src/total.ts" } }]),
    openai.toolCalls([{ name: "edit_file", input: { path: "src/total.ts", old_string: "const n: number", new_string: "const n: string" } }]),
    openai.text("Changed the type of n."),
  ];
  const setup = (dirs) => {
    installTypeScriptServer(dirs.home);
    fs.writeFileSync(path.join(dirs.project, "tsconfig.json"), '{ "compilerOptions": { "strict": true } }\n');
    fs.writeFileSync(path.join(dirs.project, "src/total.ts"), TOTAL);
  };

  await withApp(t, { script, setup, mode: "full_auto" }, async (app) => {
    await app.send("Make n a string.");
    // The checks start the server and wait for its first answer.
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Changed the type of n."), { timeout: 90_000, what: "the reply" });

    const edit = tid("tool-card", '[data-tool="edit_file"]');
    const card = await app.waitFor(`${edit} ${tid("tool-diagnostics")}`, { what: "the edit's diagnostics on its card" });
    assert.match(card.text, /Diagnostics: 1 error/);
    const [shown] = await app.query(`${edit} ${tid("diagnostic")}`);
    assert.equal(shown.attrs["data-severity"], "error");
    assert.match(shown.text, /src\/total\.ts:5:14/);
    assert.match(shown.text, /Type 'number' is not assignable to type 'string'/);
    assert.equal(fs.readFileSync(path.join(app.dirs.project, "src/total.ts"), "utf8"), TOTAL.replace("const n: number", "const n: string"));

    // The tree: the folder counts its file's error; opened, so does the file.
    const folder = await app.waitFor(`${tid("tree-dir")}[data-path="src"] ${tid("tree-problems")}`, { what: "src's problem count in the tree" });
    assert.equal(folder.text.trim(), "1");
    assert.equal(folder.attrs["aria-label"], "1 error");
    await app.click(`${tid("tree-dir")}[data-path="src"]`);
    const file = await app.waitFor(`${tid("tree-file")}[data-path="src/total.ts"] ${tid("tree-problems")}`, { what: "src/total.ts's count in the tree" });
    assert.equal(file.text.trim(), "1");
    assert.equal((await app.query(`${tid("tree-file")}[data-path="src/greet.js"] ${tid("tree-problems")}`)).length, 0);

    // The Problems panel, from the header.
    const [button] = await app.query(tid("show-problems"));
    assert.match(button.text, /Problems \(1\)/);
    await app.click(tid("show-problems"));
    const listed = await app.waitFor(`${tid("problems-panel")} ${tid("diagnostic")}`, { what: "the error in the Problems panel" });
    assert.match(listed.text, /src\/total\.ts:5:14/);
    assert.match(listed.text, /not assignable to type 'string'/);
    await app.screenshot("problems");
  });
});
