// Desktop notifications, as the user's notification service gets them:
// the test gives the app a private session bus with dunst on the Xvfb
// display. With the focus in the app's window a finished reply shows
// none; with another window focused (xdotool, for real: the page's
// `document.hasFocus()` turns false) it shows "Corral: the agent
// finished", and an approval that waits shows "Corral: an approval
// waits". With the `notifications` setting turned off in Settings, none
// arrives; turned on again, one does. A service that does not answer
// (dunst stopped with SIGSTOP) holds up nothing in the window.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { ARTIFACTS, tid, waitUntil, withApp } from "../lib/app.js";
import { openai } from "../lib/wire.js";

const FINISHED = "Corral: the agent finished";
const APPROVAL = "Corral: an approval waits";
// Time a notification would need to arrive: the app asks for it as the
// run ends, off its main thread, and dunst prints it as it comes.
const QUIET = 3_000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Whether the page has the focus, as the app's own check sees it. */
const pageFocused = (app) => app.session.execute("return document.hasFocus();");

/** Sends `text` and waits for the reply `answer` to finish (the run is over). */
async function exchange(app, text, answer) {
  await app.send(text);
  await app.waitForAny(tid("message-assistant"), (e) => e.text.includes(answer) && e.attrs["aria-busy"] !== "true", {
    what: `the reply "${answer}"`,
  });
  await app.waitGone(tid("stop"));
}

/** Turns the `notifications` setting on or off in Settings, saves, and checks the stored settings. */
async function setNotifications(app, on) {
  const checkbox = `document.querySelector('[data-testid="settings-notifications"]')`;
  await app.click(tid("open-settings"));
  // The form shows the defaults until the saved settings arrive.
  await waitUntil(() => app.session.execute(`return document.querySelector('[data-testid="settings-model"]')?.value === "scripted";`), {
    what: "Settings to show the saved settings",
  });
  assert.equal(await app.session.execute(`return ${checkbox}.checked;`), !on, "the checkbox shows the setting");
  await app.click(tid("settings-notifications"));
  assert.equal(await app.session.execute(`return ${checkbox}.checked;`), on);
  await app.click(tid("settings-save"));
  await app.waitFor(tid("settings-status"), { check: (e) => e.text.includes("Saved"), what: "the settings saved" });
  await app.click(tid("settings-close"));
  await app.waitGone(tid("settings"));
  const stored = JSON.parse(fs.readFileSync(path.join(app.dirs.appConfig, "settings.json"), "utf8"));
  assert.equal(stored.notifications, on, "the stored setting");
}

test("notifications: none with the focus in the window, one with it in another", { timeout: 180_000 }, async (t) => {
  const script = [openai.text("First answer."), openai.text("Second answer.")];
  await withApp(t, { script, desktop: true }, async (app) => {
    const { desktop } = app;
    // At start no window manager set the focus: it follows the pointer,
    // which is over the app's window.
    assert.equal(await pageFocused(app), true, "the page has the focus at start");
    await exchange(app, "Say something.", "First answer.");
    await sleep(QUIET);
    assert.deepEqual(desktop.received(), [], "no notification while the window has the focus");

    // Another program takes the focus, as a click on it would.
    const elsewhere = await desktop.focusElsewhere();
    assert.equal(await desktop.focusedWindow(), elsewhere);
    await waitUntil(async () => (await pageFocused(app)) === false, { timeout: 10_000, what: "document.hasFocus() to be false" });

    await exchange(app, "Say more.", "Second answer.");
    const notice = await desktop.waitForNotification(FINISHED);
    assert.deepEqual(notice, { appname: "corral", summary: FINISHED, body: "" });
    await app.painted();
    await desktop.screenshot(path.join(ARTIFACTS, `${app.name}--screen.png`));
    assert.equal(await pageFocused(app), false, "the page still does not have the focus");
    await sleep(QUIET);
    assert.deepEqual(
      desktop.received().map((n) => n.summary),
      [FINISHED],
      "exactly one notification, for the run that ended while the window was not focused",
    );
  });
});

test("notifications: an approval and a run's end each show one, none with the setting off", { timeout: 180_000 }, async (t) => {
  const write = openai.toolCalls([{ name: "write_file", input: { path: "notes.txt", content: "notes\n" } }]);
  const script = [write, openai.text("Wrote notes.txt."), openai.text("Quiet answer."), openai.text("Loud answer.")];
  await withApp(t, { script, desktop: true }, async (app) => {
    const { desktop } = app;
    await desktop.focusElsewhere();
    await waitUntil(async () => (await pageFocused(app)) === false, { timeout: 10_000, what: "document.hasFocus() to be false" });

    // A call waits for approval: one notification; approved (the click
    // comes through WebDriver, the focus stays on the other window), the
    // run ends: another.
    await app.send("Write notes.txt.");
    await app.waitFor(tid("tool-card", '[data-tool="write_file"]'), {
      check: (e) => e.attrs["data-status"] === "waiting",
      what: "the write_file call waiting for approval",
    });
    await desktop.waitForNotification(APPROVAL);
    await app.waitFor(`${tid("approval")} [data-armed="true"]`, { what: "the approval's buttons" });
    await app.painted();
    await desktop.screenshot(path.join(ARTIFACTS, `${app.name}--approval-screen.png`));
    await app.answer("approve-once");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Wrote notes.txt."), { what: "the reply after the write" });
    await app.waitGone(tid("stop"));
    await desktop.waitForNotification(FINISHED);
    assert.deepEqual(desktop.received().map((n) => n.summary), [APPROVAL, FINISHED]);

    // Settings: the checkbox off, saved.
    await setNotifications(app, false);

    // Off, and the window still not focused: the run's end shows nothing.
    assert.equal(await pageFocused(app), false, "the focus is still on the other window");
    await exchange(app, "Say something quietly.", "Quiet answer.");
    await sleep(QUIET);
    assert.deepEqual(desktop.received().map((n) => n.summary), [APPROVAL, FINISHED], "nothing new with the setting off");

    // On again, nothing else changed: the next run's end shows one.
    await setNotifications(app, true);
    assert.equal(await pageFocused(app), false, "the focus is still on the other window");
    await exchange(app, "Say something loudly.", "Loud answer.");
    await waitUntil(() => desktop.received().length === 3, { timeout: 15_000, what: "a third notification" });
    assert.deepEqual(desktop.received().map((n) => n.summary), [APPROVAL, FINISHED, FINISHED]);
  });
});

test("notifications: a service that does not answer holds up nothing", { timeout: 180_000 }, async (t) => {
  const script = [openai.text("First answer."), openai.text("Second answer.")];
  await withApp(t, { script, desktop: true }, async (app) => {
    const { desktop } = app;
    await desktop.focusElsewhere();
    await waitUntil(async () => (await pageFocused(app)) === false, { timeout: 10_000, what: "document.hasFocus() to be false" });
    desktop.pauseNotifications(true);

    // The first run's notification waits for the service; the window does
    // not: the next message goes out and its reply shows meanwhile.
    await exchange(app, "Say something.", "First answer.");
    const started = Date.now();
    await exchange(app, "Say more.", "Second answer.");
    assert.ok(Date.now() - started < 10_000, `the second run took ${Date.now() - started} ms`);
    assert.deepEqual(desktop.received(), [], "the stopped service has shown nothing");

    // Once the service goes on, it gets both.
    desktop.pauseNotifications(false);
    await waitUntil(() => desktop.received().length === 2, { timeout: 30_000, what: "both notifications once the service answers" });
    assert.deepEqual(desktop.received().map((n) => n.summary), [FINISHED, FINISHED]);
  });
});
