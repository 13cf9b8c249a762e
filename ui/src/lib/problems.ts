// The language servers' errors and warnings as the conversation last saw
// them: each write's or edit's result carries its files' diagnostics, and
// the `diagnostics` tool returns a report; the newest word on a file wins.
import type { Item } from "./agent/state";
import type { DiagnosticsReport, FileDiagnostics, ToolDisplay } from "./types";

/** A report, if the tool result carries one. */
export function reportOf(display: ToolDisplay | undefined, result: unknown): DiagnosticsReport | null {
  if (typeof result !== "object" || result === null) return null;
  const candidate = display?.result === "diagnostics" ? result : (result as { diagnostics?: unknown }).diagnostics;
  if (typeof candidate !== "object" || candidate === null || !Array.isArray((candidate as DiagnosticsReport).files)) return null;
  return candidate as DiagnosticsReport;
}

/** The files with errors or warnings, by path, from the conversation's tool results in order. */
export function problemsOf(items: readonly Item[]): Map<string, FileDiagnostics> {
  const problems = new Map<string, FileDiagnostics>();
  for (const item of items) {
    if (item.kind !== "tool" || item.status !== "done") continue;
    const report = reportOf(item.display, item.result);
    for (const file of report?.files ?? []) {
      if (file.errors + file.warnings > 0) problems.set(file.path, file);
      else problems.delete(file.path);
    }
    // A deleted file has no problems left.
    if (item.display?.result === "deleted" && typeof item.input.path === "string") problems.delete(item.input.path);
  }
  return problems;
}

export type Counts = { errors: number; warnings: number };

/** The errors and warnings of a file, or of every file beneath a folder. */
export function countsAt(problems: ReadonlyMap<string, FileDiagnostics>, path: string, folder: boolean): Counts {
  const counts = { errors: 0, warnings: 0 };
  for (const [file, found] of problems) {
    if (folder ? path === "." || file.startsWith(`${path}/`) : file === path) {
      counts.errors += found.errors;
      counts.warnings += found.warnings;
    }
  }
  return counts;
}

/** "2 errors, 1 warning", or "no problems". */
export function describeCounts({ errors, warnings }: Counts): string {
  const part = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;
  const parts = [errors > 0 ? part(errors, "error") : "", warnings > 0 ? part(warnings, "warning") : ""].filter(Boolean);
  return parts.length > 0 ? parts.join(", ") : "no problems";
}
