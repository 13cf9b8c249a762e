// When a click or key on an approval control counts. The controls appear
// while the user may be busy with something else: typing the next message,
// about to click where something else just was. So nothing counts for
// ARM_DELAY_MS after they appear, a mouse click counts only if its press
// began on the control after that, and a click made by a key only if the
// key went down on the control after that (a key held since before, or its
// auto-repeat, does nothing). A click with no key or press behind it
// (assistive technology) counts once the delay has passed. A control that
// moved (a panel beside it came or went, and it slid under the pointer)
// starts its delay again: `restart` (see ArmedButton.svelte).

export const ARM_DELAY_MS = 500;

type Clock = () => number;

export class ActivationGuard {
  private shownAt: number;
  private pressed = false;
  /** The last key that went down on a control: whether it may activate it. */
  private key: { fresh: boolean } | null = null;

  constructor(private readonly now: Clock = () => performance.now()) {
    this.shownAt = now();
  }

  /** Whether the delay since the controls appeared has passed. */
  get armed(): boolean {
    return this.now() - this.shownAt >= ARM_DELAY_MS;
  }

  /**
   * The control moved, or appeared anew: nothing counts until the delay
   * has passed again, and a press or key begun before counts for nothing.
   */
  restart(): void {
    this.shownAt = this.now();
    this.pressed = false;
    this.key = null;
  }

  /** A mouse button went down on a control. */
  mousedown(): void {
    this.pressed = this.armed;
  }

  /** A key went down on a control (Enter and Space activate buttons). */
  keydown(event: { key: string; repeat: boolean }): void {
    this.key = { fresh: (event.key === "Enter" || event.key === " ") && !event.repeat && this.armed };
  }

  /**
   * Whether this click may act. `detail` is 0 for a click made by the
   * keyboard (or by assistive technology), else the mouse's click count.
   */
  accepts(event: { detail: number }): boolean {
    const ok = this.armed && (event.detail === 0 ? (this.key?.fresh ?? true) : this.pressed);
    this.pressed = false;
    this.key = null;
    return ok;
  }
}
