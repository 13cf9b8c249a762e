// What a new user stumbled on in the first hour, in the real window: an
// image put on the X clipboard (the `image/png` target screenshot tools
// offer) pastes with Ctrl+V; a long conversation title ends in an
// ellipsis with its age in sight; the tree dims ignored folders; Settings'
// one Save stays where it is when a status appears.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { tid, waitUntil, withApp } from "../lib/app.js";
import { pressCtrl } from "../lib/webdriver.js";
import { openai } from "../lib/wire.js";

/** A 2×2 PNG: red, green, blue, white. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR4nGP4z8DAAMIM/4EAAB/uBfsL2WiLAAAAAElFTkSuQmCC";

/** The box of the first element matching a CSS selector, and whether its text overflows it. */
const BOX = `
  const el = document.querySelector(arguments[0]);
  if (!el) return null;
  const r = el.getBoundingClientRect();
  return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, cut: el.scrollWidth > el.clientWidth };`;

test("an image on the X clipboard (image/png) pastes into the message box with Ctrl+V and is sent", { timeout: 120_000 }, async (t) => {
  const file = path.join(fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "corral-clip-")), "shot.png");
  fs.writeFileSync(file, Buffer.from(PNG, "base64"));
  // xclip owns the clipboard while it runs (in the foreground: -quiet), as a screenshot tool does.
  const owner = spawn("xclip", ["-quiet", "-selection", "clipboard", "-t", "image/png", "-i", file], { stdio: "ignore" });
  t.after(() => owner.kill("SIGTERM"));
  const script = [openai.text("Four coloured dots.")];
  await withApp(t, { script }, async (app) => {
    await app.click(tid("chat-input"));
    await pressCtrl(app.session, "v");
    await app.waitFor(tid("image-chip"), { what: "the pasted image's chip" });
    await app.screenshot("pasted");
    await app.send("What is in this screenshot?");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Four coloured dots."), { what: "the reply" });
    await app.llm.waitForRequests(1);
    const user = app.llm.requests[0].body.messages.filter((m) => m.role === "user").at(-1);
    const image = user.content.find((part) => part.type === "image_url");
    assert.ok(image, JSON.stringify(user.content).slice(0, 500));
    const png = Buffer.from(image.image_url.url.replace(/^data:image\/png;base64,/, ""), "base64");
    assert.equal(png.subarray(1, 4).toString(), "PNG");
    // The IHDR says 2×2: the clipboard's image, not some other.
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [2, 2]);
  });
});

test("a long title ends in an ellipsis beside its age; the tree dims .venv and __pycache__; Settings' Save does not move", { timeout: 120_000 }, async (t) => {
  const long = "Refactor the temperature conversion module and its command line so that every unit has tests";
  const setup = (dirs) => {
    for (const folder of [".venv/bin", "__pycache__", "src"]) fs.mkdirSync(path.join(dirs.project, folder), { recursive: true });
    fs.writeFileSync(path.join(dirs.project, "__pycache__", "tempconv.cpython-311.pyc"), "");
  };
  await withApp(t, { script: [openai.text("Sure.")], setup }, async (app) => {
    await app.send(long);
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Sure."), { what: "the reply" });
    await app.waitFor(tid("conversation-title"), { check: (e) => e.text.startsWith("Refactor"), what: "the conversation's title" });
    const side = await app.session.execute(BOX, ["aside"]);
    const title = await app.session.execute(BOX, [tid("conversation-title")]);
    const age = await app.session.execute(BOX, [tid("conversation-age")]);
    assert.ok(title.cut, "the title is cut, with an ellipsis");
    assert.ok(title.right <= side.right + 0.5, `the title stays in the sidebar: ${JSON.stringify({ title, side })}`);
    assert.ok(age.width > 10 && age.right <= side.right + 0.5 && age.left >= title.right - 0.5, `the age is in sight beside it: ${JSON.stringify({ age, title, side })}`);

    // The tree: the tools' folders dimmed and collapsed.
    for (const folder of [".venv", "__pycache__"]) {
      const [dir] = await app.query(`li[data-ignored] > ${tid("tree-dir", `[data-path="${folder}"]`)}`);
      assert.ok(dir, `${folder} is marked ignored`);
      assert.equal(dir.attrs["aria-expanded"], "false");
    }
    const [src] = await app.query(tid("tree-dir", '[data-path="src"]'));
    assert.ok(src && (await app.query(`li[data-ignored] > ${tid("tree-dir", '[data-path="src"]')}`)).length === 0, "src is not ignored");
    await app.screenshot("sidebar");

    // Settings: Save where it was once a status arrives, and in the window.
    await app.click(tid("open-settings"));
    await app.waitFor(tid("settings-save"), { check: (e) => e.attrs.disabled === undefined, what: "Save enabled" });
    const before = await app.session.execute(BOX, [tid("settings-save")]);
    const height = await app.session.execute("return window.innerHeight;");
    assert.ok(before.bottom <= height, `Save is in the window: ${JSON.stringify(before)}`);
    await app.click(tid("settings-save"));
    await app.waitFor(tid("settings-status"), { what: "the status line" });
    await waitUntil(async () => (await app.session.execute(BOX, [tid("settings-status")]))?.width > 0, { what: "the status drawn" });
    const after = await app.session.execute(BOX, [tid("settings-save")]);
    assert.deepEqual({ top: after.top, left: after.left }, { top: before.top, left: before.left }, "Save did not move");
  });
});
