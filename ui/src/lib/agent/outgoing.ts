// What the model is sent of the conversation: the transcript (from the
// last compaction's summary on), the earlier images left out once the
// model refused them, the tools it asked for whole, the parts of messages
// too large for the window, the skills it may load, and the request built
// from all of it.
import { wireError } from "../errors";
import { IMAGES_PER_MESSAGE, IMAGES_PER_REQUEST } from "../images";
import type { Block, LlmRequest, Message, ToolSpec, WireError } from "../types";
import { resumeFrom } from "./context";
import type { fromEntries } from "./conversation";
import type { Instructions } from "./instructions";
import { PasteShelf, READ_PASTE_TOOL } from "./pastes";
import { isSmallWindow, type OfferedTool, offeredTools } from "./promptBudget";
import type { NoticeItem } from "./state";
import { type Skill, skillsPrompt, skillTool } from "./skills";
import { shortSystemPrompt, systemPrompt } from "./systemPrompt";

/** What stands in for an image the model is not sent. */
export const IMAGE_LEFT_OUT = "[An image was here; it is left out because this model takes no images.]";

export class Outgoing {
  /** The provider transcript, as the next request sends it. */
  messages: Message[] = [];
  /**
   * How far the transcript's indices are behind the conversation's as the
   * history keeps it (the messages a summary replaced, less its message).
   */
  shift = 0;
  /**
   * The model refused images the conversation carried from before: from
   * then on they are left out of what it is sent (a line says so in their
   * place; the conversation keeps them), until the model is forgotten
   * (another model, or another conversation opened).
   */
  imagesRefused = false;
  /** The images the person sent in this turn: they are always sent. */
  freshImages = new Set<Block>();
  /** The project's instruction file, read once per conversation. */
  instructions: Instructions | null | undefined;
  /** The project's and the user's skills, listed once per conversation. */
  skills: Skill[] | undefined;
  /** Tools offered by name only (a small window) that the model asked for: offered whole from then on. */
  requestedTools = new Set<string>();
  /** Messages too large for the window, kept in parts for `read_paste`. */
  pastes = new PasteShelf();

  constructor(
    private readonly projectRoot: string,
    /** The model's context window as known now. */
    private readonly window: () => number,
    /** The loop's own tools beside the registry's (the `task` tool), whole. */
    private readonly ownTools: () => OfferedTool[] = () => [],
  ) {}

  /**
   * Every tool a request may offer, the registry's and the loop's own,
   * whole: a small window offers them all alike (`offeredTools`), and a
   * call of one offered by name only asks for it.
   */
  tools(specs: readonly OfferedTool[]): OfferedTool[] {
    return [...specs, ...this.ownTools()];
  }

  /** Another conversation: nothing of the last one is sent (`pastes`: the new one's). */
  restart(pastes: PasteShelf = new PasteShelf()): void {
    this.messages = [];
    this.shift = 0;
    this.freshImages = new Set();
    this.instructions = undefined;
    this.skills = undefined;
    this.requestedTools = new Set();
    this.pastes = pastes;
  }

  /** The transcript of a conversation opened: from its last compaction's summary on, when it has one. */
  resume(opened: ReturnType<typeof fromEntries>): void {
    const last = opened.items.filter((item): item is NoticeItem => item.kind === "notice" && item.compacted !== undefined).at(-1);
    const resumed = resumeFrom(opened.messages, last?.compacted);
    this.messages = resumed.messages;
    this.shift = resumed.shift;
  }

  /** The request the next turn sends. */
  request(specs: ToolSpec[]): LlmRequest {
    const window = this.window();
    const instructions = this.instructions ?? null;
    const skills = this.skills ?? [];
    const system = isSmallWindow(window) ? shortSystemPrompt(this.projectRoot, window, instructions) : systemPrompt(this.projectRoot, specs, instructions);
    return {
      system: system + skillsPrompt(skills, window),
      messages: this.sentMessages(),
      tools: [
        ...offeredTools(this.tools(specs), window, this.requestedTools),
        ...(this.pastes.isEmpty ? [] : [READ_PASTE_TOOL]),
        ...(skills.length === 0 ? [] : [skillTool(skills, window)]),
      ],
    };
  }

  /** The part of every request that does not change from turn to turn: the system prompt and the tools. */
  prefix(specs: ToolSpec[]): LlmRequest {
    return { ...this.request(specs), messages: [] };
  }

  /**
   * Whether `error` is the model refusing images that can only be earlier
   * ones: this turn's message brought none (if it did, they are the likely
   * cause, and that message goes back to the box), and images from before
   * are still sent.
   */
  refusesEarlierImages(error: WireError): boolean {
    return (
      error.details?.reason === "images_unsupported" &&
      !this.imagesRefused &&
      this.freshImages.size === 0 &&
      this.messages.some((m) => m.content.some(this.earlier))
    );
  }

  /**
   * Why a message with `count` images cannot be sent (more than a message
   * may carry, or more than the bridge takes in one request with the
   * conversation's images), or null. Checked before the message is
   * recorded, so it goes back to the box whole.
   */
  imagesOverLimit(count: number): WireError | null {
    if (count > IMAGES_PER_MESSAGE) {
      return wireError("invalid_input", `The message carries ${count} images; at most ${IMAGES_PER_MESSAGE} can be sent with one message.`, "Remove some images, or send them over several messages.");
    }
    const earlier = this.messages.flatMap((m) => m.content).filter((b) => b.type === "image").length;
    if (count > 0 && earlier + count > IMAGES_PER_REQUEST) {
      return wireError("invalid_input", `The conversation already carries ${earlier} images; with ${count} more it would be over the ${IMAGES_PER_REQUEST} one request can carry.`, "Start a new conversation for more images, or send the message without them.");
    }
    return null;
  }

  /** An image the person sent before this turn. */
  private readonly earlier = (block: Block): boolean => block.type === "image" && !this.freshImages.has(block);

  /** The conversation as the model is sent it: earlier images left out once it refused them. */
  private sentMessages(): Message[] {
    if (!this.imagesRefused) return this.messages;
    return this.messages.map((m) =>
      m.content.some(this.earlier) ? { ...m, content: m.content.map((b) => (this.earlier(b) ? { type: "text" as const, text: IMAGE_LEFT_OUT } : b)) } : m,
    );
  }
}
