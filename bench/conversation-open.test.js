// How long the window takes to show a long conversation: 5,000 messages
// with 20 MB of tool output, opened from the conversation list, until its
// last message is on screen and painted. Run by bench/conversation-open.sh
// (the release app, under Xvfb, through the e2e harness).

import { test } from "node:test";
import { tid, withApp } from "../e2e/lib/app.js";

const ENTRIES = 5_000;
const OUTPUT_BYTES = 40_000; // one entry in ten: 500 × 40 KB = 20 MB
const RUNS = Number(process.env.RUNS ?? 7);

/** Appends the conversations through the app's own command, from the page. */
const SEED = `
  const [entries, outputBytes, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
  const invoke = window.__TAURI_INTERNALS__.invoke;
  const output = (i) => (String(i).padStart(6, "0") + " test result line: ok, nothing to see here, moving on\\n").repeat(Math.ceil(outputBytes / 50)).slice(0, outputBytes);
  const text = (role, seq, words) => ({ role, content: [{ type: "text", text: words }] });
  function entry(seq) {
    const id = "call_" + seq;
    switch (seq % 10) {
      case 7: return { message: { role: "assistant", content: [{ type: "tool_use", id, name: "exec_shell", input: { command: "cargo", args: ["test"] } }] },
                       items: [{ kind: "tool", id: "card" + seq, callId: id, name: "exec_shell", input: { command: "cargo", args: ["test"] }, risk: "shell", status: "queued" }] };
      case 8: { const prev = "call_" + (seq - 1);
                const result = { command: "cargo", args: ["test"], stdout: output(seq), stderr: "", exit_code: 0, timed_out: false, duration_ms: 900,
                                 stdout_truncated_bytes: 0, stderr_truncated_bytes: 0, profile: "build", sandbox: "namespaces", sandboxed: true };
                return { message: { role: "user", content: [{ type: "tool_result", tool_use_id: prev, content: JSON.stringify(result) }] },
                         items: [{ kind: "tool", id: "card" + (seq - 1), callId: prev, name: "exec_shell", input: { command: "cargo", args: ["test"] }, risk: "shell", status: "done", resultInMessage: true }] }; }
      default: {
        const role = seq % 2 === 0 ? "user" : "assistant";
        const words = role === "user" ? "Please look at module " + seq + " and fix the failing test in it." : ("Reply " + seq + ": module " + seq + " parses the configuration; the test failed because its fixture was stale, so I updated it. ").repeat(3);
        return { message: text(role, seq, words), items: [role === "user" ? { kind: "user", id: "u" + seq, text: words } : { kind: "assistant", id: "a" + seq, text: words, streaming: false }] };
      }
    }
  }
  (async () => {
    let big = null;
    for (let seq = 0; seq < entries; seq++) big = (await invoke("append_entry", { ...(big ? { conversation: big } : {}), entry: entry(seq) })).conversation;
    let small = null;
    for (let seq = 0; seq < 2; seq++) small = (await invoke("append_entry", { ...(small ? { conversation: small } : {}), entry: entry(seq) })).conversation;
    done({ big, small });
  })().catch((e) => done({ error: String(e && e.message || e) }));`;

/** Clicks a conversation in the list; resolves with the ms until `text` is on screen and painted. */
const OPEN = `
  const [id, text, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
  const button = document.querySelector('[data-testid="conversation-item"][data-id="' + id + '"] [data-testid="conversation-open"]');
  const t0 = performance.now();
  button.click();
  const shown = () => [...document.querySelectorAll('[data-testid="message-assistant"], [data-testid="message-user"]')].some((e) => e.textContent.includes(text));
  const poll = () => (shown() ? requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now() - t0))) : requestAnimationFrame(poll));
  poll();`;

/**
 * The same open, taken apart (run after the timed ones, so the probe costs
 * them nothing): when the last message was in the page and when it was
 * painted, and each frame over 50 ms from the click until 3 s later (the
 * whole fetched behind included), as start+length.
 */
