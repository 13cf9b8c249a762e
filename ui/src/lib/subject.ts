// What a tool call is about, in a few words, and a one-line preview of its
// result (a command's exit and time are on its panel instead), read from
// the display hints of the tool's spec.
import type { ToolDisplay } from "./types";

export function commandLine(input: Record<string, unknown>): string {
  const args = Array.isArray(input.args) ? input.args.map(String) : [];
  return [String(input.command ?? ""), ...args.map(quote)].join(" ");
}

function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * What a call is about, as its tool's display hints say (never its name):
 * a tool without hints (a card saved before they existed) shows its text
 * and number arguments, as a tool of the user's MCP servers does.
 */
export function subjectOf(display: ToolDisplay | undefined, input: Record<string, unknown>): string {
  const path = typeof input.path === "string" ? input.path : "";
  const within = path ? ` in ${path}` : "";
  switch (display?.subject ?? "arguments") {
    case "command":
      return commandLine(input);
    case "query":
      return `${String(input.query ?? "")}${within}`;
    case "pattern":
      return `${String(input.pattern ?? "")}${within}`;
    case "folder":
      return String(input.path ?? ".");
    case "url":
      return String(input.url ?? "");
    case "path": {
      const range = input.start_line ? `:${String(input.start_line)}-${String(input.end_line ?? "")}` : "";
      return `${path}${range}`;
    }
    case "arguments": {
      const words = Object.values(input).filter((v): v is string | number => typeof v === "string" || typeof v === "number");
      const line = words.map(String).join(" ").replace(/\s+/g, " ");
      return line.length > 80 ? `${line.slice(0, 79)}…` : line;
    }
  }
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

export function resultSummary(display: ToolDisplay | undefined, result: unknown): string {
  if (typeof result !== "object" || result === null) return "";
  const r = result as Record<string, unknown>;
  const more = r.truncated ? " (truncated)" : "";
  switch (display?.result ?? "json") {
    case "file_content":
      return `lines ${String(r.start_line)}–${String(r.end_line)} of ${String(r.total_lines)}${more}`;
    case "written":
      return `${r.created ? "created" : "wrote"} ${plural(Number(r.bytes ?? 0), "byte")}`;
    case "edited":
      return plural(Number(r.replacements ?? 0), "replacement");
    case "deleted":
      return "deleted";
    case "entries":
      return `${plural(Array.isArray(r.entries) ? r.entries.length : 0, "entry")}${more}`.replace("entrys", "entries");
    case "files":
      return `${plural(Number(r.count ?? 0), "file")}${more}`;
    case "matches":
      return `${plural(Array.isArray(r.matches) ? r.matches.length : 0, "match")}${more}`.replace("matchs", "matches");
    case "plan":
      return `${Number(r.completed ?? 0)} of ${plural(Number(r.total ?? 0), "step")} done`;
    case "page":
      return `${plural(Number(r.total_chars ?? 0), "character")}${r.cached ? " (kept)" : ""}${more}`;
    case "output":
    case "diagnostics":
    case "json":
      return "";
  }
}

/** The result as the card's expandable preview: text, at most `maxLines` lines. */
export function resultText(display: ToolDisplay | undefined, result: unknown, maxLines = 40): string {
  const r = (typeof result === "object" && result !== null ? result : {}) as Record<string, unknown>;
  const list = (key: string): unknown[] => (Array.isArray(r[key]) ? (r[key] as unknown[]) : []);
  let text: string;
  switch (display?.result ?? "json") {
    case "file_content":
      text = String(r.content ?? "");
      break;
    case "entries":
      text = list("entries")
        .map((e) => e as { path: string; kind: string })
        .map((e) => (e.kind === "dir" ? `${e.path}/` : e.path))
        .join("\n");
      break;
    case "files":
      text = list("files").map(String).join("\n");
      break;
    case "matches":
      text = list("matches")
        .map((m) => m as { path: string; line: number; text: string })
        .map((m) => `${m.path}:${m.line}: ${m.text}`)
        .join("\n");
      break;
    case "edited":
      text = String(r.diff ?? "");
      break;
    case "page":
      text = String(r.content ?? "");
      break;
    default:
      text = JSON.stringify(result, null, 2);
  }
  const lines = text.split("\n");
  if (lines.length <= maxLines) return text;
  return `${lines.slice(0, maxLines).join("\n")}\n… ${lines.length - maxLines} more lines`;
}
