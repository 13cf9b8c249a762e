// How a settled exec_shell call ended, for its card: a result (which may
// still be a non-zero exit or a timeout), or a stop. Rust answers a stopped
// run by rejecting with a `cancelled` error whose details carry the partial
// output and the time it ran (docs/design.md, "Shell").
import type { WireError } from "./types";

export type StoppedRun = { stdout: string; stderr: string; duration_ms: number | null };

/** The partial run in a `cancelled` error; undefined if the command never started. */
export function stoppedRun(error: WireError | undefined): StoppedRun | undefined {
  if (error?.code !== "cancelled") return undefined;
  const { stdout, stderr, duration_ms } = error.details;
  if (stdout === undefined && stderr === undefined && duration_ms === undefined) return undefined;
  return {
    stdout: typeof stdout === "string" ? stdout : "",
    stderr: typeof stderr === "string" ? stderr : "",
    duration_ms: typeof duration_ms === "number" ? duration_ms : null,
  };
}

