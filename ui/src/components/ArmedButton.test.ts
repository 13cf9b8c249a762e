// The one button every grant goes through: it takes nothing until it has
// stood still where it is for ARM_DELAY_MS, after it appears and after any
// move (a panel beside it came or went and slid it under the pointer), a
// click only with its press begun on it once armed, a key only pressed on
// it once armed; held by its caller, it stays disabled.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { createRawSnippet, tick } from "svelte";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ARM_DELAY_MS } from "../lib/approvalGuard";
import ArmedButton from "./ArmedButton.svelte";

const label = createRawSnippet(() => ({ render: () => "<span>Trust</span>" }));

/** Where jsdom (which lays nothing out) says the button is drawn. */
let top = 100;
beforeEach(() => {
  top = 100;
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance", "requestAnimationFrame", "cancelAnimationFrame"] });
  vi.spyOn(HTMLElement.prototype, "getBoundingClientRect").mockImplementation(() => new DOMRect(10, top, 80, 24));
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

async function button(props: { held?: boolean } = {}) {
  const onActivate = vi.fn();
  const view = render(ArmedButton, { props: { "data-testid": "b", onActivate, children: label, ...props } });
  await tick();
  return { onActivate, view, el: screen.getByTestId("b") as HTMLButtonElement };
}

/** A mouse click: press, then click (a disabled button gets neither, as in a browser). */
async function click(el: HTMLButtonElement): Promise<void> {
  if (el.disabled) return;
  await fireEvent.mouseDown(el);
  await fireEvent.click(el, { detail: 1 });
}

async function later(ms: number): Promise<void> {
  vi.advanceTimersByTime(ms);
  await tick();
}

describe("ArmedButton", () => {
  it("arms after the delay, then takes a click whose press began on it", async () => {
    const { onActivate, el } = await button();
    expect(el.disabled).toBe(true);
    expect(el.dataset.armed).toBe("false");
    expect(el.type).toBe("button");
    await later(ARM_DELAY_MS - 20);
    expect(el.disabled).toBe(true);
    await later(20);
    expect(el.dataset.armed).toBe("true");
    // A click with no press on it (the press began elsewhere) does nothing.
    await fireEvent.click(el, { detail: 1 });
    expect(onActivate).not.toHaveBeenCalled();
    await click(el);
    expect(onActivate).toHaveBeenCalledTimes(1);
  });

  it("moved, it takes nothing until it has stood still again for the delay: a double click's second click lands on nothing", async () => {
    const { onActivate, el } = await button();
    await later(ARM_DELAY_MS);
    expect(el.disabled).toBe(false);
    // The panel under it went: it slides down into the place of the button just clicked.
    top = 180;
    await later(20);
    expect(el.disabled).toBe(true);
    expect(el.dataset.armed).toBe("false");
    await later(150);
    await click(el);
    expect(onActivate).not.toHaveBeenCalled();
    // Still moving (another panel resizing), the delay starts again from the last move.
    await later(200);
    top = 190;
    await later(ARM_DELAY_MS - 50);
    expect(el.disabled).toBe(true);
    await later(100);
    expect(el.disabled).toBe(false);
    await click(el);
    expect(onActivate).toHaveBeenCalledTimes(1);
  });

  it("sees a move at the press even before a frame has: the press counts for nothing", async () => {
    const { onActivate, el } = await button();
    await later(ARM_DELAY_MS);
    top = 40;
    // No frame in between: the press itself looks where the button is.
    await fireEvent.mouseDown(el);
    await fireEvent.click(el, { detail: 1 });
    expect(onActivate).not.toHaveBeenCalled();
    await tick();
    expect(el.disabled).toBe(true);
    await later(ARM_DELAY_MS);
    await click(el);
    expect(onActivate).toHaveBeenCalledTimes(1);
  });

  it("takes a key pressed on it once armed, not one pressed before, nor its repeats", async () => {
    const { onActivate, el } = await button();
    await fireEvent.keyDown(el, { key: "Enter" });
    await later(ARM_DELAY_MS);
    await fireEvent.click(el, { detail: 0 });
    expect(onActivate).not.toHaveBeenCalled();
    await fireEvent.keyDown(el, { key: "Enter", repeat: true });
    await fireEvent.click(el, { detail: 0 });
    expect(onActivate).not.toHaveBeenCalled();
    await fireEvent.keyDown(el, { key: " " });
    await fireEvent.click(el, { detail: 0 });
    expect(onActivate).toHaveBeenCalledTimes(1);
  });

  it("held by its caller, stays disabled and takes nothing, armed or not", async () => {
    const { onActivate, el, view } = await button({ held: true });
    await later(ARM_DELAY_MS);
    expect(el.dataset.armed).toBe("true");
    expect(el.disabled).toBe(true);
    await fireEvent.mouseDown(el);
    await fireEvent.click(el, { detail: 1 });
    expect(onActivate).not.toHaveBeenCalled();
    await view.rerender({ "data-testid": "b", onActivate, children: label, held: false });
    expect(el.disabled).toBe(false);
    await click(el);
    expect(onActivate).toHaveBeenCalledTimes(1);
  });

  it("stops watching once gone", async () => {
    const { view } = await button();
    const frames = vi.getTimerCount();
    view.unmount();
    expect(vi.getTimerCount()).toBeLessThan(frames);
  });
});
