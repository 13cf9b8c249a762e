// The `task` tool's calls: each starts a subagent, a fresh conversation of
// its own (its type's instructions, the task as its first message, a
// subset of the tools) run turn by turn like the loop's, and its final
// answer is the call's result. Its calls go through the same checks,
// approvals and tickets as the parent's, in the same conversation (so it
// never gets more than the mode allows), and Stop stops it. Read-only
// subagents called together run at the same time; the others one at a
// time. What it did is kept on the task's card (`ToolItem.subagent`), and
// its tokens count in the conversation's.
import { toWireError, wireError } from "../errors";
import type { FrameScheduler, OutputBuffer } from "../outputBuffer";
import type { Message, ToolResultBlock, ToolSpec, ToolUseBlock, WireError } from "../types";
import { Board } from "./board";
import type { LoopHooks } from "./hooks";
import { TokenEstimate } from "./context";
import type { InstructionSource } from "./instructions";
import { Outgoing } from "./outgoing";
import type { AgentIpc, Decision, RunControl } from "./ports";
import { offeredTools, type OfferedTool } from "./promptBudget";
import type { Item, ToolItem, Usage } from "./state";
import { type AgentType, BUILT_IN_AGENTS, isReadOnly, subagentPrompt, taskTool, toolsFor } from "./subagentTypes";
import { ToolRound } from "./toolRound";
import { ToolRunner } from "./toolRunner";
import { CANCELLED_TEXT, errorBlock, textBlock } from "./transcript";
import { streamTurn } from "./turnStream";
import { addUsage, isUsed, noUsage, usageSince } from "./usage";

/** Model turns one subagent may take before it is stopped and its last words are its answer. */
export const SUBAGENT_MAX_TURNS = 40;

type Parts = {
  ipc: AgentIpc;
  newId: () => string;
  /** The parent's board: the task cards and the conversation's usage. */
  board: Board;
  projectRoot: string;
  /** The parent's tools as last asked of Rust. */
  specs: () => ToolSpec[] | null;
  window: () => number;
  instructions: InstructionSource;
  /** The kinds of subagent there are (default: the built-ins). */
  types?: () => readonly AgentType[];
  turnId: () => string | undefined;
  conversation: () => string;
  granted: () => void;
  scheduleFrame?: FrameScheduler;
  /** The project's hooks, raised for a subagent's calls as for the parent's. */
  events?: LoopHooks;
};

type Started = { use: ToolUseBlock; type: AgentType; prompt: string };

/** The tool cards of `items` and of their subagents. */
export function everyCard(items: readonly Item[]): ToolItem[] {
  return items.flatMap((item) => (item.kind === "tool" ? [item, ...everyCard(item.subagent?.items ?? [])] : []));
}

export class Subagents {
  /** The runners of subagents running now: an approval answer goes to the one that asked. */
  private readonly runners = new Set<ToolRunner>();
  /** The live output of commands subagents ran, by card id, kept after they end. */
  private readonly outputs = new Map<string, OutputBuffer>();

  constructor(private readonly parts: Parts) {}

  get types(): readonly AgentType[] {
    return this.parts.types?.() ?? BUILT_IN_AGENTS;
  }

  /** The `task` tool, whole (a small window offers it as it offers the registry's tools). */
  tool(): OfferedTool {
    return taskTool(this.types);
  }

  /** Lets go of the live output of the conversation left. */
  forget(): void {
    this.outputs.clear();
  }

  /** The live output of a command a subagent ran. */
  outputFor(cardId: string): OutputBuffer | undefined {
    for (const runner of this.runners) {
      const output = runner.outputs.get(cardId);
      if (output) return output;
    }
    return this.outputs.get(cardId);
  }

  /** The user's answer to an approval card of a subagent. */
  decide(cardId: string, decision: Decision): void {
    for (const runner of this.runners) runner.decide(cardId, decision);
  }

  /**
   * One result per `task` call, in order: consecutive read-only subagents
   * run together, any other alone; calls not reached when Stop came are
   * cancelled.
   */
  async runAll(uses: ToolUseBlock[], control: RunControl, cardIds: Map<string, string>, cancel: (use: ToolUseBlock) => ToolResultBlock): Promise<ToolResultBlock[]> {
    const specs = this.parts.specs() ?? [];
    const results = new Map<ToolUseBlock, ToolResultBlock>();
    const card = (use: ToolUseBlock): string => cardIds.get(use.id) ?? use.id;
    const batches: Started[][] = [];
    let readers: Started[] = [];
    for (const use of uses) {
      const started = this.started(use);
      if ("error" in started) {
        this.parts.board.updateCard(card(use), { status: "failed", error: started.error });
        results.set(use, errorBlock(use, started.error));
        continue;
      }
      if (isReadOnly(started.type, specs)) {
        readers.push(started);
        continue;
      }
      if (readers.length > 0) batches.push(readers);
      readers = [];
      batches.push([started]);
    }
    if (readers.length > 0) batches.push(readers);
    for (const batch of batches) {
      if (control.cancelled) break;
      const answers = await Promise.all(batch.map((s) => this.run(s, card(s.use), specs, control)));
      batch.forEach((s, i) => results.set(s.use, answers[i]));
    }
    return uses.map((use) => results.get(use) ?? cancel(use));
  }

