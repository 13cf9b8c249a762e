// A small W3C WebDriver client over fetch: the dozen commands this suite
// uses, against tauri-driver (which forwards to WebKitWebDriver).
//
// Why not webdriverio: it pulls ~190 packages (browser-driver downloaders
// with install scripts among them) to drive one protocol we use a sliver of.

const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

/** An element id as a script argument (the page receives the element). */
export function elementRef(id) {
  return { [ELEMENT]: id };
}

/** Keys for `sendKeys` (W3C WebDriver key codes). */
export const Keys = { ENTER: "\uE007", ESCAPE: "\uE00C", SHIFT: "\uE008", TAB: "\uE004", CONTROL: "\uE009" };

/** Ctrl+KEY, held as a user holds it (W3C actions), to whatever has the focus. */
export async function pressCtrl(session, key) {
  const actions = [
    { type: "keyDown", value: Keys.CONTROL },
    { type: "keyDown", value: key },
    { type: "keyUp", value: key },
    { type: "keyUp", value: Keys.CONTROL },
  ];
  await session.cmd("POST", "/actions", { actions: [{ type: "key", id: "keyboard", actions }] });
  await session.cmd("DELETE", "/actions");
}

/** A WebDriver error response, with the command that caused it. */
export class WebDriverError extends Error {
  constructor(command, status, value) {
    super(`WebDriver ${command} failed (${status}): ${value?.error ?? "error"}: ${value?.message ?? JSON.stringify(value)}`);
    this.status = status;
    this.error = value?.error;
  }
}

async function call(base, method, path, body, timeoutMs = 60_000) {
  const response = await fetch(base + path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json; charset=utf-8" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    throw new WebDriverError(`${method} ${path}`, response.status, { message: text.slice(0, 500) });
  }
  if (!response.ok) throw new WebDriverError(`${method} ${path}`, response.status, json.value);
  return json.value;
}

/** One WebDriver session: one running app window. */
export class Session {
  /**
   * Opens a session. For tauri-driver the capabilities are
   * `{ "tauri:options": { application, args } }`; tauri-driver only reads
   * them from `capabilities.alwaysMatch`.
   */
  static async create(base, alwaysMatch, timeoutMs = 60_000) {
    const value = await call(base, "POST", "/session", { capabilities: { alwaysMatch } }, timeoutMs);
    return new Session(base, value.sessionId);
  }

  constructor(base, id) {
    this.base = base;
    this.id = id;
  }

  cmd(method, path, body, timeoutMs) {
    return call(this.base, method, `/session/${this.id}${path}`, body, timeoutMs);
  }

  /** Ends the session (the app is closed). Safe to call twice. */
  async delete() {
    if (!this.id) return;
    const id = this.id;
    this.id = null;
    await call(this.base, "DELETE", `/session/${id}`, undefined, 20_000);
  }

  /** Closes the window, as the user would (the app then exits). */
  closeWindow() {
    return this.cmd("DELETE", "/window", undefined, 20_000);
  }

  title() {
    return this.cmd("GET", "/title");
  }

  /** Runs `script` (a function body) in the page; `arguments` holds `args`. */
  execute(script, args = []) {
    return this.cmd("POST", "/execute/sync", { script, args });
  }

  /**
   * Runs `script` in the page and waits for it to call its last argument
   * (the callback) with the result.
   */
  executeAsync(script, args = [], timeoutMs = 60_000) {
    return this.cmd("POST", "/execute/async", { script, args }, timeoutMs);
  }

  /** The elements matching a CSS selector, as WebDriver element ids. */
  async findAll(css) {
    const found = await this.cmd("POST", "/elements", { using: "css selector", value: css });
    return found.map((e) => e[ELEMENT]);
  }

  async click(css) {
    const [id] = await this.findAll(css);
    if (!id) throw new Error(`click: nothing matches ${css}`);
    await this.cmd("POST", `/element/${id}/click`, {});
  }

  async type(css, text) {
    const [id] = await this.findAll(css);
    if (!id) throw new Error(`type: nothing matches ${css}`);
    await this.cmd("POST", `/element/${id}/value`, { text });
  }

  /**
   * Presses and releases each key of `keys` in turn, sent to whatever has
   * the focus (W3C actions), as a user typing on without looking.
   */
  async keys(keys) {
    const actions = [...keys].flatMap((key) => [
      { type: "keyDown", value: key },
      { type: "keyUp", value: key },
    ]);
    await this.cmd("POST", "/actions", { actions: [{ type: "key", id: "keyboard", actions }] });
    await this.cmd("DELETE", "/actions");
  }

  /**
   * Moves the mouse onto the first match of `css` (its centre, found when
   * the move is made), as a user about to click it.
   */
  async hover(css) {
    const [id] = await this.findAll(css);
    if (!id) throw new Error(`hover: nothing matches ${css}`);
    const move = { type: "pointerMove", origin: elementRef(id), x: 0, y: 0, duration: 0 };
    await this.cmd("POST", "/actions", { actions: [{ type: "pointer", id: "mouse", parameters: { pointerType: "mouse" }, actions: [move] }] });
  }

  /** A left click at a point of the window's viewport, whatever is drawn there. */
  async clickAt(x, y) {
    const actions = [
      { type: "pointerMove", origin: "viewport", x: Math.round(x), y: Math.round(y), duration: 0 },
      { type: "pointerDown", button: 0 },
      { type: "pointerUp", button: 0 },
    ];
    await this.cmd("POST", "/actions", { actions: [{ type: "pointer", id: "mouse", parameters: { pointerType: "mouse" }, actions }] });
    await this.cmd("DELETE", "/actions");
  }

  /**
   * `count` left clicks at a point of the viewport, `gap` ms from one
   * release to the next press (W3C actions with pauses, sent at once), as
   * a user's quick double click: whatever is drawn there at each press
   * takes it.
   */
  async clicksAt(x, y, { count = 2, gap = 150 } = {}) {
    const actions = [{ type: "pointerMove", origin: "viewport", x: Math.round(x), y: Math.round(y), duration: 0 }];
    for (let i = 0; i < count; i++) {
      if (i > 0) actions.push({ type: "pause", duration: gap });
      actions.push({ type: "pointerDown", button: 0 }, { type: "pointerUp", button: 0 });
    }
    await this.cmd("POST", "/actions", { actions: [{ type: "pointer", id: "mouse", parameters: { pointerType: "mouse" }, actions }] });
    await this.cmd("DELETE", "/actions");
  }

  /** A PNG of the window, as a Buffer. */
  async screenshot() {
    return Buffer.from(await this.cmd("GET", "/screenshot"), "base64");
  }
}

/** Whether a WebDriver server answers `/status` at `base`. */
export async function isReady(base) {
  try {
    const value = await call(base, "GET", "/status", undefined, 2_000);
    return value?.ready !== false;
  } catch {
    return false;
  }
}
