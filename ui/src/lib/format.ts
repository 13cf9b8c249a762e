/**
 * Numbers and dates as the window writes them, each through one kept
 * `Intl` formatter: `toLocaleString` makes a new ICU formatter on every
 * call, and a list that formats each row on every update makes
 * thousands, held outside the JavaScript heap until a full collection.
 */

const counts = new Intl.NumberFormat("en-US");
const tenths = new Intl.NumberFormat("en-US", { maximumFractionDigits: 1 });
const moments = new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "medium" });
const stamps = new Intl.DateTimeFormat("en", { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });

/** `12,345`. */
export const count = (n: number): string => counts.format(n);

/** `1.5`, at most one decimal, grouped. */
export const oneDecimal = (n: number): string => tenths.format(n);

/** A moment in full, for a tooltip: `Nov 29, 2026, 4:52:10 PM`. */
export const moment = (ms: number): string => moments.format(ms);

/** A moment to tell two rows apart: `Nov 29, 16:52:10`. */
export const stamp = (ms: number): string => stamps.format(ms);