  /** The call's type and task, or why it cannot start. */
  private started(use: ToolUseBlock): Started | { error: WireError } {
    const { subagent_type: name, prompt } = use.input;
    const type = this.types.find((t) => t.name === name);
    if (!type) {
      const names = this.types.map((t) => t.name).join(", ");
      return { error: wireError("invalid_input", `There is no subagent type \`${String(name)}\`.`, `Use one of: ${names}.`) };
    }
    if (typeof prompt !== "string" || prompt.trim() === "") {
      return { error: wireError("invalid_input", "The task has no prompt.", "Give the subagent its task in full in `prompt`.") };
    }
    return { use, type, prompt };
  }

  /** Runs one subagent to its answer, showing its work under its card. */
  private async run({ use, type, prompt }: Started, cardId: string, parentSpecs: ToolSpec[], control: RunControl): Promise<ToolResultBlock> {
    const { ipc, newId, board, projectRoot, window } = this.parts;
    const specs = toolsFor(type, parentSpecs);
    const own = new Board(newId, () => undefined);
    // It runs on the conversation's model, at its price.
    own.patch({ price: board.get().price });
    let counted: Usage = noUsage();
    // Its items go on the card as they change; its tokens and cost into the conversation's.
    const unsubscribe = own.state.subscribe((state) => {
      const added = usageSince(state.usage, counted);
      counted = state.usage;
      if (isUsed(added)) {
        board.patch({ usage: addUsage(board.get().usage, added) });
      }
      board.updateCard(cardId, { subagent: { type: type.name, items: state.items, usage: state.usage } });
    });
    const outgoing = new Outgoing(projectRoot, window);
    const round = new ToolRound({ ipc, newId, board: own, outgoing, specs: () => specs, window, instructions: this.parts.instructions });
    const runner = new ToolRunner(ipc, {
      newId,
      scheduleFrame: this.parts.scheduleFrame,
      updateCard: (id, change) => own.updateCard(id, change),
      riskOf: (name) => specs.find((s) => s.name === name)?.risk ?? null,
      displayOf: (name) => specs.find((s) => s.name === name)?.display,
      inputError: (callId) => round.inputErrors.get(callId),
      turnId: this.parts.turnId,
      conversation: this.parts.conversation,
      granted: this.parts.granted,
      events: this.parts.events,
    });
    this.runners.add(runner);
    board.updateCard(cardId, { status: "running" });
    own.addItem({ kind: "user", id: newId(), text: prompt });
    // What its file asked for and does not get is said under its task.
    if (type.model) own.notice(`This subagent asks for the model \`${type.model}\`; it runs on the conversation's model (a subagent's own model is not supported yet).`);
    if (type.unknownTools?.length) own.notice(`Tools its file names that Corral does not have, left out: ${type.unknownTools.join(", ")}.`);
    try {
      const outcome = await this.turns(type, prompt, { own, outgoing, round, runner, specs }, control);
      if (control.cancelled) {
        board.updateCard(cardId, { status: "cancelled", error: wireError("cancelled", "Stopped by the user.") });
        return textBlock(use, CANCELLED_TEXT);
      }
      if ("error" in outcome) {
        board.updateCard(cardId, { status: "failed", error: outcome.error });
        return errorBlock(use, outcome.error);
      }
      board.updateCard(cardId, { status: "done", result: { subagent: type.name, answer: outcome.answer } });
      return { type: "tool_result", tool_use_id: use.id, content: outcome.answer };
    } catch (error) {
      const wire = toWireError(error);
      board.updateCard(cardId, { status: "failed", error: wire });
      return errorBlock(use, wire);
    } finally {
      this.runners.delete(runner);
      for (const [id, output] of runner.outputs) this.outputs.set(id, output);
      unsubscribe();
    }
  }

  /** The subagent's turns, until it answers without calling a tool. */
  private async turns(
    type: AgentType,
    prompt: string,
    its: { own: Board; outgoing: Outgoing; round: ToolRound; runner: ToolRunner; specs: ToolSpec[] },
    control: RunControl,
  ): Promise<{ answer: string } | { error: WireError }> {
    const { ipc, newId, projectRoot, window } = this.parts;
    const system = subagentPrompt(type, projectRoot);
    const estimate = new TokenEstimate();
    const streamParts = { ipc, newId, board: its.own, round: its.round, estimate, window, showMeter: () => undefined };
    let messages: Message[] = [{ role: "user", content: [{ type: "text", text: prompt }] }];
    let answer = "";
    for (let turn = 1; turn <= SUBAGENT_MAX_TURNS && !control.cancelled; turn++) {
      const tools = offeredTools(its.specs, window(), its.outgoing.requestedTools);
      const outcome = await streamTurn(streamParts, control, { system, messages, tools });
      if (outcome.error) return { error: outcome.error };
      if (!outcome.message) break;
      messages = [...messages, outcome.message];
      answer = outcome.message.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
      const uses = outcome.message.content.filter((b): b is ToolUseBlock => b.type === "tool_use");
      if (uses.length === 0) break;
      if (outcome.stopReason === "max_tokens") {
        messages = [...messages, { role: "user", content: uses.map((u) => its.round.cutOffCard(u)) }];
        continue;
      }
      const content = await its.round.run(uses, its.specs, control, its.runner);
      messages = [...messages, { role: "user", content }];
    }
    if (answer.trim() === "") {
      return { error: wireError("llm_bad_response", "The subagent ended without an answer.", "Start it again with a narrower task, or do the work here.") };
    }
    return { answer };
  }
}
