// A conversation longer than its first part (the window opens the last 60
// entries): opened again it shows its end at once; scrolled up a little
// before the rest is in, the message at the top of the view stays where it
// is, to the pixel, as the rest comes in above it; then its size shows, its
// first message is there at the top, and the next request carries every
// message of it. Opened once more and left at its end, it stays at its end
// as the rest comes in.

import assert from "node:assert/strict";
import { test } from "node:test";
import { tid, waitUntil, withApp } from "../lib/app.js";
import { dialogue } from "../lib/requests.js";
import { openai } from "../lib/wire.js";

const ENTRIES = 200;

/** Appends `count` alternating user and assistant messages through the app's own command. */
const SEED = `
  const [count, done] = [arguments[0], arguments[arguments.length - 1]];
  const invoke = window.__TAURI_INTERNALS__.invoke;
  const seed = async (count, prefix) => {
    let id = null;
    for (let seq = 0; seq < count; seq++) {
      const role = seq % 2 === 0 ? "user" : "assistant";
      const text = prefix + seq;
      const item = role === "user" ? { kind: "user", id: prefix + "u" + seq, text } : { kind: "assistant", id: prefix + "a" + seq, text, streaming: false };
      id = (await invoke("append_entry", { ...(id ? { conversation: id } : {}), entry: { message: { role, content: [{ type: "text", text }] }, items: [item] } })).conversation;
    }
    return id;
  };
  (async () => {
    const id = await seed(count, "message ");
    // A short one after it: the newest, so the one open at the start.
    await seed(2, "short ");
    done({ id });
  })().catch((e) => done({ error: String(e && e.message || e) }));`;

test("a long conversation opens at its end, fills in behind, and goes on with all of it", { timeout: 180_000 }, async (t) => {
  await withApp(t, { script: [openai.text("Still here.")] }, async (app) => {
    const seeded = await app.session.executeAsync(SEED, [ENTRIES], 120_000);
    if (seeded.error) throw new Error(seeded.error);
    await app.restart();
    await app.waitForAny(tid("message-user"), (e) => e.text.includes("short 0"), { what: "the short one open" });
    await app.click(`${tid("conversation-item")}[data-id="${seeded.id}"] ${tid("conversation-open")}`);
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes(`message ${ENTRIES - 1}`), { what: "its last message" });
    // Up a little, at once (the rest comes a second after the open): the
    // message at the top of the view, and where it is on the screen.
    const TOP = `
      const log = document.querySelector(".chat .log");
      const top = log.getBoundingClientRect().top;
      const rows = [...log.querySelectorAll('[data-testid="message-user"], [data-testid="message-assistant"]')];
      const row = rows.find((e) => e.getBoundingClientRect().top >= top);
      return row ? { text: row.textContent.trim(), at: row.getBoundingClientRect().top, rows: rows.length } : null;`;
    const before = await app.session.executeAsync(
      `const done = arguments[arguments.length - 1];
       const log = document.querySelector(".chat .log");
       log.dispatchEvent(new WheelEvent("wheel", { deltaY: -300 }));
       log.scrollTop -= 300;
       requestAnimationFrame(() => requestAnimationFrame(() => done((() => { ${TOP} })())));`,
      [],
      10_000,
    );
    assert.ok(before, "a message at the top of the view");
    // The meter waits for the whole transcript, then shows its size.
    await app.waitFor(tid("context-meter"), { check: (e) => Number(e.attrs["data-used"]) > 0, what: "its size once the rest is in", timeout: 30_000 });
    // The rest came in above: the message at the top of the view is where
    // it was on the screen (not the same pixel of the list, which would show
    // the 140 messages put in above it; nor a little off as the rows above
    // it are measured, or as the meter comes in above the log), once the
    // rows drawn have settled.
    const settled = await app.session.executeAsync(
      `const done = arguments[arguments.length - 1];
       requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => done(true), 300)));`,
      [],
      10_000,
    );
    assert.ok(settled);
    const after = await app.session.execute(
      `const text = arguments[0];
       const log = document.querySelector(".chat .log");
       const rows = [...log.querySelectorAll('[data-testid="message-user"], [data-testid="message-assistant"]')];
       const row = rows.find((e) => e.textContent.trim() === text);
       return row ? { text, at: row.getBoundingClientRect().top, rows: rows.length } : null;`,
      [before.text],
    );
    assert.ok(after && Math.abs(after.at - before.at) <= 2, `the message at the top stayed in place: ${JSON.stringify(before)} before the rest came in, ${JSON.stringify(after)} after`);

    // Scrolled to the top, its first message is there.
    const top = await app.session.executeAsync(
      `const done = arguments[arguments.length - 1];
       const log = document.querySelector(".chat .log");
       const first = () => [...document.querySelectorAll('[data-testid="message-user"]')].some((e) => e.textContent.trim() === "message 0");
       let tries = 0;
       const step = () => { log.dispatchEvent(new WheelEvent("wheel", { deltaY: -100 })); log.scrollTop = 0; if (first() || ++tries > 60) done(first()); else requestAnimationFrame(step); };
       step();`,
      [],
      30_000,
    );
    assert.equal(top, true, "the first message is shown at the top");

    await app.send("and now?");
    const request = await waitUntil(() => app.llm.requests.find((r) => dialogue(r).at(-1)?.[1] === "and now?"), { what: "the request of the next message" });
    const sent = dialogue(request);
    assert.equal(sent.length, ENTRIES + 1, "every message of it, and the new one");
    assert.deepEqual(sent[0], ["user", "message 0"]);
    assert.deepEqual(sent.at(-2), ["assistant", `message ${ENTRIES - 1}`]);
    assert.deepEqual(sent.at(-1), ["user", "and now?"]);
    // The message and its reply are appended, and nothing else.
    await app.waitFor(`${tid("conversation-item")}[data-id="${seeded.id}"][data-entries="${ENTRIES + 2}"]`, { what: "the message and the reply stored" });

    // Opened again and left at its end, it stays at its end as the rest comes in.
    await app.click(`${tid("conversation-item")}:not([data-id="${seeded.id}"]) ${tid("conversation-open")}`);
    await app.waitForAny(tid("message-user"), (e) => e.text.includes("short 0"), { what: "the short one open again" });
    await app.click(`${tid("conversation-item")}[data-id="${seeded.id}"] ${tid("conversation-open")}`);
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Still here."), { what: "its last reply" });
    await app.waitFor(tid("context-meter"), { check: (e) => Number(e.attrs["data-used"]) > 0, what: "its size once the rest is in again", timeout: 30_000 });
    const end = await app.session.executeAsync(
      `const done = arguments[arguments.length - 1];
       const log = document.querySelector(".chat .log");
       requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => done({ below: log.scrollHeight - log.clientHeight - log.scrollTop, rows: log.querySelectorAll(".row").length }), 300)));`,
      [],
      10_000,
    );
    assert.ok(end.below <= 2, `the view is at the end: ${JSON.stringify(end)}`);
  });
});
