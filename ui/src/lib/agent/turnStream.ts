// One model turn as it streams in: the reply's text and tool calls shown as
// they come (the calls on their cards), the server's progress through the
// prompt, its retries and its count of the tokens, and the turn's outcome.
// A turn that fails is taken off the window whole; Retry sends it again.
import { toWireError } from "../errors";
import type { LlmEvent, LlmRequest, Message, WireError } from "../types";
import { StreamAssembler } from "./assembler";
import type { Board } from "./board";
import { replyLimit, type TokenEstimate } from "./context";
import type { AgentIpc, RunControl } from "./ports";
import type { ToolRound } from "./toolRound";
import { addUsage, requestUsage } from "./usage";

export type TurnOutcome = { message: Message | null; stopReason: string; error: WireError | null };

type Parts = {
  ipc: AgentIpc;
  newId: () => string;
  board: Board;
  round: ToolRound;
  estimate: TokenEstimate;
  /** The model's context window as known now. */
  window: () => number;
  showMeter: (used: number) => void;
};

/** Streams the reply to `request` (its reply limit set here), showing it as it comes. */
export async function streamTurn(parts: Parts, control: RunControl, request: LlmRequest): Promise<TurnOutcome> {
  const { ipc, board, round, estimate } = parts;
  const runId = parts.newId();
  const assembler = new StreamAssembler();
  const textId = parts.newId();
  round.startTurn();
  board.addItem({ kind: "assistant", id: textId, text: "", streaming: true });
  let stopReason = "";
  let error: WireError | null = null;

  let hook = (): void => undefined;
  const cancelled = new Promise<void>((resolve) => {
    hook = () => {
      void ipc.cancel(runId).catch(() => undefined);
      resolve();
    };
  });
  control.hooks.add(hook);

  board.patch({ waiting: { since: Date.now() } });
  let reportedInput = 0;
  const onEvent = (event: LlmEvent): void => {
    if (control.cancelled) return;
    assembler.apply(event);
    if (event.type === "prompt_progress") {
      board.patch({ waiting: { since: board.get().waiting?.since ?? Date.now(), processed: event.processed, total: event.total } });
      return;
    }
    if (event.type !== "retrying" && event.type !== "usage" && board.get().waiting) board.patch({ waiting: null });
    if (event.type !== "retrying" && board.get().retrying) board.patch({ retrying: null });
    switch (event.type) {
      case "text_delta":
        board.updateItem(textId, (item) => ({ ...item, text: assembler.text }));
        return;
      case "reasoning_delta":
        board.updateItem(textId, (item) => ({ ...item, reasoning: assembler.reasoning }));
        return;
      case "tool_call_start":
        round.openCard(event.id, event.name, {});
        return;
      case "tool_call_end":
        if (event.input_error) round.inputErrors.set(event.id, event.input_error);
        round.openCard(event.id, event.name, event.input ?? {});
        return;
      case "usage": {
        reportedInput += event.input_tokens;
        // Priced as the request ends, at the model's price then.
        const { usage, price } = board.get();
        board.patch({ usage: addUsage(usage, requestUsage(event, price)) });
        return;
      }
      case "retrying":
        board.patch({ retrying: { attempt: event.attempt, delay_ms: event.delay_ms, error: event.error } });
        return;
      case "done":
        stopReason = event.stop_reason;
        return;
      case "error":
        error = event.error;
        return;
      case "tool_call_delta":
        return;
    }
  };

  // Request and reply together inside the window (the fitting made room).
  request.max_tokens = replyLimit(parts.window(), estimate.tokens(request));
  const stream = ipc.llmStream(runId, request, onEvent).then(
    () => undefined,
    (rejection: unknown) => {
      error ??= toWireError(rejection);
    },
  );
  await Promise.race([stream, cancelled]);
  control.hooks.delete(hook);
  board.patch({ waiting: null });
  if (reportedInput > 0) {
    estimate.calibrate(request, reportedInput);
    parts.showMeter(reportedInput);
  } else {
    // Stopped, or a server that reports no usage: the estimate, not a stale count.
    parts.showMeter(estimate.tokens(request));
  }

  // Half tool calls never reach the transcript, so their cards go too.
  const drop = new Set(assembler.unfinished.flatMap((callId) => round.cardIds.get(callId) ?? []));
  if (error && !control.cancelled) {
    // The failed turn is discarded whole; Retry sends the same transcript again.
    board.removeItems(new Set([textId, ...round.cardIds.values()]));
    return { message: null, stopReason, error };
  }
  // A turn that only thought (then called tools) keeps its reasoning on screen.
  if (assembler.text.trim() === "" && assembler.reasoning.trim() === "") drop.add(textId);
  else board.updateItem(textId, (item) => ({ ...item, streaming: false }));
  board.removeItems(drop);
  return { message: assembler.message(), stopReason: control.cancelled ? "cancelled" : stopReason, error: null };
}
