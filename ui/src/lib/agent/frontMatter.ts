// The front matter of the Markdown files Claude Code reads (commands,
// skills, subagents): the lines between an opening and a closing `---`,
// read as the flat `key: value` YAML these files use. A key with nothing
// after its colon starts a list of `- item` lines. One reader serves every
// kind of file, so a file written for Claude reads the same everywhere.

/** A file split at its front matter. `values` is empty when it has none. */
export type Split = {
  /** Each key's value as written, unquoted; a list as its items. */
  values: Map<string, string | string[]>;
  /** The text after the front matter (the whole text when there is none). */
  body: string;
  /** Whether the file opened with a front matter. */
  opened: boolean;
  /** Why a front matter that opened could not be read; the body is then the whole text. */
  problem?: string;
};

/** `text` split at its front matter. */
export function splitFrontMatter(text: string): Split {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trim() !== "---") return { values: new Map(), body: text, opened: false };
  const end = lines.findIndex((line, i) => i > 0 && line.trim() === "---");
  if (end < 0) return { values: new Map(), body: text, opened: true, problem: "the front matter has no closing ---" };
  const values = new Map<string, string | string[]>();
  let listKey: string | null = null;
  for (const line of lines.slice(1, end)) {
    const item = /^\s*-\s+(.*)$/.exec(line);
    if (item && listKey !== null) {
      const list = values.get(listKey);
      values.set(listKey, [...(Array.isArray(list) ? list : []), unquote(item[1])]);
      continue;
    }
    const pair = /^([A-Za-z][\w-]*)\s*:\s*(.*)$/.exec(line);
    if (!pair) continue;
    const [, key, raw] = pair;
    listKey = raw.trim() === "" ? key : null;
    values.set(key, raw.trim() === "" ? [] : unquote(raw));
  }
  return { values, body: lines.slice(end + 1).join("\n").replace(/^\n+/, ""), opened: true };
}

/** A key's value when it is one non-empty word or phrase. */
export function single(value: string | string[] | undefined): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** A value without the quotes around it. */
export function unquote(text: string): string {
  const trimmed = text.trim();
  return /^(["']).*\1$/.test(trimmed) ? trimmed.slice(1, -1) : trimmed;
}

/**
 * A value as a list: its items, or a string's comma-separated parts
 * (`[a, b]` or `a, b`). Commas inside parentheses are not separators, so a
 * rule such as `Bash(git add:*, git status:*)` stays whole.
 */
export function listOf(value: string | string[]): string[] {
  if (Array.isArray(value)) return value.filter((tool) => tool !== "");
  const inner = /^\[(.*)\]$/.exec(value)?.[1] ?? value;
  const tools: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of inner) {
    if (char === "(") depth++;
    if (char === ")") depth = Math.max(0, depth - 1);
    if (char === "," && depth === 0) {
      tools.push(current);
      current = "";
    } else current += char;
  }
  tools.push(current);
  return tools.map((tool) => unquote(tool.trim())).filter((tool) => tool !== "");
}
