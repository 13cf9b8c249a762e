// The slash commands as the chat box's completion and the command palette
// list them: Corral's built-ins first, then the custom commands of the
// project, the user and Codex's prompts (as Rust lists them), each with its
// description and argument hint, and what completing one puts in the box.
import { BUILT_INS } from "./agent/builtIns";
import { commandsOf } from "./agent/slashCommands";
import { rank } from "./fuzzy";
import type { Customization, SetupSource } from "./types";

export type MenuEntry = {
  name: string;
  description: string;
  argumentHint?: string;
  /** Corral's own, or where the custom command's file is. */
  kind: "built-in" | SetupSource;
  /** Another of the same name runs instead (a built-in, or the project's). */
  shadowed?: boolean;
};

/** What each kind is called in the list. */
export const KIND_LABEL: Record<MenuEntry["kind"], string> = { "built-in": "Corral", project: "project", user: "user", codex: "Codex prompt" };

/** The built-ins, then every listed custom command, in the listing's order. */
export function menuEntries(listing: Pick<Customization, "commands"> | null): MenuEntry[] {
  const builtIns: MenuEntry[] = BUILT_INS.map(({ name, description, argumentHint }) => ({ name, description, kind: "built-in", ...(argumentHint ? { argumentHint } : {}) }));
  const taken = new Set(builtIns.map((entry) => entry.name));
  const custom: MenuEntry[] = (listing ? commandsOf(listing) : []).map((command) => ({
    name: command.name,
    description: command.description ?? firstLine(command.body),
    kind: command.source,
    ...(command.argumentHint ? { argumentHint: command.argumentHint } : {}),
    ...(command.shadowed || taken.has(command.name) ? { shadowed: true } : {}),
  }));
  return [...builtIns, ...custom];
}

/**
 * The name typed so far when the box holds a slash command being named:
 * the text starts with `/` and the caret is still in its first word.
 */
export function slashQuery(text: string, caret: number): string | null {
  const typed = /^\/(\S*)/.exec(text);
  // A path (`/src/app.ts`) is not a command.
  if (!typed || typed[1].includes("/") || caret < 1 || caret > typed[0].length) return null;
  return typed[1];
}

/** The entries for `query`: those whose name starts with it first, then the fuzzy matches. */
export function matching(entries: readonly MenuEntry[], query: string, limit = 12): MenuEntry[] {
  const q = query.toLowerCase();
  const starts = entries.filter((entry) => entry.name.toLowerCase().startsWith(q));
  const others = rank(query, entries.filter((entry) => !starts.includes(entry)), (entry) => `${entry.name} ${entry.description}`);
  return [...starts, ...others].slice(0, limit);
}

/** The box with its first word replaced by `/name ` and the caret after it; what followed is kept. */
export function completeWith(text: string, name: string): { text: string; caret: number } {
  const rest = text.replace(/^\/\S*\s?/, "");
  const head = `/${name} `;
  return { text: head + rest, caret: head.length };
}

function firstLine(body: string): string {
  const line = body.split("\n").find((l) => l.trim() !== "") ?? "";
  return line.length > 100 ? `${line.slice(0, 99)}…` : line.trim();
}
