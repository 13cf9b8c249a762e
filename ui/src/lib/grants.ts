// What "Allow in this conversation" can grant for a call, and how a grant
// reads. A grant is exactly what the user was shown and chose (Rust checks
// it covers the call it comes with, and enforces it): for a command its
// argv, or a pattern the user edits; for a path its file, or a folder the
// user picks among the path's own folders; for anything else that very call.
import type { Grant, ToolDisplay } from "./types";

type Call = { name: string; input: Record<string, unknown>; display?: ToolDisplay | undefined };

/** The call's argv, when it is a command with a program. */
function argvOf(call: Call): { command: string; args: string[] } | undefined {
  const { command, args } = call.input;
  if (call.display?.result !== "output" || typeof command !== "string" || command === "") return undefined;
  return { command, args: Array.isArray(args) ? args.map(String) : [] };
}

/** The call's path, when it is one of the app's file tools working on one (its spec names no server, and its subject is a path). */
function pathOf(call: Call): string | undefined {
  const { path } = call.input;
  const subject = call.display?.subject;
  const fileTool = call.display?.server === undefined && subject !== undefined && subject !== "command" && subject !== "arguments";
  return fileTool && typeof path === "string" && path !== "" ? path : undefined;
}

/** The grant of this very call: its argv, its path, or its input. */
export function exactGrant(call: Call): Grant {
  const argv = argvOf(call);
  if (argv) return { kind: "command", ...argv, more: false };
  const path = pathOf(call);
  if (path !== undefined) return { kind: "path", tool: call.name, path };
  return { kind: "call", tool: call.name, input: call.input };
}

/**
 * The folders a path grant may widen to, nearest first, ending with the
 * project (`.`): the path's own folders, as its text names them.
 */
export function folderChoices(call: Call): string[] {
  const path = pathOf(call);
  if (path === undefined) return [];
  const parts: string[] = [];
  for (const part of path.split(/[/\\]/)) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  const folders: string[] = [];
  for (let n = parts.length - 1; n > 0; n--) folders.push(parts.slice(0, n).join("/"));
  return [...folders, "."];
}

/** A pattern's text (`cargo test *`): its words, a last `*` for any further arguments. */
export function patternText(grant: Extract<Grant, { kind: "command" }>): string {
  return [grant.command, ...grant.args, ...(grant.more ? ["*"] : [])].join(" ");
}

/** The text proposed for editing: the program and at most two plain words before any `--` (as a saved rule would take), then `*`. */
export function proposedPattern(call: Call): string | undefined {
  const argv = argvOf(call);
  if (!argv) return undefined;
  const words: string[] = [];
  for (const arg of argv.args) {
    if (words.length === 2 || arg === "--" || !/^[A-Za-z0-9_+@-]+$/.test(arg)) break;
    words.push(arg);
  }
  return [argv.command, ...words, "*"].join(" ");
}

/**
 * The command grant a pattern's text stands for: words split on spaces,
 * a last `*` meaning any further arguments (a `*` elsewhere is a word).
 * Undefined for an empty text.
 */
export function parsePattern(text: string): Extract<Grant, { kind: "command" }> | undefined {
  const words = text.split(" ").filter((word) => word !== "");
  const more = words.at(-1) === "*";
  if (more) words.pop();
  const [command, ...args] = words;
  if (command === undefined) return undefined;
  return { kind: "command", command, args, more };
}

/** Whether a command grant covers the call (as Rust judges it). */
export function patternCovers(grant: Extract<Grant, { kind: "command" }>, call: Call): boolean {
  const argv = argvOf(call);
  if (!argv || argv.command !== grant.command) return false;
  const prefix = grant.args.every((arg, i) => argv.args[i] === arg);
  return prefix && (grant.more ? argv.args.length >= grant.args.length : argv.args.length === grant.args.length);
}

/** One line saying what a grant covers. */
export function describeGrant(grant: Grant): string {
  switch (grant.kind) {
    case "command":
      return grant.more ? `commands starting with ${[grant.command, ...grant.args].join(" ")}` : `the command ${[grant.command, ...grant.args].join(" ")}`;
    case "path":
      return `${grant.tool} on ${grant.path}`;
    case "folder":
      return grant.folder === "." ? `${grant.tool} anywhere in the project` : `${grant.tool} in ${grant.folder}/`;
    case "call":
      return `${grant.tool} with exactly the input shown`;
  }
}
