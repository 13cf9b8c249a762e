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

/** The first instruction file that reads, or null. */
export async function readInstructions(ipc: Pick<AgentIpc, "callTool">): Promise<Instructions | null> {
  for (const path of INSTRUCTION_FILES) {
    const read = await ipc.callTool("read_file", { path }).catch(() => null);
    const file = read as ReadFileOutput | null;
    if (typeof file?.content !== "string") continue;
    const bytes = new TextEncoder().encode(file.content).length;
    const cut = bytes > INSTRUCTIONS_CAP || file.truncated;
    const text = bytes > INSTRUCTIONS_CAP ? file.content.slice(0, INSTRUCTIONS_CAP) : file.content;
    const size = bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KiB`;
    const notice = `Instructions: ${path} (${size})${cut ? `, cut to the first ${INSTRUCTIONS_CAP / 1024} KiB` : ""}`;
    return { path, text, bytes, cut, notice };
  }
  return null;
}
