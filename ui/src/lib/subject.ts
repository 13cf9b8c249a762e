// What a tool call is about, in a few words, and a one-line preview of its
// result (a command's exit and time are on its panel instead).
export function commandLine(input: Record<string, unknown>): string {
  const args = Array.isArray(input.args) ? input.args.map(String) : [];
  return [String(input.command ?? ""), ...args.map(quote)].join(" ");
}

function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** A tool of one of the user's MCP servers (`server__tool`); registry tools have no `__`. */
export const isMcpTool = (tool: string): boolean => tool.includes("__");

export function subjectOf(tool: string, input: Record<string, unknown>): string {
  if (isMcpTool(tool)) {
    const words = Object.values(input).filter((v): v is string | number => typeof v === "string" || typeof v === "number");
    const line = words.map(String).join(" ").replace(/\s+/g, " ");
    return line.length > 80 ? `${line.slice(0, 79)}…` : line;
  }
  switch (tool) {
    case "exec_shell":
      return commandLine(input);
    case "search_files":
      return `${String(input.query ?? "")}${input.path ? ` in ${String(input.path)}` : ""}`;
    case "glob":
      return `${String(input.pattern ?? "")}${input.path ? ` in ${String(input.path)}` : ""}`;
    case "list_directory":
      return String(input.path ?? ".");
    case "read_file": {
      const range = input.start_line ? `:${String(input.start_line)}-${String(input.end_line ?? "")}` : "";
      return `${String(input.path ?? "")}${range}`;
    }
    default:
      return typeof input.path === "string" ? input.path : "";
  }
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

export function resultSummary(tool: string, result: unknown): string {
  if (typeof result !== "object" || result === null) return "";
  const r = result as Record<string, unknown>;
  const more = r.truncated ? " (truncated)" : "";
  switch (tool) {
    case "read_file":
      return `lines ${String(r.start_line)}–${String(r.end_line)} of ${String(r.total_lines)}${more}`;
    case "write_file":
      return `${r.created ? "created" : "wrote"} ${plural(Number(r.bytes ?? 0), "byte")}`;
    case "edit_file":
      return plural(Number(r.replacements ?? 0), "replacement");
    case "delete_file":
      return "deleted";
    case "list_directory":
      return `${plural(Array.isArray(r.entries) ? r.entries.length : 0, "entry")}${more}`.replace("entrys", "entries");
    case "glob":
      return `${plural(Number(r.count ?? 0), "file")}${more}`;
    case "search_files":
      return `${plural(Array.isArray(r.matches) ? r.matches.length : 0, "match")}${more}`.replace("matchs", "matches");
    case "update_plan":
      return `${Number(r.completed ?? 0)} of ${plural(Number(r.total ?? 0), "step")} done`;
    default:
      return "";
  }
}

/** The result as the card's expandable preview: text, at most `maxLines` lines. */
export function resultText(tool: string, result: unknown, maxLines = 40): string {
  const r = (typeof result === "object" && result !== null ? result : {}) as Record<string, unknown>;
  const list = (key: string): unknown[] => (Array.isArray(r[key]) ? (r[key] as unknown[]) : []);
  let text: string;
  switch (tool) {
    case "read_file":
      text = String(r.content ?? "");
      break;
    case "list_directory":
      text = list("entries")
        .map((e) => e as { path: string; kind: string })
        .map((e) => (e.kind === "dir" ? `${e.path}/` : e.path))
        .join("\n");
      break;
    case "glob":
      text = list("files").map(String).join("\n");
      break;
    case "search_files":
      text = list("matches")
        .map((m) => m as { path: string; line: number; text: string })
        .map((m) => `${m.path}:${m.line}: ${m.text}`)
        .join("\n");
      break;
    case "edit_file":
      text = String(r.diff ?? "");
      break;
    default:
      text = JSON.stringify(result, null, 2);
  }
  const lines = text.split("\n");
  if (lines.length <= maxLines) return text;
  return `${lines.slice(0, maxLines).join("\n")}\n… ${lines.length - maxLines} more lines`;
}
