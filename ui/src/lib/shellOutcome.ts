// How a settled exec_shell call ended, for its card: a result (which may
// still be a non-zero exit or a timeout), or a stop. Rust answers a stopped
// run by rejecting with a `cancelled` error whose details carry the partial
// output and the time it ran (docs/design.md, "Shell").
import type { ShellOutput, WireError } from "./types";

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


/**
 * What went wrong with a command that ran: a non-zero exit or a timeout.
 * The tool call itself succeeded, so this is a warning, not a failure.
 */
export function exitProblem(result: ShellOutput | undefined): string | null {
  if (!result) return null;
  if (result.timed_out) return "timed out";
  if (result.exit_code !== null && result.exit_code !== 0) return `exit ${result.exit_code}`;
  return null;
}
