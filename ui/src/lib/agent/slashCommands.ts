// Custom slash commands as Claude Code and Codex write them: a Markdown file
// whose name is the command, an optional front matter, and a body that
// becomes the user's message with the arguments put in. This module only
// reads text it is given; finding and reading the files is Rust's job
// (corral-session's customization listing: the project's beneath its root,
// the user's where they are).
import type { Customization, SetupSource } from "../types";
import { listOf, single, splitFrontMatter } from "./frontMatter";
import type { AgentIpc } from "./ports";

/** Where a command file was found; it decides how the command is named. */
export type CommandSource = SetupSource;

/** What a command file's front matter may say, as Claude Code documents it. */
export type CommandFacts = {
  description?: string;
  argumentHint?: string;
  allowedTools?: string[];
  model?: string;
};

/** A command ready to be listed and expanded. */
export type SlashCommand = CommandFacts & {
  /** What the user types after the slash: `review`, `frontend:test`, `prompts:draft`. */
  name: string;
  source: CommandSource;
  /** The file's path as the host gave it, shown in the palette. */
  path: string;
  body: string;
};


/**
 * The command's name from its path relative to its commands folder: each
 * subfolder becomes a `folder:` prefix, as Claude Code names them; Codex's
 * prompts are invoked as `prompts:name`.
 */
export function commandName(relativePath: string, source: CommandSource): string | null {
  const parts = relativePath.replace(/\\/g, "/").split("/").filter((part) => part !== "" && part !== ".");
  const file = parts.pop();
  if (!file || !file.toLowerCase().endsWith(".md") || parts.includes("..")) return null;
  const base = file.slice(0, -".md".length);
  if (base === "" || /\s|:/.test(base)) return null;
  const name = [...parts, base].join(":");
  return source === "codex" ? `prompts:${name}` : name;
}

/** A command from its file's text. */
export function parseCommand(relativePath: string, source: CommandSource, path: string, text: string): SlashCommand | null {
  const name = commandName(relativePath, source);
  if (name === null) return null;
  const { values, body } = splitFrontMatter(text);
  return { name, source, path, body, ...commandFacts(values) };
}

/**
 * What a command's front matter says, as Claude Code documents it. Unknown
 * keys are ignored, as Claude Code does.
 */
export function commandFacts(values: ReadonlyMap<string, string | string[]>): CommandFacts {
  const facts: CommandFacts = {};
  const description = single(values.get("description"));
  if (description !== undefined) facts.description = description;
  const argumentHint = single(values.get("argument-hint"));
  if (argumentHint !== undefined) facts.argumentHint = argumentHint;
  const model = single(values.get("model"));
  if (model !== undefined) facts.model = model;
  const tools = values.get("allowed-tools");
  if (tools !== undefined) facts.allowedTools = listOf(tools);
  return facts;
}

/**
 * The body with the arguments put in: `$ARGUMENTS` is all of them as typed,
 * `$1`…`$9` each one (quotes group words, as in a shell). When the body
 * names neither, the arguments follow it on a line of their own, so what the
 * user typed is never dropped.
 */
export function expandCommand(body: string, args: string): string {
  const typed = args.trim();
  const words = splitArguments(typed);
  const placeholder = /\$ARGUMENTS\b|\$[1-9]/;
  if (!placeholder.test(body)) return typed === "" ? body : `${body.replace(/\s+$/, "")}\n\nARGUMENTS: ${typed}`;
  return body.replace(/\$ARGUMENTS\b|\$([1-9])/g, (_, index: string | undefined) => (index === undefined ? typed : (words[Number(index) - 1] ?? "")));
}

/** `/name args` split into the name and the rest, or null when the text is not a command. */
export function parseInvocation(text: string): { name: string; args: string } | null {
  const found = /^\/([A-Za-z0-9][\w.:-]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!found) return null;
  return { name: found[1], args: found[2] ?? "" };
}

/** Finds the command a message invokes; the loop's seam for tests. */
export type CommandFinder = (ipc: Pick<AgentIpc, "customization">, name: string) => Promise<SlashCommand | null>;

/**
 * Every listed command, named; where two have one name the first listed
 * (the project's, then the user's, then Codex's) is the one `/name` runs,
 * and the others are marked `shadowed`, so a list can still show them.
 */
export function commandsOf(listing: Pick<Customization, "commands">): (SlashCommand & { shadowed?: true })[] {
  const taken = new Set<string>();
  const commands: (SlashCommand & { shadowed?: true })[] = [];
  for (const file of listing.commands) {
    const command = parseCommand(file.relative, file.source, file.path, file.text);
    if (command === null) continue;
    commands.push(taken.has(command.name) ? { ...command, shadowed: true } : command);
    taken.add(command.name);
  }
  return commands;
}

/**
 * The command called `name` among the project's and the user's, as Rust
 * lists them (the project's read beneath its root, so the same confinement
 * applies); null when there is none (the message is then sent as typed).
 */
export const listedCommand: CommandFinder = async (ipc, name) => {
  const listing = await ipc.customization().catch(() => null);
  if (listing === null) return null;
  return commandsOf(listing).find((command) => command.name === name && !command.shadowed) ?? null;
};

/** What the model is sent for `text`: a command's body with its arguments put in, or the text itself. */
export async function expandMessage(ipc: Pick<AgentIpc, "customization">, text: string, find: CommandFinder = listedCommand): Promise<string> {
  const invocation = parseInvocation(text);
  if (invocation === null) return text;
  const command = await find(ipc, invocation.name);
  return command === null ? text : expandCommand(command.body, invocation.args);
}

/** Arguments split on spaces, a quoted run kept as one without its quotes. */
export function splitArguments(args: string): string[] {
  const words: string[] = [];
  for (const match of args.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(match[1] ?? match[2] ?? match[3]);
  return words;
}
