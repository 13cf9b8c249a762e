// What the server says of the model being asked: its context window, price
// and abilities, asked once on the first need, and its own count of the
// fixed prefix, which corrects the token estimate before the first request
// is sized by it.
import type { LlmRequest, ModelInfo, ToolSpec } from "../types";
import { DEFAULT_CONTEXT_WINDOW, type TokenEstimate } from "./context";
import type { AgentIpc } from "./ports";

/**
 * How long a request (or a paste's sizing) waits for the server's count of
 * the fixed prefix when it is on its way: the count decides whether a big
 * paste goes inline or as an attachment, so it should be in, but a slow
 * server must not hold the send up for long. Past it, the estimate stands
 * for this send and the count corrects the next one when it arrives.
 */
export const COUNT_WAIT_MS = 1_500;

type Sources = {
  /** The tools as last asked of Rust; the count waits until they are known. */
  specs: () => ToolSpec[] | null;
  /** The fixed prefix (system prompt and tools) a request with `specs` sends. */
  prefix: (specs: ToolSpec[]) => LlmRequest;
  /** The server answered about a model (its price is shown). */
  onModel: (model: ModelInfo) => void;
  countWaitMs?: number;
};

export class ModelFacts {
  /** What the server said of the model; undefined until asked. */
  model: ModelInfo | undefined;
  /** Whether what the model cannot do was said (once per loop, or after `reset`). */
  noted = false;
  /** The server's word on the model being asked (once per loop, or after `reset`). */
  private asking: Promise<ModelInfo> | null = null;
  /** The server's count of the prefix, asked once per model. */
  private counting: Promise<void> | null = null;

  constructor(
    private readonly ipc: AgentIpc,
    private readonly estimate: TokenEstimate,
    private readonly sources: Sources,
  ) {}

  /** Forgets what is known of the model (the settings changed). */
  reset(): void {
    this.model = undefined;
    this.estimate.indentedTools = false;
    this.asking = null;
    this.counting = null;
    this.noted = false;
  }

  /**
   * What the server says of the model: asked once, on the first need. On a
   * server that counts tokens, the count of the prefix is started once the
   * tools are known, and each caller waits for it (at most `countWaitMs`),
   * also a caller that comes while another's question is still out.
   */
  async ask(): Promise<ModelInfo> {
    if (this.model === undefined) {
      const asking = (this.asking ??= this.ipc.modelInfo().catch((): ModelInfo => ({})));
      const model = await asking;
      if (this.asking !== asking) return model; // the settings changed meanwhile
      if (this.model === undefined) {
        this.model = model;
        this.estimate.indentedTools = model.indents_tools === true;
        this.sources.onModel(model);
      }
    }
    const model = this.model;
    const specs = this.sources.specs();
    if (model.counts_tokens && specs && this.asking) {
      const counting = (this.counting ??= this.countPrefix(specs, this.asking));
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waited = new Promise<void>((done) => (timer = setTimeout(done, this.sources.countWaitMs ?? COUNT_WAIT_MS)));
      await Promise.race([counting, waited]).finally(() => clearTimeout(timer));
    }
    return model;
  }

  /** The model's context window, or the default one when the server did not say. */
  get contextWindow(): { window: number; known: boolean } {
    const window = this.model?.context_window;
    return window ? { window, known: true } : { window: DEFAULT_CONTEXT_WINDOW, known: false };
  }

  /** The server said in an overflow error that the window is `window` tokens: a smaller one than known is taken. */
  learnWindow(window: number): void {
    if (window > 0 && (!this.model?.context_window || this.model.context_window > window)) {
      this.model = { ...this.model, context_window: window, source: "server" };
    }
  }

  /**
   * Corrects the estimate with the server's own count of the fixed prefix
   * (llama.cpp's template and tokenizer), once per model, before the first
   * request is sized by it; a server that cannot count leaves it as it is.
   */
  private async countPrefix(specs: ToolSpec[], asking: Promise<ModelInfo>): Promise<void> {
    const prefix = this.sources.prefix(specs);
    const counted = await this.ipc.countPromptTokens(prefix).catch(() => null);
    if (counted !== null && this.asking === asking) this.estimate.calibrate(prefix, counted, false);
  }
}
