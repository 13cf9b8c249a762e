// How a grant reads, and the pattern the user edits. What "Allow in this
// conversation" may grant for a call is Rust's to say, with the call's
// ticket (crates/corral-session/src/grants.rs, `choices`): this very call
// (its argv, its path or its input), the folders a path grant may widen
// to, the pattern proposed for a command and every pattern that covers it.
// Rust holds only a grant that covers the call it comes with, and enforces
// it. Here the choices are only shown, and an edited pattern read.
import type { Grant, Ticket } from "./types";

type CommandGrant = Extract<Grant, { kind: "command" }>;

/** What a call's ticket says may be granted for it, kept on its card. */
export type GrantChoices = Pick<Ticket, "exact_grant" | "grant_folders" | "grant_link" | "proposed_pattern" | "covering_patterns">;

/** The ticket's grant choices, those it has; undefined when it has none. */
export function grantChoicesOf(ticket: Ticket): GrantChoices | undefined {
  const { exact_grant, grant_folders, grant_link, proposed_pattern, covering_patterns } = ticket;
  const choices: GrantChoices = {
    ...(exact_grant ? { exact_grant } : {}),
    ...(grant_folders ? { grant_folders } : {}),
    ...(grant_link !== undefined ? { grant_link } : {}),
    ...(proposed_pattern ? { proposed_pattern } : {}),
    ...(covering_patterns ? { covering_patterns } : {}),
  };
  return Object.keys(choices).length === 0 ? undefined : choices;
}

/** A pattern's text (`cargo test *`): its words, a last `*` for any further arguments. */
export function patternText(grant: CommandGrant): string {
  return [grant.command, ...grant.args, ...(grant.more ? ["*"] : [])].join(" ");
}

/**
 * The command grant a pattern's text stands for: words split on spaces,
 * a last `*` meaning any further arguments (a `*` elsewhere is a word).
 * Undefined for an empty text.
 */
export function parsePattern(text: string): CommandGrant | undefined {
  const words = text.split(" ").filter((word) => word !== "");
  const more = words.at(-1) === "*";
  if (more) words.pop();
  const [command, ...args] = words;
  if (command === undefined) return undefined;
  return { kind: "command", command, args, more };
}

/** The one of `offered` (the patterns Rust says cover the call) that `pattern` is, if any. */
export function offeredPattern(pattern: CommandGrant, offered: readonly Grant[] | undefined): CommandGrant | undefined {
  const same = (g: Grant): g is CommandGrant =>
    g.kind === "command" && g.command === pattern.command && g.more === pattern.more && g.args.length === pattern.args.length && g.args.every((arg, i) => arg === pattern.args[i]);
  return offered?.find(same);
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
