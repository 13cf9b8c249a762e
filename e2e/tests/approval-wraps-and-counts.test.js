// A write hides code where the approval area does not draw it: past the
// right edge of a long line (a short `count = 10` followed by 400 spaces,
// or 3,000 characters, then the payload), or past the diff's 2,000th row.
// Long rows wrap with `↪` on each continuation line and nothing scrolls
// sideways; a change of more rows says its size at the top, shows the rest
// on request, and Approve waits until every row was drawn and the area
// read to its end.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { RECT, TEXT_RECT } from "../lib/page.js";
import { elementRef } from "../lib/webdriver.js";
import { openai } from "../lib/wire.js";

const PAYLOAD = `import("node:fs").then((fs) => fs.rmSync("src", { recursive: true }))`;

/** Whether an element scrolls sideways: what lies past its right edge is out of sight. */
const SIDEWAYS = `const el = arguments[0]; return { scroll: el.scrollWidth, client: el.clientWidth };`;

test("a long line wraps with a continuation mark; nothing hides past the right edge", { timeout: 150_000 }, async (t) => {
  const wide = `const banner = "${"=".repeat(3000)}"; ${PAYLOAD}`;
  const content = `// settings\nexport const retries = 3;\ncount = 10${" ".repeat(400)}${PAYLOAD}\n${wide}\n`;
  const script = [openai.toolCalls([{ name: "write_file", input: { path: "config.js", content } }]), openai.text("Saved the settings.")];

  await withApp(t, { script }, async (app) => {
    await app.send("Add a settings file.");
    const area = tid("approval");
    await app.waitFor(area, { check: (e) => e.attrs["data-tool"] === "write_file", what: "the write in the approval area" });
    const rows = await app.query(`${area} ${tid("diff-row")} .text`);
    assert.deepEqual(
      rows.map((r) => r.text.replace(/\n/g, "")),
      ["+// settings", "+export const retries = 3;", `+count = 10⟨400 spaces⟩${PAYLOAD}`, `+${wide}`],
    );

    const [details] = await app.session.findAll(tid("approval-details"));
    const [diffRows] = await app.session.findAll(`${area} [role="table"]`);
    for (const [what, el] of [["the details box", details], ["the diff", diffRows]]) {
      const { scroll, client } = await app.session.execute(SIDEWAYS, [elementRef(el)]);
      assert.ok(scroll <= client + 1, `${what} does not scroll sideways: ${scroll} > ${client}`);
    }
    // Both payloads are drawn inside the box's width: the one after the spaces, and the one after 3,000 characters.
    const box = await app.session.execute(RECT, [elementRef(details)]);
    for (const needle of [`⟨400 spaces⟩`, `"; import("node:fs")`]) {
      const at = await app.session.execute(TEXT_RECT, [elementRef(details), needle]);
      assert.ok(at && at.left >= box.left - 1 && at.right <= box.right + 1, `${needle} is drawn within the box's width: ${JSON.stringify({ at, box })}`);
    }
    // The wide row wrapped, and its continuation lines carry the mark.
    const wrapped = await app.session.execute(
      `const rows = [...document.querySelectorAll('[data-testid="approval"] [data-testid="diff-row"]')];
       const row = rows[3];
       const line = parseFloat(getComputedStyle(row).lineHeight);
       const mark = getComputedStyle(row, "::after");
       return { lines: Math.round(row.getBoundingClientRect().height / line), mark: mark.content, firstRowLines: Math.round(rows[0].getBoundingClientRect().height / line) };`,
    );
    assert.equal(wrapped.mark, '"↪"');
    assert.equal(wrapped.firstRowLines, 1, "a short row does not wrap");
    assert.ok(wrapped.lines > 10, `the 3,000-character row wraps onto many lines: ${JSON.stringify(wrapped)}`);
    await app.screenshot("wrapped");

    await app.answer("approve-once");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Saved the settings."), { what: "the last reply" });
    assert.equal(fs.readFileSync(path.join(app.dirs.project, "config.js"), "utf8"), content, "what was shown is what was written");
  });
});

test("a change of more than 2,000 rows states its size and cannot be approved before all of it was shown", { timeout: 180_000 }, async (t) => {
  const lines = Array.from({ length: 2600 }, (_, i) => `// generated table, row ${i + 1}`);
  const content = `${lines.join("\n")}\n${PAYLOAD}\n`;
  const script = [openai.toolCalls([{ name: "write_file", input: { path: "table.js", content } }]), openai.text("Wrote the table.")];

  await withApp(t, { script }, async (app) => {
    await app.send("Generate the lookup table.");
    const area = tid("approval");
    await app.waitFor(`${area} [data-armed="true"]`, { what: "the approval's buttons to take clicks" });

    // Its size is at the top, in sight; what is not drawn yet says so.
    const [size] = await app.query(`${area} ${tid("diff-size")}`);
    assert.deepEqual({ text: size.text, visible: size.visible }, { text: "2,602 rows, first 2,000 shown", visible: true });
    const [more] = await app.query(`${area} ${tid("diff-more")}`);
    assert.ok(more.text.startsWith("602 more rows not shown yet."), more.text);
    assert.equal((await app.query(`${area} ${tid("diff-row")}`)).length, 1999, "a page of rows (and the hunk header) is drawn");

    // Approve waits; Deny does not.
    const state = () =>
      app.session.execute(
        `const area = document.querySelector('[data-testid="approval"]');
         return { once: area.querySelector('[data-testid="approve-once"]').disabled, deny: area.querySelector('[data-testid="deny"]').disabled,
                  unseen: area.querySelector('[data-testid="approval-unseen"]')?.innerText ?? null };`,
      );
    assert.deepEqual(await state(), {
      once: true,
      deny: false,
      unseen: "Approve waits until you have seen all of it: scroll to the end, after showing every row of the change.",
    });
    // Scrolled to the end of the first page only: still waiting.
    await app.session.execute(`const b = document.querySelector('[data-testid="approval-details"]'); b.scrollTop = b.scrollHeight;`);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await state()).once, true, "the end of the first page is not the end of the change");

    await app.click(`${area} ${tid("diff-show-all")}`);
    await app.waitFor(`${area} ${tid("diff-size")}`, { check: (e) => e.text === "2,602 rows", what: "every row shown" });
    const last = await app.query(`${area} ${tid("diff-row")}`);
    assert.ok(last.at(-1).text.includes(PAYLOAD), "the row after the 2,000th is in the page");
    assert.equal((await state()).once, true, "every row drawn, not yet read to the end");
    await app.screenshot("long-change");

    assert.ok((await app.readWhole()) >= 1);
    assert.equal((await state()).unseen, null);
    await app.answer("deny");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Wrote the table."), { what: "the last reply" });
    assert.equal(fs.existsSync(path.join(app.dirs.project, "table.js")), false);
  });
});
