// The kinds of subagent the `task` tool can start: the built-ins (explore,
// plan) and what the tool tells the model of them, sized to the window.
// A subagent is a fresh conversation with its own instructions and a
// subset of the parent's tools; it never gets `task` itself.
import type { ToolSpec } from "../types";
import type { OfferedTool } from "./promptBudget";

/** The tool that starts a subagent (Claude Code's name and input keys). */
export const TASK = "task";

/**
 * A kind of subagent. `tools`: the tools it may call, by name, or every
 * tool that only reads, or every tool. `model`: the model it asks for,
 * when it names one. `source`: where it was defined ("built-in", or its
 * file). `unknownTools`: tools its file named that are not there.
 */
export type AgentType = {
  name: string;
  description: string;
  prompt: string;
  tools: readonly string[] | "read-only" | "all";
  model?: string;
  source: string;
  unknownTools?: string[];
};

export const EXPLORE: AgentType = {
  name: "explore",
  description:
    "Explores the code read-only: lists, searches and reads files, and reports what it found concisely, with paths. Use it for a question that needs many searches or reads, so their output stays out of this conversation.",
  prompt:
    "You explore a codebase to answer one question. You can only read: list, search and read files. Search broadly first, then read what matters. Report your findings concisely: the answer first, then the paths (with line numbers) that support it. Do not paste whole files.",
  tools: "read-only",
  source: "built-in",
};

export const PLAN: AgentType = {
  name: "plan",
  description:
    "Plans a change read-only: studies the code involved and returns a numbered implementation plan naming the files and functions to change, and how to test it.",
  prompt:
    "You plan a change to a codebase. You can only read: list, search and read files. Study the code the change touches, then answer with a numbered plan: each step names the files and functions to change and what to change in them; then how to test it. Note risks and open questions in a line or two. Change nothing.",
  tools: "read-only",
  source: "built-in",
};

export const BUILT_IN_AGENTS: readonly AgentType[] = [EXPLORE, PLAN];

/** The most characters the tool's description gives the list of subagent types. */
export const TYPE_LIST_CHARS = 2_000;
/** The most characters one type's description takes in that list. */
const TYPE_LINE_CHARS = 240;

/**
 * Tools that only read but act on the parent's work: the plan the user
 * follows and the parent's running commands. A read-only type gets neither.
 */
const PARENTS_TOOLS: readonly string[] = ["update_plan", "stop_command"];

/** The tools a subagent of `type` is offered: never `task`, and for a read-only type only tools that read. */
export function toolsFor(type: AgentType, specs: readonly ToolSpec[]): ToolSpec[] {
  const { tools } = type;
  const given = (spec: ToolSpec): boolean =>
    tools === "all" ? true : tools === "read-only" ? spec.risk === "read" && !PARENTS_TOOLS.includes(spec.name) : tools.includes(spec.name);
  return specs.filter((spec) => spec.name !== TASK && given(spec));
}

/** Whether every tool of a subagent of `type` only reads: such subagents run at the same time. */
export function isReadOnly(type: AgentType, specs: readonly ToolSpec[]): boolean {
  return toolsFor(type, specs).every((spec) => spec.risk === "read");
}

/**
 * The `task` tool, its types listed within `TYPE_LIST_CHARS`. A small
 * window names it in `more_tools` with the registry's tools, and offers it
 * compact once asked for, as it offers them (its first sentence, and its
 * schema, whose `subagent_type` lists the types' names).
 */
export function taskTool(types: readonly AgentType[]): OfferedTool {
  const schema = {
    type: "object",
    properties: {
      subagent_type: { type: "string", enum: types.map((t) => t.name), description: "Which kind of subagent to start." },
      description: { type: "string", description: "The task in three to five words, shown to the user." },
      prompt: {
        type: "string",
        description: "The task in full. The subagent sees nothing of this conversation: say everything it needs, and what its answer should contain.",
      },
    },
    required: ["subagent_type", "prompt"],
  };
  return {
    name: TASK,
    description:
      "Starts a subagent on a task; its final report is the result. It is a fresh conversation with its own instructions and tools that works on the task alone, and it sees nothing of this conversation, so the prompt must carry everything it needs. Several read-only subagents called in one reply run at the same time; use them for independent questions.\n\nSubagent types:\n" +
      typeList(types),
    input_schema: schema,
  };
}

/** One line per type, cut to fit `TYPE_LIST_CHARS`; the types left out are named. */
function typeList(types: readonly AgentType[]): string {
  const lines: string[] = [];
  let used = 0;
  for (const [i, type] of types.entries()) {
    const described = type.description.length > TYPE_LINE_CHARS ? `${type.description.slice(0, TYPE_LINE_CHARS - 1)}…` : type.description;
    const line = `- ${type.name}: ${described}`;
    if (used + line.length > TYPE_LIST_CHARS) {
      lines.push(`- also: ${types.slice(i).map((t) => t.name).join(", ")}`);
      break;
    }
    lines.push(line);
    used += line.length + 1;
  }
  return lines.join("\n");
}

/** What a subagent of `type` is told, before the task: its role, then where it works and how its answer is used. */
export function subagentPrompt(type: AgentType, root: string): string {
  return `${type.prompt}

You are a subagent of Corral, a coding agent, working inside the project folder ${root}. Every path you pass to a tool is relative to it; nothing outside it is reachable. The main agent gave you one task; only your final message goes back to it, and the user does not see the rest. Use your tools, then end with your answer as plain text. A failed call returns a JSON error with a hint: follow it. If a call is denied, do not retry it; say so in your answer.`;
}
