// A desktop session for one test, on the suite's Xvfb display: a private
// session D-Bus, a real notification service on it (dunst, which draws
// each notification on the display and prints each one it receives), and
// another window that can take the X input focus from the app's.
//
//   await withApp(t, { script, desktop: true }, async (app) => {
//     await app.desktop.focusElsewhere();
//     ...
//     await app.desktop.waitForNotification("Corral: the agent finished");
//   });
//
// Only a test that asks for one gives the app a session bus: the others
// run with none (and the app must not wait on a service nobody runs).

import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { waitUntil } from "./app.js";

const run = promisify(execFile);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A session bus that starts nothing by itself: no service folders, so a
// name nobody owns is an error at once (the standard session config would
// start dunst, the accessibility bus or dconf for whoever asked, and they
// would outlive the test).
function busConfig(dir) {
  return `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=${dir}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`;
}

// Notifications stay on screen until the test ends, so a screenshot shows
// them whenever it is taken; at the top right, below the app's header.
const DUNSTRC = `[global]
    font = Monospace 12
    width = 440
    offset = 16x56
[urgency_low]
    timeout = 0
[urgency_normal]
    timeout = 0
[urgency_critical]
    timeout = 0
`;

// Programs still running if the test process is interrupted: ended on the
// way out (app.js turns SIGINT and SIGTERM into an exit), so no bus or
// dunst outlives the suite.
const live = new Set();
process.on("exit", () => {
  for (const proc of live) {
    proc.kill("SIGCONT");
    proc.kill("SIGTERM");
  }
});

/** Starts `command`; `stop()` ends it with SIGTERM (SIGKILL after 5 s) and waits. */
function start(command, args, { env, stdio }) {
  const proc = spawn(command, args, { env, stdio });
  live.add(proc);
  const exit = new Promise((resolve) => {
    proc.once("exit", (code, signal) => {
      live.delete(proc);
      resolve({ code, signal });
    });
    proc.once("error", (error) => {
      live.delete(proc);
      resolve({ error });
    });
  });
  return {
    proc,
    exited: () => proc.exitCode !== null || proc.signalCode !== null,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null || proc.pid === undefined) return;
      proc.kill("SIGTERM");
      if (!(await Promise.race([exit, sleep(5_000).then(() => null)]))) {
        proc.kill("SIGKILL");
        await exit;
      }
    },
  };
}

/**
 * Parses dunst's `-print` output: one `{ … }` block per notification it
 * received, with lines such as `appname: '…'` and `summary: '…'`.
 */
