// The harness: one real Corral app per test, in its own temp HOME and XDG
// folders (so the user's settings and conversations are never read or
// touched), started by its own tauri-driver, pointed at a scripted LLM
// server, with a copy of a fixture project opened from the command line.
//
//   test("...", async (t) => {
//     await withApp(t, { script: [...] }, async (app) => { ... });
//   });
//
// `withApp` always saves a screenshot, deletes the WebDriver session, stops
// tauri-driver with SIGTERM (SIGKILL would orphan WebKitWebDriver and the
// app) and closes the server, whether the body passed or threw.

import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { startDesktop } from "./desktop.js";
import { startLlmServer } from "./llm-server.js";
import { Session, isReady } from "./webdriver.js";

const E2E = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const REPO = path.resolve(E2E, "..");
export const ARTIFACTS = process.env.CORRAL_E2E_ARTIFACTS || path.join(E2E, "artifacts");
const IDENTIFIER = "dev.corral.desktop"; // tauri.conf.json

/** The app binary the suite drives (built by scripts/e2e.sh). */
export const APP_BINARY =
  process.env.CORRAL_E2E_APP ?? path.join(path.resolve(REPO, process.env.CARGO_TARGET_DIR || "target"), "debug", "corral");

/** `corral-cli` of the same build (scripts/e2e.sh builds it too). */
export const CLI_BINARY = path.join(path.dirname(APP_BINARY), "corral-cli");

