// Characters that hide or disguise code are marked wherever the user
// judges a call: Trojan Source bidi controls in a diff and in a file name
// (the approval area, the diff header, the card, the tree, the @-picker
// and its chips), a lone CR and a U+2028 that make code look like part of
// a comment, 6,000 braille blanks pushing a command's real work out of
// sight, and the blank-looking characters no hand list had: the Hangul
// fillers, variation selectors, U+034F, U+17B4 and a stack of combining
// marks.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { RECT, TEXT_RECT, within } from "../lib/page.js";
import { elementRef, Keys } from "../lib/webdriver.js";
import { openai } from "../lib/wire.js";

const NAME = "report\u202Etxt.js";
const SHOWN_NAME = "report⟨U+202E⟩txt.js";
const CODE = [
  'const accessLevel = "user";',
  'if (accessLevel != "user\u202E \u2066// Check if admin\u2069 \u2066") {',
  '  console.log("You are an admin.");',
  "}",
  '// check the input\rrequire("fs").writeFileSync("cr.txt", "ran");',
  '// keep in sync\u2028require("fs").writeFileSync("ls.txt", "ran");',
  "",
].join("\n");
const BRAILLE = `console.log("hi")${"\u2800".repeat(6000)};require("fs").writeFileSync("braille.txt", "ran")`;
const BLANKS = `console.log(1)\u3164\u115F\u1160\uFFA0\uFE0F\u034F\u17B4a${"\u0336".repeat(30)};process.exit(0)`;

test("bidi controls, a lone CR, U+2028, braille blanks and other blank characters are marked in approvals, cards, the tree and the picker", { timeout: 180_000 }, async (t) => {
  const script = [
    openai.toolCalls([{ name: "exec_shell", input: { command: "node", args: ["-e", BRAILLE] } }]),
    openai.toolCalls([{ name: "exec_shell", input: { command: "node", args: ["-e", BLANKS] } }]),
    openai.toolCalls([{ name: "write_file", input: { path: NAME, content: CODE } }]),
    openai.text("All done."),
  ];

  await withApp(t, { script }, async (app) => {
    await app.send("Write the access check.");
    const area = tid("approval");
    // P1: 6,000 braille blanks are one counted marker; the command's work is in sight.
    await app.waitFor(area, { check: (e) => e.attrs["data-tool"] === "exec_shell", what: "the padded command in the approval area" });
    const padded = await app.query(`${area} ${tid("call-args")} li`);
    assert.deepEqual(
      padded.map((li) => li.text),
      ["-e", 'console.log("hi")⟨U+2800 ×6000⟩;require("fs").writeFileSync("braille.txt", "ran")'],
    );
    const [details] = await app.session.findAll(tid("approval-details"));
    const work = await app.session.execute(TEXT_RECT, [elementRef(details), 'writeFileSync("braille.txt"']);
    const box = await app.session.execute(RECT, [elementRef(details)]);
    assert.ok(work && within(work, box), `the command's work is in sight: ${JSON.stringify({ work, box })}`);
    await app.screenshot("braille");
    await app.answer("deny");

    // P2: the Hangul fillers, a variation selector, U+034F, U+17B4 and 30 stacked marks.
    await app.waitFor(area, { check: (e) => e.attrs["data-tool"] === "exec_shell" && !e.text.includes("braille"), what: "the second command" });
    await app.waitFor(`${area} ${tid("call-args")} li:nth-child(2)`, { check: (e) => e.text.startsWith("console.log(1)"), what: "its arguments" });
    const [blank] = await app.query(`${area} ${tid("call-args")} li:nth-child(2)`);
    assert.equal(blank.text, "console.log(1)⟨U+3164⟩⟨U+115F⟩⟨U+1160⟩⟨U+FFA0⟩⟨U+FE0F⟩⟨U+034F⟩⟨U+17B4⟩a⟨U+0336 ×30⟩;process.exit(0)");
    await app.answer("deny");
    await app.waitFor(area, { check: (e) => e.attrs["data-tool"] === "write_file", what: "the write in the approval area" });

    // W2, W5, W6: every row of the diff shows what it hides, as does the file name.
    const rows = await app.query(`${area} ${tid("diff-row")} .text`);
    assert.deepEqual(
      rows.map((r) => r.text),
      [
        '+const accessLevel = "user";',
        '+if (accessLevel != "user⟨U+202E⟩ ⟨U+2066⟩// Check if admin⟨U+2069⟩ ⟨U+2066⟩") {',
        '+  console.log("You are an admin.");',
        "+}",
        '+// check the input⟨U+000D⟩require("fs").writeFileSync("cr.txt", "ran");',
        '+// keep in sync⟨U+2028⟩require("fs").writeFileSync("ls.txt", "ran");',
      ],
    );
    const titles = await app.query(`${area} ${tid("diff-row")} .mark`);
    assert.deepEqual(
      [...new Set(titles.map((m) => m.attrs.title))],
      ["U+202E right-to-left override", "U+2066 left-to-right isolate", "U+2069 pop directional isolate", "U+000D carriage return", "U+2028 line separator"],
    );
    const [header] = await app.query(`${area} ${tid("diff")} .path`);
    assert.equal(header.text, SHOWN_NAME);
    const [typed] = await app.query(`${area} ${tid("call-path")}`);
    assert.equal(typed.text, SHOWN_NAME);
    const [reason] = await app.query(`${area} header .reason`);
    assert.ok(reason.text.includes(SHOWN_NAME), `the reason marks the name: ${reason.text}`);
    await app.screenshot("bidi");
    await app.answer("approve-once");

    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("All done."), { what: "the last reply" });
    for (const name of ["cr.txt", "ls.txt", "braille.txt"]) assert.equal(fs.existsSync(path.join(app.dirs.project, name)), false, `${name} was never run`);
    assert.equal(fs.readFileSync(path.join(app.dirs.project, NAME), "utf8"), CODE);

    // The card's subject and diff header, and the tree, mark the name too.
    const [card] = await app.query(tid("tool-card", '[data-tool="write_file"]'));
    assert.ok(card.text.includes(SHOWN_NAME), card.text);
    const [cardHeader] = await app.query(`${tid("tool-card", '[data-tool="write_file"]')} ${tid("diff")} .path`);
    assert.equal(cardHeader.text, SHOWN_NAME);
    const tree = await app.waitFor(`${tid("tree-file")}[data-path="${NAME}"] .revealed`, { what: "the new file in the tree" });
    assert.equal(tree.text, SHOWN_NAME);

    // The @-picker and the chip of the picked file.
    await app.type(tid("chat-input"), "Check @report");
    await app.waitFor(`${tid("file-option")}[aria-selected="true"]`, { check: (e) => e.text.includes("report"), what: "the file in the picker" });
    const [option] = await app.query(`${tid("file-option")}[aria-selected="true"] .name`);
    assert.equal(option.text, SHOWN_NAME);
    await app.screenshot("picker");
    await app.session.keys(Keys.ENTER);
    await app.waitFor(tid("mention-chip"), { what: "the chip" });
    const [chip] = await app.query(`${tid("mention-chip")} .mono`);
    assert.equal(chip.text, SHOWN_NAME);
  });
});
