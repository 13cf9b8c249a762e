// Skills as Claude Code writes them: a folder with a SKILL.md whose front
// matter names the skill and says when to use it. The model is told each
// skill's name and description in the system prompt (as many as its window
// has room for); the body is read only when the model loads the skill with
// `load_skill`, a tool the loop answers itself through Rust (which reads
// the project's skills beneath its root and the user's where they are). A
// small window is told of them in the tool's description alone.
// Loading a skill changes nothing, so it asks nothing.
import type { Customization, SetupSource, SkillFile, ToolResultBlock, ToolUseBlock } from "../types";
import type { AgentIpc } from "./ports";
import { isSmallWindow, type OfferedTool } from "./promptBudget";
import { single, splitFrontMatter } from "./frontMatter";

/** A skill as the model is told of it. */
export type Skill = {
  name: string;
  description: string;
  source: SetupSource;
  /** Its folder's name, what Rust finds it by. */
  folder: string;
  /** Where its SKILL.md is, as the user knows it. */
  path: string;
  /** The folder's other files, relative to it. */
  files: string[];
};

export const LOAD_SKILL = "load_skill";

/** The tool, offered while the conversation has skills (a large window's form). */
export const LOAD_SKILL_TOOL: OfferedTool = {
  name: LOAD_SKILL,
  description:
    "Load a skill's instructions by its name (the system prompt lists the skills) before doing the task it is for; {} lists every skill. With file, reads one of the skill's other files.",
  input_schema: { type: "object", properties: { name: { type: "string" }, file: { type: "string" } } },
};

/**
 * The tool as a request offers it. A small window's prefix has room for
 * little more than its core tools (a 4k window's is within some 60 tokens
 * of its 1,200, and a skill's name costs several), so there the tool says
 * only how many skills there are, and `{}` lists them with their
 * descriptions; the system prompt says nothing more.
 */
export function skillTool(skills: readonly Skill[], window: number): OfferedTool {
  if (!isSmallWindow(window)) return LOAD_SKILL_TOOL;
  return {
    name: LOAD_SKILL,
    description: `Load a skill before a task it fits; {} lists ${skills.length === 1 ? "it" : `all ${skills.length}`}.`,
    input_schema: { type: "object", properties: { name: { type: "string" } } },
  };
}

/** The longest description a large window is sent per skill, in characters. */
export const SKILL_DESCRIPTION_CHARS = 300;
/** The most of the prompt a large window gives the list of skills, in characters (about 1,500 tokens). */
export const SKILLS_CHARS = 6_000;
/**
 * The listed skills, named by their front matter's `name` (else their
 * folder's); a name already taken (the project's come first) is left out,
 * so the project's skill is the one loaded.
 */
export function skillsOf(listing: Pick<Customization, "skills">): Skill[] {
  const skills: Skill[] = [];
  for (const found of listing.skills) {
    const { values, body } = splitFrontMatter(found.text);
    const named = single(values.get("name")) ?? "";
    const name = /^[\w.:-]+$/.test(named) ? named : found.folder;
    if (skills.some((skill) => skill.name === name)) continue;
    const written = single(values.get("description")) ?? "";
    const description = written !== "" ? written : (body.split("\n").find((line) => line.trim() !== "")?.replace(/^#+\s*/, "").trim() ?? "");
    skills.push({ name, description, source: found.source, folder: found.folder, path: found.path, files: found.files });
  }
  return skills;
}

/**
 * What the system prompt of a large window says of the skills: each one's
 * name and description (cut) until its share is used, then a count of the
 * rest, and how to load one and list them all. A small window is told of
 * them by the tool alone (`skillTool`).
 */
export function skillsPrompt(skills: readonly Skill[], window: number): string {
  if (skills.length === 0 || isSmallWindow(window)) return "";
  const head = `\n\nSkills: instructions for particular tasks, kept out of this prompt until needed. When a task matches a skill's description, call ${LOAD_SKILL} with its name first and follow what it says; ${LOAD_SKILL} with {} lists every skill.`;
  const lines = skills.map((skill) => `- ${skill.name}: ${cut(skill.description, SKILL_DESCRIPTION_CHARS)}`);
  const listed = fitting(lines, SKILLS_CHARS);
  const rest = skills.length - listed.length;
  return `${head}\n${listed.join("\n")}${rest > 0 ? `\n- …and ${rest} more (${LOAD_SKILL} {} lists them)` : ""}`;
}

/** The answer to a `load_skill` call: the skill's body and its files, one of its files, or the list. */
export async function loadSkill(ipc: Pick<AgentIpc, "skillFile">, skills: readonly Skill[], use: ToolUseBlock): Promise<ToolResultBlock> {
  const answer = (content: string, is_error = false): ToolResultBlock => ({ type: "tool_result", tool_use_id: use.id, content, ...(is_error ? { is_error } : {}) });
  const name = typeof use.input.name === "string" ? use.input.name.trim() : "";
  if (name === "") return answer(skillList(skills));
  const skill = skills.find((s) => s.name === name) ?? skills.find((s) => s.name.toLowerCase() === name.toLowerCase());
  if (!skill) return answer(`There is no skill "${name}". ${skillList(skills)}`, true);
  const file = typeof use.input.file === "string" && use.input.file.trim() !== "" ? use.input.file.trim() : undefined;
  let read: SkillFile;
  try {
    read = await ipc.skillFile(skill.source, skill.folder, file);
  } catch (error) {
    const why = (error as { message?: unknown })?.message;
    const files = skill.files.length > 0 ? ` Its files: ${skill.files.join(", ")}.` : "";
    return answer(`Could not read ${file ?? "SKILL.md"} of the skill ${skill.name}: ${typeof why === "string" ? why : String(error)}.${files}`, true);
  }
  if (file !== undefined) return answer(`[File ${file} of the skill ${skill.name} (${read.path})]\n${read.content}`);
  return answer(`[Skill ${skill.name} (${read.path}): follow these instructions for the task]\n\n${splitFrontMatter(read.content).body.trim()}${filesNote(skill)}`);
}

/** What the model is told of a skill's other files, and how to read them. */
function filesNote(skill: Skill): string {
  if (skill.files.length === 0) return "";
  const read = `Read one with ${LOAD_SKILL} {"name": "${skill.name}", "file": "<file>"}`;
  const where =
    skill.source === "project"
      ? `${read}, or read_file at ${skill.path.replace(/SKILL\.md$/, "")}<file>; its scripts run with exec_shell like any file of the project.`
      : `${read}. The folder is the user's, outside the project, so its scripts cannot be run.`;
  return `\n\n[The skill's folder also holds: ${skill.files.join(", ")}. ${where}]`;
}

function skillList(skills: readonly Skill[]): string {
  if (skills.length === 0) return "There are no skills.";
  return `The skills:\n${skills.map((skill) => `- ${skill.name}: ${cut(skill.description, SKILL_DESCRIPTION_CHARS)}`).join("\n")}`;
}

function cut(text: string, chars: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length <= chars ? line : `${line.slice(0, chars - 1).trimEnd()}…`;
}

/** The lines, from the first, that fit in `cap` characters together. */
function fitting(lines: readonly string[], cap: number): string[] {
  const kept: string[] = [];
  let used = 0;
  for (const line of lines) {
    if (used + line.length + 1 > cap) break;
    kept.push(line);
    used += line.length + 1;
  }
  return kept;
}
