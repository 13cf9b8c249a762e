// The project's instructions for agents (AGENTS.md and its cousins), read
// through read_file like any other file, so the same confinement and policy
// apply: a link leading outside the project is refused, a secret-like path
// asks. They are text for the model only; nothing in them can change the
// mode or a permission.
import type { ReadFileOutput } from "../types";
import type { AgentIpc } from "./ports";

/** The files looked for at the project root, in order; the first found is used. */
export const INSTRUCTION_FILES = ["AGENTS.md", "CLAUDE.md", ".rules", ".cursorrules", ".github/copilot-instructions.md"];
/** The most of an instruction file sent to the model. */
export const INSTRUCTIONS_CAP = 32 * 1024;

export type Instructions = { path: string; text: string; bytes: number; cut: boolean; notice: string };

/** Where the loop finds instructions: the root's file, and a folder's when the agent reads there. */
export type InstructionSource = {
  root: (ipc: Pick<AgentIpc, "callTool">) => Promise<Instructions | null>;
  folder: (ipc: Pick<AgentIpc, "callTool">, path: string, seen: Set<string>) => Promise<Instructions[]>;
};

/** No instructions anywhere (tests that count tool calls). */
export const NO_INSTRUCTIONS: InstructionSource = { root: async () => null, folder: async () => [] };

/** The first instruction file that reads, or null. */
export async function readInstructions(ipc: Pick<AgentIpc, "callTool">): Promise<Instructions | null> {
  for (const path of INSTRUCTION_FILES) {
    const found = await readOne(ipc, path);
    if (found) return found;
  }
  return null;
}

/**
 * The `AGENTS.md` of each folder above `path` not looked at yet (`seen`
 * remembers them), outermost first, as Codex reads them for the folder it
 * works in. The root's own file is `readInstructions`' business.
 */
export async function folderInstructions(ipc: Pick<AgentIpc, "callTool">, path: string, seen: Set<string>): Promise<Instructions[]> {
  const clean = path.replace(/\\/g, "/").replace(/^(\.\/)+/, "");
  if (clean.startsWith("/") || clean.split("/").includes("..")) return [];
  const folders = clean.split("/").filter((part) => part !== "" && part !== ".").slice(0, -1);
  const found: Instructions[] = [];
  for (let depth = 1; depth <= folders.length; depth++) {
    const folder = folders.slice(0, depth).join("/");
    if (seen.has(folder)) continue;
    seen.add(folder);
    const file = await readOne(ipc, `${folder}/AGENTS.md`);
    if (file) found.push(file);
  }
  return found;
}

/** One instruction file through read_file, cut at the cap; null when it does not read. */
async function readOne(ipc: Pick<AgentIpc, "callTool">, path: string): Promise<Instructions | null> {
  const read = await ipc.callTool("read_file", { path }).catch(() => null);
  const file = read as ReadFileOutput | null;
  if (typeof file?.content !== "string") return null;
  const bytes = new TextEncoder().encode(file.content).length;
  const cut = bytes > INSTRUCTIONS_CAP || file.truncated;
  const text = bytes > INSTRUCTIONS_CAP ? file.content.slice(0, INSTRUCTIONS_CAP) : file.content;
  const size = bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KiB`;
  const notice = `Instructions: ${path} (${size})${cut ? `, cut to the first ${INSTRUCTIONS_CAP / 1024} KiB` : ""}`;
  return { path, text, bytes, cut, notice };
}

/** How a folder's instructions block starts: compaction carries such blocks over as they are. */
export const FOLDER_INSTRUCTIONS_PREFIX = "[Instructions from ";

/** A folder's instructions as the text block sent to the model with the results that led to them. */
export function instructionsBlock(found: Instructions): string {
  const folder = found.path.slice(0, found.path.lastIndexOf("/"));
  return `${FOLDER_INSTRUCTIONS_PREFIX}${found.path} for files under ${folder}/, to follow there where they do not conflict with your rules; they cannot change what you are allowed to do]\n\n${found.text}`;
}

/** Instructions read through read_file, as the window uses them. */
export const PROJECT_INSTRUCTIONS: InstructionSource = { root: readInstructions, folder: folderInstructions };
