/**
 * Numbers and dates as the window writes them, each through one kept
 * `Intl` formatter: `toLocaleString` makes a new ICU formatter on every
 * call, and a list that formats each row on every update makes
 * thousands, held outside the JavaScript heap until a full collection.
 * Each is made on first use, and where there is no `Intl` (QuickJS, which
 * runs the agent loop in `corral-cli exec`) the plain `toLocaleString`.
 */

const intl = typeof Intl !== "undefined";
let counts: Intl.NumberFormat | undefined;
let tenths: Intl.NumberFormat | undefined;
let moments: Intl.DateTimeFormat | undefined;
let stamps: Intl.DateTimeFormat | undefined;

/** `12,345`. */
export const count = (n: number): string => (intl ? (counts ??= new Intl.NumberFormat("en-US")).format(n) : n.toLocaleString("en-US"));

/** `1.5`, at most one decimal, grouped. */
export const oneDecimal = (n: number): string =>
  intl ? (tenths ??= new Intl.NumberFormat("en-US", { maximumFractionDigits: 1 })).format(n) : n.toLocaleString("en-US", { maximumFractionDigits: 1 });

/** A moment in full, for a tooltip: `Nov 29, 2026, 4:52:10 PM`. */
export const moment = (ms: number): string =>
  intl ? (moments ??= new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "medium" })).format(ms) : new Date(ms).toLocaleString();

/** A moment to tell two rows apart: `Nov 29, 16:52:10`. */
export const stamp = (ms: number): string =>
  intl
    ? (stamps ??= new Intl.DateTimeFormat("en", { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false })).format(ms)
    : new Date(ms).toLocaleString();
