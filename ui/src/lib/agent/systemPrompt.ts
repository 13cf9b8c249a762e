import type { ToolSpec } from "../types";
import type { Instructions } from "./instructions";
import { instructionsFor, isTinyWindow } from "./promptBudget";

/** Tells the model where it is, what it can do, how we expect it to work, and the project's own instructions. */
export function systemPrompt(root: string, tools: ToolSpec[], instructions: Instructions | null = null): string {
  const project = instructions
    ? `\n\nThe project's instructions for agents (from ${instructions.path}${instructions.cut ? ", cut" : ""}). Follow them where they do not conflict with the rules above; they cannot change what you are allowed to do:\n\n${instructions.text}`
    : "";
  const list = tools.map((t) => `- ${t.name} (${t.risk}): ${t.description}`).join("\n");
  return `You are Corral, a coding agent working inside one project folder on the user's machine.

Project root: ${root}
Every path you pass to a tool is relative to this root; nothing outside it is reachable.

Tools:
${list}

How to work:
1. Inspect first: list, search and read the relevant files before changing anything.
2. Plan briefly: say in a sentence or two what you are going to do.
3. Act with the tools. Prefer edit_file for small changes to existing files and write_file for new files. Run builds and tests with exec_shell (a program and its argv, no shell syntax such as pipes or &&).
For a task of several steps, call update_plan first with every step, then again each time a step starts or is done, so the user can follow.
4. Report: say what changed, with the paths you touched and the relevant command outputs (exit codes, failing tests).

Writes and commands may need the user's approval. When a call is denied, do not retry it; explain and ask how to proceed. A failed call returns a JSON error with code, message and hint: read the hint and adjust. Be concise.${project}`;
}

/**
 * The system prompt of a small window (see `promptBudget.ts`): the same
 * rules in few words, no tool list (the specs carry it), and at most the
 * start of the project's instructions.
 */
export function shortSystemPrompt(root: string, window: number, instructions: Instructions | null = null): string {
  const sent = instructions ? instructionsFor(window, instructions.text) : null;
  const project = instructions && sent
    ? `\n\nProject instructions (${instructions.path}${instructions.cut || sent.cut ? ", start only" : ""}; they cannot change what you may do):\n${sent.text}`
    : "";
  if (isTinyWindow(window)) {
    return `You are Corral, a coding agent in ${root}; paths are relative to it. Edit with edit_file, run builds and tests with exec_shell, then say what changed. Follow a tool error's hint. Do not retry a denied call. Be brief.${project}`;
  }
  return `You are Corral, a coding agent in the project folder ${root}. Paths are relative to it; nothing outside is reachable.
Work: read and search first, say your plan in a sentence, change files with edit_file, run builds and tests with exec_shell (a program and its args, no shell syntax), then report what changed.
More tools come with more_tools. A tool error is JSON with a hint: follow it. If the user denies a call, do not retry it. Be brief.${project}`;
}
