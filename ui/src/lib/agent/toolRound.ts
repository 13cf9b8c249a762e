// One round of the model's tool calls, after its reply: the cards they are
// shown on, the calls answered without running (a tool offered by name only,
// a part of a paste, a skill loaded, a reply cut off, a stop), the calls the runner runs,
// and the AGENTS.md of folders the model read in, sent with the results.
import { wireError } from "../errors";
import type { Message, TextBlock, ToolResultBlock, ToolSpec, ToolUseBlock, WireError } from "../types";
import type { Board } from "./board";
import { resultCut } from "./cutNotices";
import { type InstructionSource, instructionsBlock } from "./instructions";
import type { Outgoing } from "./outgoing";
import { READ_PASTE } from "./pastes";
import { LOAD_SKILL, loadSkill } from "./skills";
import type { AgentIpc, RunControl } from "./ports";
import { isOnRequest, MORE_TOOLS, namesAskedFor, type OfferedTool } from "./promptBudget";
import { TASK } from "./subagentTypes";
import type { ToolRunner } from "./toolRunner";
import { CANCELLED_TEXT, textBlock } from "./transcript";

/** What a tool call of a reply cut off at its token limit gets instead of running. */
export const CUT_OFF_TEXT =
  "Not run: your reply was cut off at its token limit before it ended, so this call may be incomplete. Send it again in a shorter reply.";

type Parts = {
  ipc: AgentIpc;
  newId: () => string;
  board: Board;
  outgoing: Outgoing;
  /** The tools as last asked of Rust. */
  specs: () => ToolSpec[] | null;
  /** The model's context window as known now. */
  window: () => number;
  /** Finds the instructions of folders the model reads in. */
  instructions: InstructionSource;
  /** Runs the `task` calls (a subagent's own round has none). */
  subagents?: TaskRunner;
};

/**
 * What runs a round's `task` calls (`Subagents`): one result per call, in
 * order; `cancel` answers a call not reached. Said here, not imported, as
 * subagents run rounds of their own.
 */
export type TaskRunner = {
  runAll(uses: ToolUseBlock[], control: RunControl, cardIds: Map<string, string>, cancel: (use: ToolUseBlock) => ToolResultBlock): Promise<ToolResultBlock[]>;
};

export class ToolRound {
  /** Card ids of the current turn, by the provider's tool_use id. */
  cardIds = new Map<string, string>();
  /** Calls of the current turn whose input the model garbled, by tool_use id. */
  inputErrors = new Map<string, WireError>();
  /** Folders whose AGENTS.md was looked for in this conversation. */
  foldersSeen = new Set<string>();

  constructor(private readonly parts: Parts) {}

  /** A new turn: its calls get new cards. */
  startTurn(): void {
    this.cardIds = new Map();
    this.inputErrors = new Map();
  }

  /** Shows the call `callId` on its card, opened at its first sight and given its input as it comes. */
  openCard(callId: string, name: string, input: Record<string, unknown>): void {
    const { board, newId, specs } = this.parts;
    const existing = this.cardIds.get(callId);
    if (existing) {
      board.updateCard(existing, { input });
      return;
    }
    const id = newId();
    this.cardIds.set(callId, id);
    const spec = specs()?.find((s) => s.name === name);
    const shown = spec ? { display: spec.display } : {};
    board.addItem({ kind: "tool", id, callId, name, input, risk: spec?.risk ?? null, ...shown, status: "queued" });
  }

  /**
   * The results of the turn's calls, one per call in order, and the folder
   * instructions they brought: calls the runner need not run are answered
   * here, the others run unless the run was stopped: the tools' calls
   * first, then the subagents of its `task` calls.
   */
  async run(uses: ToolUseBlock[], specs: ToolSpec[], control: RunControl, runner: ToolRunner): Promise<(ToolResultBlock | TextBlock)[]> {
    const asked = this.askedTools(uses, this.parts.outgoing.tools(specs));
    for (const use of uses) if (use.name === LOAD_SKILL && !control.cancelled) asked.set(use, await this.loadSkill(use));
    const subagents = this.parts.subagents;
    const isTask = (use: ToolUseBlock): boolean => subagents !== undefined && use.name === TASK;
    const runnable = uses.filter((use) => !asked.has(use) && !isTask(use));
    const tasks = uses.filter(isTask);
    const cancel = (use: ToolUseBlock): ToolResultBlock => this.cancelCard(use);
    const ran = control.cancelled ? runnable.map(cancel) : await runner.runAll(runnable, control, this.cardIds, cancel);
    const delegated = control.cancelled || !subagents ? tasks.map(cancel) : await subagents.runAll(tasks, control, this.cardIds, cancel);
    const results = uses.map((use) => asked.get(use) ?? (isTask(use) ? delegated[tasks.indexOf(use)] : ran[runnable.indexOf(use)]));
    return [...results, ...(await this.folderInstructions(uses))];
  }

