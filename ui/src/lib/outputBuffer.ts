// Live output of one exec_shell run, as lines. Chunks arrive on the shell
// Channel at any rate; they are queued and folded in once per animation
// frame, and subscribers hear about it once per frame, so 100k lines of
// output append without re-rendering what is already there.
import { carrySgr } from "./ansi";
import type { ShellEvent, ShellOutput } from "./types";

export type Stream = ShellEvent["stream"];
/** `sgr`: the ANSI colour state the line starts in, left by the stream's earlier lines. */
export type OutputLine = { stream: Stream; text: string; sgr: string };
export type FrameScheduler = (run: () => void) => void;

export const nextFrame: FrameScheduler = (run) => {
  if (typeof requestAnimationFrame === "function") requestAnimationFrame(() => run());
  else setTimeout(run, 16);
};

/** How the app's last live event begins when it stopped streaming a run (docs/ipc.md). */
export const LIVE_CUT_MARKER = "\n[live output stopped";

export class OutputBuffer {
  readonly lines: OutputLine[] = [];
  /** The app stopped streaming this run's output (too much of it); the result has its end. */
  cut = false;
  private pending: ShellEvent[] = [];
  private scheduled = false;
  /** Index of the line each stream is still writing (no newline yet). */
  private openLine: Record<Stream, number | null> = { stdout: null, stderr: null };
  /** The colour state each stream's next line starts in (streams are separate pipes). */
  private sgr: Record<Stream, string> = { stdout: "", stderr: "" };
  private listeners = new Set<(lineCount: number) => void>();

  constructor(private readonly schedule: FrameScheduler = nextFrame) {}

  static fromResult(output: Pick<ShellOutput, "stdout" | "stderr">): OutputBuffer {
    const buffer = new OutputBuffer();
    buffer.fold({ stream: "stdout", data: output.stdout });
    buffer.closeLines();
    buffer.fold({ stream: "stderr", data: output.stderr });
    return buffer;
  }

  push(event: ShellEvent): void {
    this.pending.push(event);
    if (this.scheduled) return;
    this.scheduled = true;
    this.schedule(() => this.flush());
  }

  /** Folds queued chunks in now (also called by the scheduler). */
  flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const events = this.pending;
    this.pending = [];
    for (const event of events) this.fold(event);
    for (const listen of [...this.listeners]) listen(this.lines.length);
  }

  subscribe(listen: (lineCount: number) => void): () => void {
    this.listeners.add(listen);
    listen(this.lines.length);
    return () => this.listeners.delete(listen);
  }

  /** All output as plain text, ANSI escapes removed, for copying. */
  text(): string {
    // eslint-disable-next-line no-control-regex
    return this.lines.map((l) => l.text.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, "")).join("\n");
  }

  private closeLines(): void {
    this.openLine = { stdout: null, stderr: null };
  }

  private fold({ stream, data }: ShellEvent): void {
    if (data === "") return;
    if (data.startsWith(LIVE_CUT_MARKER)) this.cut = true;
    const pieces = data.split("\n");
    // The last piece has no newline yet ("" when the chunk ended with one).
    const tail = pieces.pop() ?? "";
    for (const piece of pieces) {
      const line = this.lines[this.append(stream, piece)];
      this.sgr[stream] = carrySgr(line.sgr, line.text);
      this.openLine[stream] = null;
    }
    if (tail !== "") this.append(stream, tail);
  }

  /** Adds text to the stream's open line (or a new one); returns the line's index. */
  private append(stream: Stream, text: string): number {
    const open = this.openLine[stream];
    if (open === null) {
      this.lines.push({ stream, text, sgr: this.sgr[stream] });
      this.openLine[stream] = this.lines.length - 1;
      return this.lines.length - 1;
    }
    const line = this.lines[open];
    this.lines[open] = { ...line, text: line.text + text };
    return open;
  }
}