function which(name) {
  const dirs = [...(process.env.PATH ?? "").split(path.delimiter), path.join(os.homedir(), ".cargo", "bin")];
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

let checked = null;
/** Fails at once, with what to do, when something the suite needs is missing. */
export function preflight() {
  if (checked) return checked;
  const problems = [];
  if (!process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    problems.push("no display: DISPLAY is not set. Run the suite with `scripts/e2e.sh`, which starts Xvfb.");
  }
  const tauriDriver = which("tauri-driver");
  if (!tauriDriver) problems.push("`tauri-driver` is not installed: run `scripts/setup.sh --test`.");
  if (!which("WebKitWebDriver")) problems.push("`WebKitWebDriver` is not installed (Debian package `webkit2gtk-driver`): run `scripts/setup.sh --test`.");
  // Every screenshot is taken from X (see App.screenshotTo).
  if (!which("xdotool")) problems.push("`xdotool` is not installed (Debian package `xdotool`): run `scripts/setup.sh --test`.");
  if (!which("import")) problems.push("ImageMagick's `import` is not installed (Debian package `imagemagick`): run `scripts/setup.sh --test`.");
  if (!fs.existsSync(APP_BINARY)) problems.push(`the app is not built: \`${APP_BINARY}\` is missing; run \`cargo build -p corral\` (scripts/e2e.sh does).`);
  if (problems.length) throw new Error(`e2e: cannot run:\n  - ${problems.join("\n  - ")}`);
  checked = { tauriDriver };
  return checked;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `probe` (async) until it returns a truthy value, which is returned.
 * On timeout, fails with `what` and the last value seen.
 */
export async function waitUntil(probe, { timeout = 15_000, interval = 100, what = "condition" } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    last = await probe();
    if (last) return last;
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeout} ms waiting for ${what}; last seen: ${JSON.stringify(last)}`);
    }
    await sleep(interval);
  }
}

/** Where a test's files live: temp HOME, XDG folders, the project and a folder beside it. */
function makeHome(fixture) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "corral-e2e-"));
  const dirs = {
    root,
    home: path.join(root, "home"),
    config: path.join(root, "config"),
    data: path.join(root, "data"),
    cache: path.join(root, "cache"),
    runtime: path.join(root, "runtime"),
    project: path.join(root, "work", fixture),
    outside: path.join(root, "work", "outside"),
  };
  for (const dir of [dirs.home, dirs.config, dirs.data, dirs.cache, dirs.outside]) fs.mkdirSync(dir, { recursive: true });
  fs.mkdirSync(dirs.runtime, { mode: 0o700 });
  fs.cpSync(path.join(E2E, "fixtures", fixture), dirs.project, { recursive: true });
  fs.writeFileSync(path.join(dirs.outside, "secret.txt"), "not for the agent\n");
  dirs.appConfig = path.join(dirs.config, IDENTIFIER);
  dirs.appData = path.join(dirs.data, IDENTIFIER);
  return dirs;
}

function writeSettings(dirs, { provider, baseUrl, mode, extra = {} }) {
  fs.mkdirSync(dirs.appConfig, { recursive: true });
  const settings = { provider, base_url: baseUrl, model: "scripted", max_tokens: 1024, mode, ...extra };
  fs.writeFileSync(path.join(dirs.appConfig, "settings.json"), JSON.stringify(settings, null, 2));
  if (provider === "anthropic") {
    // A key is only sent to the origin it was saved for: `provider origin`
    // (a bare `anthropic` would be Anthropic's own, not this server's).
    const keys = { [`anthropic ${new URL(baseUrl).origin}`]: "test-key" };
    fs.writeFileSync(path.join(dirs.appConfig, "api-keys.json"), JSON.stringify(keys), { mode: 0o600 });
  }
}

export function driverEnv(dirs) {
  const env = { ...process.env };
  // Never let a real key reach the app under test.
  delete env.ANTHROPIC_API_KEY;
  delete env.OPENAI_API_KEY;
  // Nor the user's session bus (their keychain, their notifications): a
  // test that wants one asks for a desktop of its own (lib/desktop.js).
  // An address where nothing listens, not none: with none, GLib may start
  // a bus of its own (dbus-launch) that outlives the test.
  env.DBUS_SESSION_BUS_ADDRESS = `unix:path=${path.join(dirs.runtime, "no-session-bus")}`;
  return {
    ...env,
    HOME: dirs.home,
    XDG_CONFIG_HOME: dirs.config,
    XDG_DATA_HOME: dirs.data,
    XDG_CACHE_HOME: dirs.cache,
    XDG_STATE_HOME: path.join(dirs.root, "state"),
    XDG_RUNTIME_DIR: dirs.runtime,
    // No GDK_GL / WEBKIT_DISABLE_* here: the app turns OpenGL off itself
    // where there is no GPU, as under Xvfb, and the suite runs it so
    // (screenshots come from X: WebDriver's can hang then).
  };
}

// Drivers still running if this process is interrupted: stop them with
// SIGTERM on the way out, so no WebKitWebDriver or app outlives the suite.
const liveDrivers = new Set();
process.on("exit", () => {
  for (const child of liveDrivers) child.kill("SIGTERM");
});
for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]]) {
  process.once(signal, () => process.exit(code));
}

/** tauri-driver (and through it WebKitWebDriver, and through that the app), with `env`. */
async function startDriver(env, logFile) {
  const { tauriDriver } = preflight();
  const port = await freePort();
  // A port just closed can be handed out again at once: the two must differ,
  // or tauri-driver and WebKitWebDriver fight over one and neither answers.
  let nativePort = await freePort();
  while (nativePort === port) nativePort = await freePort();
  const log = fs.openSync(logFile, "a");
  const child = spawn(tauriDriver, ["--port", String(port), "--native-port", String(nativePort)], {
    env,
    stdio: ["ignore", log, log],
  });
  fs.closeSync(log);
  liveDrivers.add(child);
  let exited = null;
  const exit = new Promise((resolve) =>
    child.once("exit", (code, signal) => {
      liveDrivers.delete(child);
      resolve((exited = { code, signal }));
    }),
  );
  const base = `http://127.0.0.1:${port}`;
  await waitUntil(async () => exited || (await isReady(base)), { timeout: 20_000, what: `tauri-driver on ${base}` });
  if (exited) {
    throw new Error(`tauri-driver exited at start (${JSON.stringify(exited)}); see ${logFile}`);
  }
  return {
    base,
    async stop() {
      if (exited) return;
      child.kill("SIGTERM"); // SIGTERM: it then kills WebKitWebDriver; SIGKILL would orphan it
      let timer;
      const done = await Promise.race([exit, new Promise((r) => (timer = setTimeout(r, 10_000, null)))]);
      clearTimeout(timer);
      if (!done) {
        console.error(`e2e: tauri-driver ignored SIGTERM for 10 s; killing it (see ${logFile})`);
        child.kill("SIGKILL");
        await exit;
      }
    },
  };
}

/** What `command args` prints, or null if it can't run or fails (10 s at most). */
function output(command, args) {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: 10_000, env: { ...process.env } }, (error, stdout) => resolve(error ? null : stdout.trim()));
  });
}

/** Processes whose working folder is `dir` (the commands run in the project root). */
export function processesIn(dir) {
  const found = [];
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (fs.readlinkSync(`/proc/${pid}/cwd`) === dir) {
        found.push(`${pid}: ${fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ")}`);
      }
    } catch {
      // gone, or not ours to look at
    }
  }
  return found;
}