  /**
   * The cards of this turn whose results in `message` (the round's results,
   * as fitted for the next request) were cut to fit the window say how much
   * of them the model receives.
   */
  noteCuts(message: Message | undefined): void {
    if (message?.role !== "user") return;
    const { board } = this.parts;
    for (const block of message.content) {
      const id = block.type === "tool_result" ? this.cardIds.get(block.tool_use_id) : undefined;
      const card = id === undefined ? undefined : board.get().items.find((item) => item.id === id);
      if (block.type !== "tool_result" || card?.kind !== "tool") continue;
      const cut = resultCut(block, card.name);
      if (cut && (card.cut?.received !== cut.received || card.cut.total !== cut.total)) board.updateCard(card.id, { cut });
    }
  }

  /** The answer to a call of a reply cut off at its token limit: it does not run. */
  cutOffCard(use: ToolUseBlock): ToolResultBlock {
    const id = this.cardIds.get(use.id);
    if (id) this.parts.board.updateCard(id, { status: "cancelled", error: wireError("cancelled", "Not run: the reply was cut off at its token limit.") });
    return textBlock(use, CUT_OFF_TEXT);
  }

  private cancelCard(use: ToolUseBlock): ToolResultBlock {
    const id = this.cardIds.get(use.id);
    if (id) this.parts.board.updateCard(id, { status: "cancelled", error: wireError("cancelled", "Cancelled by the user.") });
    return textBlock(use, CANCELLED_TEXT);
  }

  /**
   * The calls of tools offered by name only: none runs; each gets a
   * result saying its parameters are offered now, and is from then on.
   */
  private askedTools(uses: ToolUseBlock[], specs: readonly OfferedTool[]): Map<ToolUseBlock, ToolResultBlock> {
    const { board, outgoing } = this.parts;
    const asked = new Map<ToolUseBlock, ToolResultBlock>();
    for (const use of uses) {
      if (use.name === READ_PASTE) {
        // The conversation's own text: nothing is touched, nothing asks.
        const answer = outgoing.pastes.answer(use);
        asked.set(use, answer);
        const id = this.cardIds.get(use.id);
        if (id) board.updateCard(id, { status: answer.is_error ? "failed" : "done", result: { part: use.input.part } });
        continue;
      }
      if (use.name === MORE_TOOLS) {
        asked.set(use, this.moreTools(use, specs));
        continue;
      }
      if (!isOnRequest(use.name, this.parts.window(), specs, outgoing.requestedTools)) continue;
      const text = `Not run: ${use.name}'s parameters are offered now. Call it again with them.`;
      asked.set(use, { type: "tool_result", tool_use_id: use.id, content: text });
      outgoing.requestedTools.add(use.name);
      const id = this.cardIds.get(use.id);
      if (id) board.updateCard(id, { status: "done", result: { offered: use.name } });
    }
    return asked;
  }

  /** A skill the model loads: read now, answered here (nothing changes, nothing asks). */
  private async loadSkill(use: ToolUseBlock): Promise<ToolResultBlock> {
    const answer = await loadSkill(this.parts.ipc, this.parts.outgoing.skills ?? [], use);
    const id = this.cardIds.get(use.id);
    if (id) this.parts.board.updateCard(id, { status: answer.is_error ? "failed" : "done", result: { skill: use.input.name ?? null, file: use.input.file ?? null } });
    return answer;
  }

  /**
   * A `more_tools` call: the tools it names are offered whole from the
   * next request on; a name that is no tool is said, with the names there are.
   */
  private moreTools(use: ToolUseBlock, specs: readonly OfferedTool[]): ToolResultBlock {
    const { board, outgoing } = this.parts;
    const names = namesAskedFor(use.input);
    const offered = names.filter((name) => specs.some((spec) => spec.name === name));
    const unknown = names.filter((name) => !offered.includes(name));
    for (const name of offered) outgoing.requestedTools.add(name);
    const lines = [
      ...(offered.length > 0 ? [`Offered now with their parameters: ${offered.join(", ")}. Call them as you need.`] : []),
      ...(unknown.length > 0 || names.length === 0
        ? [`${unknown.length > 0 ? `No tool is named ${unknown.join(", ")}.` : "Give the tools' names in names."} The tools are: ${specs.map((s) => s.name).join(", ")}.`]
        : []),
    ];
    const failed = offered.length === 0;
    const id = this.cardIds.get(use.id);
    if (id) board.updateCard(id, failed ? { status: "failed", error: wireError("invalid_input", lines.join(" ")) } : { status: "done", result: { offered } });
    return { type: "tool_result", tool_use_id: use.id, content: lines.join(" "), ...(failed ? { is_error: true } : {}) };
  }

  /** The AGENTS.md of folders the model just read files in, as text blocks for it. */
  private async folderInstructions(uses: ToolUseBlock[]): Promise<TextBlock[]> {
    const blocks: TextBlock[] = [];
    for (const use of uses) {
      if (use.name !== "read_file" || typeof use.input.path !== "string") continue;
      for (const found of await this.parts.instructions.folder(this.parts.ipc, use.input.path, this.foldersSeen)) {
        this.parts.board.notice(found.notice, found.text);
        blocks.push({ type: "text", text: instructionsBlock(found) });
      }
    }
    return blocks;
  }
}
