// The slash commands Corral itself answers, typed in the box as `/name`:
// they act on the conversation or the window and are never sent to the
// model. A built-in's name wins over a custom command of the same name,
// as in Claude Code. Where each runs: the window runs them all; exec, one
// task with no window, runs `/compact` (on the conversation it resumes)
// and refuses the others with a clear error.
import { parseInvocation } from "./slashCommands";

export type BuiltInName = "compact" | "new" | "model" | "undo" | "changes" | "settings" | "task" | "usage";

export type BuiltIn = {
  name: BuiltInName;
  description: string;
  argumentHint?: string;
  /** Whether `corral-cli exec` can run it (it has no window). */
  headless: boolean;
};

export const BUILT_INS: readonly BuiltIn[] = [
  { name: "compact", description: "Summarize the older part of the conversation now, to free the window", headless: true },
  { name: "new", description: "Start a new conversation (this one stays in the history)", headless: false },
  { name: "model", description: "Choose the model for this conversation", headless: false },
  { name: "undo", description: "Put the project's files back as they were before the last message (shows the changes first)", headless: false },
  { name: "changes", description: "Show every file this conversation changed", headless: false },
  { name: "settings", description: "Open the settings", headless: false },
  {
    name: "task",
    description: "Start a task: the agent works on it in a worktree of its own, beside this conversation",
    argumentHint: "<what to do>",
    headless: false,
  },
  { name: "usage", description: "Show the tokens and cost of this conversation, and of every day", headless: false },
];

/**
 * The built-in `text` invokes, with what follows its name (`args`), or
 * null: one that takes no arguments (no `argumentHint`) must stand alone.
 */
export function builtInOf(text: string): (BuiltIn & { args: string }) | null {
  const invocation = parseInvocation(text);
  if (invocation === null) return null;
  const builtIn = BUILT_INS.find((b) => b.name === invocation.name);
  const args = invocation.args.trim();
  if (builtIn === undefined || (args !== "" && builtIn.argumentHint === undefined)) return null;
  return { ...builtIn, args };
}