/** Processes started with `HOME=home` (the driver, the app and its web processes), as "pid cmdline". */
export function processesWithHome(home) {
  const marker = Buffer.from(`\0HOME=${home}\0`);
  const found = [];
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const env = Buffer.concat([Buffer.from([0]), fs.readFileSync(`/proc/${pid}/environ`)]);
      if (env.includes(marker) && !fs.readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ")) {
        found.push(`${pid} ${fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim()}`);
      }
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/**
 * Waits for every process of the test (found by its unique HOME) to end;
 * after `timeout`, ends the stragglers with SIGTERM and says so.
 */
async function waitForProcessesGone(home, timeout = 10_000) {
  const deadline = Date.now() + timeout;
  let left = processesWithHome(home);
  while (left.length && Date.now() < deadline) {
    await sleep(100);
    left = processesWithHome(home);
  }
  if (left.length) {
    console.error(`e2e: still running ${timeout} ms after the session closed; sending SIGTERM:\n  ${left.join("\n  ")}`);
    for (const line of left) {
      try {
        process.kill(Number(line.split(" ")[0]), "SIGTERM");
      } catch {
        // already gone
      }
    }
  }
}

/** Waits up to `timeout` for the app (not the driver) started with `HOME=home` to end. */
async function waitForAppGone(home, timeout) {
  const deadline = Date.now() + timeout;
  const app = () => processesWithHome(home).filter((p) => !/WebKitWebDriver|tauri-driver/.test(p));
  let left = app();
  while (left.length && Date.now() < deadline) {
    await sleep(100);
    left = app();
  }
  if (left.length) console.error(`e2e: the app still runs ${timeout} ms after its session was closed:\n  ${left.join("\n  ")}`);
}

function artifactName(t) {
  const file = path.basename(t.filePath ?? process.argv[1] ?? "test", ".test.js");
  return `${file}--${t.name}`.replace(/[^A-Za-z0-9._-]+/g, "-").slice(0, 120);
}

/** One running app and what it talks to. */
export class App {
  constructor({ dirs, llm, driver, name, openProject = true, args = null, desktop = null, env = {} }) {
    this.dirs = dirs;
    /** The environment the app was started with (to start another `corral` beside it). */
    this.env = env;
    this.desktop = desktop;
    this.openProject = openProject;
    /** The app's arguments in place of the project's path (a remote folder's name). */
    this.args = args;
    this.llm = llm;
    this.driver = driver;
    this.name = name;
    this.session = null;
  }

  /** Starts the app on the project (`corral PROJECT`) and waits for the UI. */
  async open() {
    this.session = await Session.create(this.driver.base, {
      "tauri:options": { application: APP_BINARY, args: this.args ?? (this.openProject ? [this.dirs.project] : []) },
    });
    // Ready: the project view or the welcome screen, unchanged for a moment
    // (the UI first asks the app which project is open).
    let last = null;
    let since = 0;
    await waitUntil(
      async () => {
        const ids = await this.session.execute(
          `return [...document.querySelectorAll("[data-testid]")].map((e) => e.dataset.testid).join(",");`,
        );
        if (ids !== last) [last, since] = [ids, Date.now()];
        return /\b(project-name|welcome|install-remote)\b/.test(ids) && Date.now() - since >= 300;
      },
      { timeout: 20_000, what: "the UI to show the project or the welcome screen" },
    );
  }

  /** Closes the window as the user would; the app then exits. */
  async closeWindow() {
    this.windowClosed = true;
    await this.session.closeWindow();
  }

  /** Closes the app (ends the session) and opens it again, same folders. */
  async restart() {
    await this.screenshot("before-restart");
    await this.session.delete();
    await waitForAppGone(this.dirs.home, 10_000);
    await this.open();
  }

  /**
   * Every element matching `css`: its rendered text, attributes and
   * whether it is visible. `within` scopes the query to the nth match of
   * another selector.
   */
  query(css) {
    return this.session.execute(
      `return [...document.querySelectorAll(arguments[0])].map((e) => ({
         text: e.innerText ?? e.textContent,
         attrs: Object.fromEntries([...e.attributes].map((a) => [a.name, a.value])),
         visible: e.getClientRects().length > 0,
       }));`,
      [css],
    );
  }

  /**
   * Like `query`, over the whole conversation: its list keeps only the rows
   * on screen in the page, so this scrolls it from top to bottom as a user
   * would (a wheel event first, so the view stops following the end),
   * gathers each row's matches once, and leaves the view at the end.
   */
  queryConversation(css) {
    return this.session.executeAsync(
      `const [css, done] = [arguments[0], arguments[arguments.length - 1]];
       const log = document.querySelector(".chat .log");
       const seen = new Map();
       const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
       // The log follows its end unless the user moved it just before: on a
       // loaded machine the scroll can land after that moment and snap back,
       // so each move is made again until it holds.
       const scrollTo = async (top) => {
         for (let attempt = 0; attempt < 20; attempt++) {
           log.dispatchEvent(new WheelEvent("wheel", { bubbles: true }));
           log.scrollTop = top;
           await frame();
           const want = Math.min(top, log.scrollHeight - log.clientHeight);
           if (Math.abs(log.scrollTop - want) <= 2) return;
         }
       };
       (async () => {
         for (let top = 0; ; top += Math.max(50, log.clientHeight - 50)) {
           await scrollTo(top);
           for (const row of log.querySelectorAll(".row")) {
             const found = [...row.querySelectorAll(css)].map((e) => ({
               text: e.innerText ?? e.textContent,
               attrs: Object.fromEntries([...e.attributes].map((a) => [a.name, a.value])),
             }));
             if (!seen.has(Number(row.dataset.index))) seen.set(Number(row.dataset.index), found);
           }
           if (log.scrollTop + log.clientHeight >= log.scrollHeight - 2) break;
         }
         await scrollTo(log.scrollHeight);
         done([...seen.entries()].sort((a, b) => a[0] - b[0]).flatMap(([, found]) => found));
       })();`,
      [css],
      30_000,
    );
  }

  /** The first element matching `css` once it exists and `check(el)` holds. */
  waitFor(css, { check = () => true, timeout = 20_000, what } = {}) {
    return this.waitForAny(css, (el, index) => index === 0 && check(el), { timeout, what });
  }

  /** Some element matching `css` for which `check(el, index)` holds. */
  async waitForAny(css, check, { timeout = 20_000, what } = {}) {
    let seen = [];
    try {
      return await waitUntil(
        async () => {
          seen = await this.query(css);
          return seen.find(check) ?? null;
        },
        { timeout, what: what ?? css },
      );
    } catch (error) {
      error.message += `\n  elements matching ${css}: ${JSON.stringify(seen).slice(0, 2000)}`;
      throw error;
    }
  }

  /** Waits until nothing matches `css`. */
  async waitGone(css, { timeout = 15_000 } = {}) {
    await waitUntil(async () => (await this.query(css)).length === 0, { timeout, what: `${css} to disappear` });
  }

  /** Clicks the first match of `css`, waiting for it (the UI may be re-rendering). */
  click(css) {
    return this.retrying(css, () => this.session.click(css));
  }

  /**
   * Clicks a button in the conversation as a user does: the mouse rests on
   * it first, which holds the log still (output still arriving cannot move
   * the button from under the click), then it is clicked.
   */
  async clickInLog(css) {
    await waitUntil(
      async () => {
        await this.session.hover(css);
        return (await this.query(`.log[data-held="true"] ${css}:hover`)).length > 0;
      },
      { what: `the mouse resting on ${css}, the log held still` },
    );
    await this.click(css);
  }

  /** Types into the first match of `css`, waiting for it. */
  type(css, text) {
    return this.retrying(css, () => this.session.type(css, text));
  }

  async retrying(css, action, timeout = 10_000) {
    const deadline = Date.now() + timeout;
    for (;;) {
      try {
        return await action();
      } catch (error) {
        const transient = /nothing matches|stale element|not interactable/i.test(error.message);
        if (!transient || Date.now() > deadline) throw error;
        await sleep(100);
      }
    }
  }

  /**
   * Answers the call waiting in the approval area (`approve-once`,
   * `deny`, or a button that opens a panel), once its buttons take clicks
   * (they ignore any for half a second after they appear).
   */
  async answer(testid) {
    const area = tid("approval");
    await this.waitFor(`${area} [data-armed="true"]`, { what: "the approval's buttons to take clicks" });
    if (testid !== "deny") await this.readWhole();
    await this.click(`${area} ${tid(testid)}`);
  }

  /**
   * Answers with "Allow in this conversation…": opens its panel, lets
   * `choose` pick in it (else this very call is allowed), then confirms
   * once the panel's button takes clicks.
   */
  async allowInConversation(choose = async () => {}) {
    const chooser = `${tid("approval")} ${tid("grant-chooser")}`;
    await this.answer("approve-conversation");
    await this.waitFor(chooser, { what: "the panel of what to allow" });
    await choose();
    await this.waitFor(`${chooser} [data-armed="true"]`, { what: "the panel's button to take clicks" });
    await this.click(`${chooser} ${tid("grant-confirm")}`);
  }

  /**
   * Reads the waiting call to its end as a user would, until Approve takes
   * clicks (it waits until the whole call was on screen): every row of its
   * change shown, its box scrolled to the end. Returns how many scrolls
   * that took before Approve armed.
   */
  async readWhole() {
    let scrolls = 0;
    await waitUntil(
      async () => {
        scrolls++;
        return this.session.execute(`
          const area = document.querySelector('[data-testid="approval"]');
          area?.querySelector('[data-testid="diff-show-all"]')?.click();
          const box = area?.querySelector('[data-testid="approval-details"]');
          if (box) box.scrollTop = box.scrollHeight;
          const approve = area?.querySelector('[data-testid="approve-once"]');
          return approve !== null && approve !== undefined && !approve.disabled;`);
      },
      { what: "Approve to arm once the whole call was shown" },
    );
    return scrolls;
  }

  /** Types a message in the chat box and sends it. */
  async send(text) {
    await this.waitFor(tid("chat-input"), { what: "the chat input" });
    await this.type(tid("chat-input"), text);
    await this.click(tid("send"));
  }

  /**
   * Runs axe-core in the page (its source injected through the session, once
   * per page) over the whole document, WCAG 2.x A and AA rules, and returns
   * the violations of `impacts` as `{ id, impact, help, nodes: [{ target,
   * summary }] }`.
   */
  async axe({ impacts = AXE_IMPACTS } = {}) {
    const loaded = await this.session.execute(`return typeof window.axe === "object";`);
    if (!loaded) await this.session.execute(`${axeScript()}\nreturn typeof window.axe;`);
    const violations = await this.session.executeAsync(
      `const done = arguments[arguments.length - 1];
       window.axe
         .run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] }, resultTypes: ["violations"] })
         .then((r) => done(r.violations.map((v) => ({
           id: v.id, impact: v.impact, help: v.help,
           nodes: v.nodes.map((n) => ({ impact: n.impact, target: n.target, summary: n.failureSummary, html: n.html.slice(0, 200) })),
         }))))
         .catch((e) => done({ error: String(e) }));`,
      [],
      60_000,
    );
    if (violations?.error) throw new Error(`axe failed in the page: ${violations.error}`);
    return violations
      .map((v) => ({ ...v, nodes: v.nodes.filter((n) => impacts.includes(n.impact ?? v.impact)) }))
      .filter((v) => v.nodes.length > 0);
  }

  /** Saves a PNG of the window under e2e/artifacts/. */
  async screenshot(suffix = "") {
    await this.screenshotTo(path.join(ARTIFACTS, `${this.name}${suffix ? `--${suffix}` : ""}.png`));
  }

  /**
   * Saves a PNG of the window as `file`, once the latest DOM is painted.
   * The pixels come from the X server (the window as shown), not from
   * WebDriver: where the app draws on the CPU (no GPU, as under Xvfb)
   * WebKitWebDriver's screenshot can wait forever for a frame that needs
   * no drawing. WebDriver's is the fallback where X's can't be had.
   */
  async screenshotTo(file) {
    if (!this.session?.id || this.windowClosed) return;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    await this.painted();
    if (await this.xScreenshot(file)) return;
    fs.writeFileSync(file, await this.session.screenshot());
  }

  /** The app's window as X shows it, written as `file` by ImageMagick's `import`; false if that can't be done. */
  async xScreenshot(file) {
    const app = processesWithHome(this.dirs.home).find((p) => p.split(" ")[1] === APP_BINARY);
    if (!app) return false;
    const pid = app.split(" ")[0];
    const windows = await output("xdotool", ["search", "--onlyvisible", "--pid", pid]);
    const window = windows?.split("\n").find((w) => /^\d+$/.test(w));
    if (!window) return false;
    return (await output("import", ["-window", window, `png:${file}`])) !== null;
  }

  /**
   * Waits (at most a second) until the latest DOM is painted: under Xvfb
   * WebKit may not have painted it yet, and a screenshot shows the last
   * painted frame. Two animation frames are enough.
   */
  async painted() {
    await this.session
      .executeAsync(
        `const done = arguments[arguments.length - 1];
         setTimeout(done, 1000);
         requestAnimationFrame(() => requestAnimationFrame(() => done()));`,
        [],
        5_000,
      )
      .catch(() => {});
  }
}

let axeSource = null;
/** axe-core's browser bundle (an e2e devDependency, installed by scripts/setup.sh --test). */
function axeScript() {
  if (axeSource) return axeSource;
  let file;
  try {
    file = createRequire(import.meta.url).resolve("axe-core/axe.min.js");
  } catch {
    throw new Error("e2e: axe-core is not installed in e2e/node_modules: run `scripts/setup.sh --test` (npm ci in e2e/)");
  }
  return (axeSource = fs.readFileSync(file, "utf8"));
}

/** The impacts `App.axe` reports by default. */
export const AXE_IMPACTS = ["serious", "critical"];


/** `[data-testid="id"]`, with an optional extra selector part. */
export function tid(id, extra = "") {
  return `[data-testid="${id}"]${extra}`;
}

/**
 * Runs `body(app)` against a fresh app: temp folders, settings pointing at
 * a scripted LLM server running `script`, the fixture project opened.
 * Options: provider ("openai" | "anthropic"), mode (default "ask"),
 * fixture (a folder under e2e/fixtures, default "demo"), openProject
 * (default true; false starts on the welcome screen), env (extra
 * variables for the app, e.g. GTK_THEME), setup(dirs) (runs before the
 * app starts, e.g. to seed recent projects), llm (options for the scripted
 * server, e.g. `{ props }` to answer as llama-server), desktop (true: a
 * private session bus with a notification service and a window to move
 * the focus to, as `app.desktop`; see lib/desktop.js), settings (fields
 * written over the settings file's, e.g. a hosted `base_url` with no key),
 * args(dirs) (the app's arguments instead of the project's path, e.g. a
 * remote folder's `ssh://` name).
 */
export async function withApp(
  t,
  { script, provider = "openai", mode = "ask", fixture = "demo", openProject = true, args, env = {}, setup, llm: llmOptions, desktop: wantDesktop = false, settings },
  body,
) {
  preflight();
  const name = artifactName(t);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const logFile = path.join(ARTIFACTS, `${name}.log`);
  fs.writeFileSync(logFile, "");
  const dirs = makeHome(fixture);
  const llm = await startLlmServer(script, llmOptions);
  let driver = null;
  let desktop = null;
  let app = null;
  let failed = false;
  try {
    writeSettings(dirs, { provider, baseUrl: llm.baseUrl(provider), mode, extra: settings });
    await setup?.(dirs);
    if (wantDesktop) {
      desktop = await startDesktop(path.join(dirs.root, "desktop"), logFile, path.join(ARTIFACTS, `${name}--notifications.txt`));
    }
    const appEnv = { ...driverEnv(dirs), ...desktop?.env, ...env };
    driver = await startDriver(appEnv, logFile);
    app = new App({ dirs, llm, driver, name, openProject, args: args?.(dirs) ?? null, desktop, env: appEnv });
    await app.open();
    await body(app);
    if (llm.unexpected.length) {
      throw new Error(`the scripted LLM server got unexpected requests:\n${llm.unexpected.map((u) => `  ${u.path}: ${u.why}`).join("\n")}`);
    }
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    // Each step on its own: one failing must not skip the others.
    await app?.screenshot(failed ? "failed" : "").catch((e) => console.error(`e2e: screenshot failed: ${e.message}`));
    await app?.session?.delete().catch((e) => console.error(`e2e: closing the session failed: ${e.message}`));
    // Let WebKitWebDriver see the app out before it is stopped itself.
    const t0 = Date.now();
    await waitForAppGone(dirs.home, 5_000);
    if (process.env.CORRAL_E2E_DEBUG) console.error(`e2e: app gone after ${Date.now() - t0} ms`);
    await driver?.stop().catch((e) => console.error(`e2e: stopping tauri-driver failed: ${e.message}`));
    await llm.close().catch(() => {});
    await waitForProcessesGone(dirs.home);
    await desktop?.stop().catch((e) => console.error(`e2e: stopping the desktop failed: ${e.message}`));
    if (failed || process.env.CORRAL_E2E_KEEP) {
      console.error(`e2e: kept the test's folders in ${dirs.root}; driver and app log: ${logFile}`);
    } else {
      // The app's web processes may still be flushing caches for a moment.
      try {
        fs.rmSync(dirs.root, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
      } catch (error) {
        console.error(`e2e: could not remove ${dirs.root}: ${error.message}`);
      }
    }
  }
}