export function parseReceived(text) {
  return text
    .split(/^\{$/m)
    .slice(1)
    .map((block) => {
      const field = (name) => block.match(new RegExp(`^\\s*${name}: '(.*)'$`, "m"))?.[1] ?? null;
      return { appname: field("appname"), summary: field("summary"), body: field("body") };
    });
}

export class Desktop {
  constructor(dir, logFile, printed) {
    this.dir = dir;
    this.logFile = logFile;
    this.printed = printed;
    this.processes = [];
    /** What the app's environment needs to use this desktop. */
    this.env = {};
    /** The environment of the programs started here. */
    this.ownEnv = { ...process.env };
    delete this.ownEnv.DBUS_SESSION_BUS_ADDRESS;
  }

  /** A program of this desktop, its output in the log unless `stdout` says where. */
  spawn(command, args, { stdout } = {}) {
    const log = fs.openSync(this.logFile, "a");
    const out = stdout ? fs.openSync(stdout, "a") : log;
    const started = start(command, args, { env: this.ownEnv, stdio: ["ignore", out, log] });
    if (out !== log) fs.closeSync(out);
    fs.closeSync(log);
    this.processes.push(started);
    return started;
  }

  /** The bus, then dunst on it; resolves once dunst answers there. */
  async start() {
    fs.mkdirSync(this.dir, { recursive: true });
    const config = path.join(this.dir, "bus.conf");
    fs.writeFileSync(config, busConfig(this.dir));
    const addressFile = path.join(this.dir, "bus.address");
    const bus = this.spawn("dbus-daemon", ["--config-file", config, "--nofork", "--print-address=1"], { stdout: addressFile });
    const address = await waitUntil(
      () => {
        if (bus.exited()) throw new Error(`dbus-daemon exited at start; see ${this.logFile}`);
        return fs.readFileSync(addressFile, "utf8").trim() || null;
      },
      { timeout: 10_000, what: "dbus-daemon to print its address" },
    );
    this.ownEnv.DBUS_SESSION_BUS_ADDRESS = address;
    this.env = { DBUS_SESSION_BUS_ADDRESS: address };

    const dunstrc = path.join(this.dir, "dunstrc");
    fs.writeFileSync(dunstrc, DUNSTRC);
    fs.writeFileSync(this.printed, "");
    const dunst = this.spawn("dunst", ["-conf", dunstrc, "-print"], { stdout: this.printed });
    this.dunst = dunst;
    await waitUntil(
      async () => {
        if (dunst.exited()) throw new Error(`dunst exited at start; see ${this.logFile}`);
        return this.run("dunstctl", ["count", "displayed"]).then(
          () => true,
          () => false,
        );
      },
      { timeout: 10_000, what: "dunst on the session bus" },
    );
  }

  /** Runs a short command against this desktop; resolves to its stdout. */
  async run(command, args) {
    const { stdout } = await run(command, args, { env: this.ownEnv, timeout: 10_000 });
    return stdout;
  }

  /** Every notification dunst received so far: `{ appname, summary, body }`. */
  received() {
    return parseReceived(fs.readFileSync(this.printed, "utf8"));
  }

  /** Waits for a notification whose summary is `summary`; returns it. */
  waitForNotification(summary, { timeout = 15_000 } = {}) {
    return waitUntil(() => this.received().find((n) => n.summary === summary) ?? null, {
      timeout,
      what: `a notification "${summary}" (received: ${JSON.stringify(this.received())})`,
    });
  }

  /**
   * The X window that has the input focus (a decimal id), or "pointer-root"
   * (the focus follows the pointer: how the X server starts, with no
   * window manager to set it).
   */
  async focusedWindow() {
    try {
      const id = (await this.run("xdotool", ["getwindowfocus", "-f"])).trim();
      return id === "1" ? "pointer-root" : id;
    } catch (error) {
      if (/focused window of 1\b/.test(error.stderr ?? "")) return "pointer-root";
      throw error;
    }
  }

  /**
   * Opens another window (xmessage) at the screen's lower left and gives
   * it the X input focus, as a click on another program would; resolves
   * to its window id once it has it.
   */
  async focusElsewhere() {
    const title = `corral-e2e-elsewhere-${process.pid}`;
    if (!this.elsewhere) {
      this.spawn("xmessage", ["-title", title, "-geometry", "+40+660", "Another program has the focus."]);
      const found = await this.run("xdotool", ["search", "--sync", "--name", `^${title}$`]);
      this.elsewhere = found.trim().split("\n")[0];
    }
    await this.run("xdotool", ["windowmap", "--sync", this.elsewhere]);
    await this.run("xdotool", ["windowfocus", "--sync", this.elsewhere]);
    await waitUntil(async () => (await this.focusedWindow()) === this.elsewhere, {
      timeout: 10_000,
      what: "the other window to have the focus",
    });
    return this.elsewhere;
  }

  /**
   * Stops dunst (SIGSTOP) or lets it go on (SIGCONT): while it is stopped
   * it still owns the notification service's name, so a call to it waits
   * for an answer that does not come, as with a hung service.
   */
  pauseNotifications(paused) {
    this.dunst.proc.kill(paused ? "SIGSTOP" : "SIGCONT");
    this.paused = paused;
  }

  /** Saves a PNG of the whole X screen (the window, and dunst's notifications over it). */
  async screenshot(file) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    await this.run("import", ["-window", "root", file]);
  }

  /** Stops everything this desktop started, newest first. */
  async stop() {
    if (this.paused) this.pauseNotifications(false);
    for (const started of this.processes.reverse()) await started.stop();
    this.processes = [];
  }
}

/**
 * Starts a desktop under `dir` (a fresh folder), logging its programs to
 * `logFile` and what dunst receives to `printed`. Fails with what to
 * install when a program is missing.
 */
export async function startDesktop(dir, logFile, printed) {
  const missing = [];
  for (const program of ["dbus-daemon", "dunst", "dunstctl", "xdotool", "xmessage", "import"]) {
    await run("sh", ["-c", 'command -v "$1"', "sh", program]).catch(() => missing.push(program));
  }
  if (missing.length) throw new Error(`e2e: ${missing.map((p) => `\`${p}\``).join(", ")} missing: run \`scripts/setup.sh --test\``);
  if (!process.env.DISPLAY) throw new Error("e2e: no DISPLAY: run the suite with `scripts/e2e.sh`, which starts Xvfb");
  const desktop = new Desktop(dir, logFile, printed);
  try {
    await desktop.start();
  } catch (error) {
    await desktop.stop();
    throw error;
  }
  return desktop;
}
