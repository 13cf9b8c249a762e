// The project's own subagents, Claude Code's `.claude/agents/*.md`: a
// front matter with `name`, `description`, `tools` (Claude's tool names or
// Corral's, comma-separated or a list; none: every tool) and `model`, and
// the body as the subagent's instructions. Read through list_directory
// and read_file, like the project's commands, so the same confinement
// applies. Claude's tool names are Rust's table (the hooks'), sent with
// the customization.
import type { Customization, ListDirectoryOutput, ReadFileOutput } from "../types";
import { listOf, single, splitFrontMatter } from "./frontMatter";
import type { AgentIpc } from "./ports";
import { type AgentType, BUILT_IN_AGENTS } from "./subagentTypes";

/** The project's agents folder, as Claude Code lays it out. */
export const PROJECT_AGENTS = ".claude/agents";
/** The most agent files read from the folder. */
export const MAX_AGENT_FILES = 50;

/** Claude Code's tool names and Corral's (`Bash`: `exec_shell`), as Rust sends them (`Customization.claude_tools`). */
export type ClaudeTools = NonNullable<Customization["claude_tools"]>;

/** Finds the kinds of subagent there are, given the names of the tools there are; the loop's seam. */
export type AgentFinder = (ipc: Pick<AgentIpc, "callTool" | "customization">, known: readonly string[]) => Promise<AgentType[]>;

/** Only the built-ins (the loop's default: a host adds the project's with `projectAgents`). */
export const builtInAgents: AgentFinder = async () => [...BUILT_IN_AGENTS];

/**
 * A subagent from its file's text; null when the file names none. Tool
 * names neither Claude's (`claude`) nor Corral's are left out and said in
 * `unknown`.
 */
export function parseAgent(path: string, text: string, known: readonly string[], claude: ClaudeTools = {}): (AgentType & { unknown: string[] }) | null {
  const { values, body, opened, problem } = splitFrontMatter(text);
  if (!opened || problem !== undefined) return null;
  const base = path.split("/").pop()?.replace(/\.md$/i, "") ?? "";
  const name = single(values.get("name")) ?? base;
  const description = single(values.get("description"));
  const prompt = body.trim();
  if (!/^[a-z0-9][a-z0-9_-]*$/i.test(name) || !description || prompt === "") return null;
  const listed = values.get("tools");
  const named = listed === undefined ? null : listOf(listed);
  const corral = (n: string): string | undefined => (Object.prototype.hasOwnProperty.call(claude, n) ? claude[n] : undefined);
  const tools = named === null ? "all" : named.flatMap((n) => corral(n) ?? (known.includes(n) ? [n] : []));
  const unknown = named === null ? [] : named.filter((n) => corral(n) === undefined && !known.includes(n));
  const model = single(values.get("model"));
  return { name, description, prompt, tools, ...(model && model !== "inherit" ? { model } : {}), source: path, unknown };
}

/**
 * The built-in subagents and the project's: a project's agent of a
 * built-in's name replaces it, as Claude Code lets the project's win.
 */
export const projectAgents: AgentFinder = async (ipc, known) => {
  const listing = (await ipc.callTool("list_directory", { path: PROJECT_AGENTS }).catch(() => null)) as ListDirectoryOutput | null;
  const files = (listing?.entries ?? []).filter((e) => e.kind === "file" && e.path.toLowerCase().endsWith(".md")).slice(0, MAX_AGENT_FILES);
  // Claude's tool names, asked only when there are agent files to read.
  const claude: ClaudeTools = files.length === 0 ? {} : ((await ipc.customization().catch(() => null))?.claude_tools ?? {});
  const found: AgentType[] = [];
  for (const file of files) {
    const read = (await ipc.callTool("read_file", { path: file.path }).catch(() => null)) as ReadFileOutput | null;
    const agent = typeof read?.content === "string" ? parseAgent(file.path, read.content, known, claude) : null;
    if (agent && !found.some((a) => a.name === agent.name)) found.push(withoutUnknown(agent));
  }
  return [...BUILT_IN_AGENTS.filter((b) => !found.some((a) => a.name === b.name)), ...found];
};

/** The agent as the loop keeps it: the tools it named that are not there are said in its description. */
function withoutUnknown({ unknown, ...agent }: AgentType & { unknown: string[] }): AgentType {
  return unknown.length === 0 ? agent : { ...agent, unknownTools: unknown };
}
