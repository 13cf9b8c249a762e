import { describe, expect, it } from "vitest";
import { ARM_DELAY_MS, ActivationGuard } from "./approvalGuard";

function clocked() {
  let now = 1000;
  const guard = new ActivationGuard(() => now);
  return { guard, later: (ms: number) => (now += ms) };
}
const mouse = { detail: 1 };
const keyboard = { detail: 0 };

describe("ActivationGuard", () => {
  it("ignores a mouse click until the delay has passed", () => {
    const { guard, later } = clocked();
    guard.mousedown();
    expect(guard.accepts(mouse)).toBe(false);
    later(ARM_DELAY_MS - 1);
    guard.mousedown();
    expect(guard.accepts(mouse)).toBe(false);
    later(1);
    guard.mousedown();
    expect(guard.accepts(mouse)).toBe(true);
  });

  it("ignores a click whose press began before the delay passed", () => {
    const { guard, later } = clocked();
    guard.mousedown();
    later(ARM_DELAY_MS + 100);
    expect(guard.accepts(mouse)).toBe(false);
  });

  it("takes a key press on the control after the delay, not one held since before or its repeats", () => {
    const { guard, later } = clocked();
    guard.keydown({ key: "Enter", repeat: false });
    later(ARM_DELAY_MS);
    expect(guard.accepts(keyboard)).toBe(false);
    guard.keydown({ key: " ", repeat: true });
    expect(guard.accepts(keyboard)).toBe(false);
    guard.keydown({ key: "Enter", repeat: false });
    expect(guard.accepts(keyboard)).toBe(true);
    guard.keydown({ key: "a", repeat: false });
    expect(guard.accepts(keyboard)).toBe(false);
  });

  it("takes a click with no key or press behind it (assistive technology) once the delay has passed", () => {
    const { guard, later } = clocked();
    expect(guard.accepts(keyboard)).toBe(false);
    later(ARM_DELAY_MS);
    expect(guard.armed).toBe(true);
    expect(guard.accepts(keyboard)).toBe(true);
  });

  it("starts over when the control moved: the delay again, and a press or key from before counts for nothing", () => {
    const { guard, later } = clocked();
    later(ARM_DELAY_MS);
    guard.mousedown();
    guard.keydown({ key: "Enter", repeat: false });
    later(150);
    guard.restart();
    expect(guard.armed).toBe(false);
    expect(guard.accepts(mouse)).toBe(false);
    later(ARM_DELAY_MS - 1);
    guard.mousedown();
    expect(guard.accepts(mouse)).toBe(false);
    later(1);
    guard.mousedown();
    expect(guard.accepts(mouse)).toBe(true);
  });
});
