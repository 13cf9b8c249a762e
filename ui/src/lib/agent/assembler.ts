// Folds the normalized LLM stream into one assistant message. Only tool calls
// that reached `tool_call_end` become tool_use blocks: a call cut off by
// cancel, an error or max_tokens leaves no half block in the transcript.
import type { Block, LlmEvent, Message, ToolUseBlock } from "../types";

export class StreamAssembler {
  private blocks: Block[] = [];
  private open = new Map<string, string>();
  /** The model's reasoning, shown but never part of the message. */
  reasoning = "";

  /** Folds one event into the message being built. */
  apply(event: LlmEvent): void {
    switch (event.type) {
      case "text_delta": {
        const last = this.blocks.at(-1);
        if (last?.type === "text") last.text += event.text;
        else this.blocks.push({ type: "text", text: event.text });
        return;
      }
      case "reasoning_delta":
        this.reasoning += event.text;
        return;
      case "tool_call_start":
        this.open.set(event.id, event.name);
        return;
      case "tool_call_end":
        this.open.delete(event.id);
        this.blocks.push({ type: "tool_use", id: event.id, name: event.name, input: event.input ?? {} });
        return;
      case "tool_call_delta":
      case "usage":
      case "prompt_progress":
      case "retrying":
      case "done":
      case "error":
        return;
    }
  }

  get text(): string {
    return this.blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
  }

  get toolUses(): ToolUseBlock[] {
    return this.blocks.filter((b): b is ToolUseBlock => b.type === "tool_use");
  }

  /** Ids of calls that started but never ended. */
  get unfinished(): string[] {
    return [...this.open.keys()];
  }

  /** The assistant message, or null when the model said nothing usable. */
  message(): Message | null {
    const content = this.blocks.filter((b) => b.type !== "text" || b.text.trim() !== "");
    return content.length === 0 ? null : { role: "assistant", content };
  }
}