const PROBE = `
  const [id, text, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
  const button = document.querySelector('[data-testid="conversation-item"][data-id="' + id + '"] [data-testid="conversation-open"]');
  const marks = {};
  const frames = [];
  const t0 = performance.now();
  let last = t0;
  const tick = (now) => { frames.push([last - t0, now - last]); last = now; if (now - t0 < 3000) requestAnimationFrame(tick); else finish(); };
  requestAnimationFrame(tick);
  button.click();
  const shown = () => [...document.querySelectorAll('[data-testid="message-assistant"], [data-testid="message-user"]')].some((e) => e.textContent.includes(text));
  const poll = () => (shown() ? ((marks.rows = performance.now() - t0), requestAnimationFrame(() => requestAnimationFrame(() => (marks.painted = performance.now() - t0)))) : requestAnimationFrame(poll));
  poll();
  function finish() {
    const long = frames.filter(([, gap]) => gap > 50).map(([at, gap]) => Math.round(at) + "+" + Math.round(gap));
    done({ marks: Object.fromEntries(Object.entries(marks).map(([k, v]) => [k, Math.round(v)])), long });
  }`;

test("a conversation of 5,000 messages and 20 MB opens to its first screen", { timeout: 600_000 }, async (t) => {
  await withApp(t, { script: [] }, async (app) => {
    const seeded = await app.session.executeAsync(SEED, [ENTRIES, OUTPUT_BYTES], 500_000);
    if (seeded.error) throw new Error(seeded.error);
    await app.restart();
    await app.waitFor(`${tid("conversation-item")}[data-id="${seeded.big}"]`, { what: "the long conversation listed" });
    const last = `Reply ${ENTRIES - 1}:`;
    const times = [];
    for (let run = 0; run < RUNS; run++) {
      times.push(await app.session.executeAsync(OPEN, [seeded.big, last], 60_000));
      // As a person would: a moment on it (its whole is fetched behind), then another one.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      await app.session.executeAsync(OPEN, [seeded.small, "Please look at module 0"], 60_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    // The parts, each through the IPC alone: the first part the window
    // opens (the last 60 entries, tool results over 4 KiB left out), the
    // brief whole (every entry, results left out), one of the parts of 500
    // it fetches behind, and the whole in one answer.
    const ipcTimes = await app.session.executeAsync(
      `const [id, done] = [arguments[0], arguments[arguments.length - 1]];
       const invoke = window.__TAURI_INTERNALS__.invoke;
       (async () => {
         const time = async (args) => { const t0 = performance.now(); const data = await invoke("open_conversation", args); return [performance.now() - t0, JSON.stringify(data).length]; };
         done({ first: await time({ id, elide_over: 4096, last: 60 }), brief: await time({ id, elide_over: 4096 }), part: await time({ id, last: 500 }), whole: await time({ id }) });
       })();`,
      [seeded.big],
      60_000,
    );
    const ipcLine = ["first", "brief", "part", "whole"].map((name) => `${name} ${ipcTimes[name][0].toFixed(0)} ms for ${(ipcTimes[name][1] / 1e6).toFixed(2)} MB`);
    console.log(`conversation-open: IPC alone: ${ipcLine.join(", ")}`);
    const rows = await app.session.execute(`return document.querySelectorAll(".chat .row").length;`);
    await app.session.executeAsync(OPEN, [seeded.big, last], 60_000);
    const rowsBig = await app.session.execute(`return document.querySelectorAll(".chat .row").length;`);
    for (let run = 0; run < Number(process.env.PROBES ?? 3); run++) {
      await app.session.executeAsync(OPEN, [seeded.small, "Please look at module 0"], 60_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const probe = await app.session.executeAsync(PROBE, [seeded.big, last], 60_000);
      console.log(`conversation-open: probe: ${JSON.stringify(probe.marks)}; frames over 50 ms (at+length): ${probe.long.join(" ") || "none"}`);
    }
    const sorted = [...times].sort((a, b) => a - b);
    console.log(`conversation-open: ${ENTRIES} messages, ${(ENTRIES / 10) * OUTPUT_BYTES / 1e6} MB of tool output`);
    console.log(`conversation-open: runs (ms): ${times.map((x) => x.toFixed(0)).join(", ")}`);
    console.log(`conversation-open: first open after the start ${times[0].toFixed(0)} ms`);
    console.log(`conversation-open: median ${sorted[Math.floor(sorted.length / 2)].toFixed(0)} ms, max ${sorted.at(-1).toFixed(0)} ms; rows in the page: ${rowsBig} (small one: ${rows})`);
  });
});
