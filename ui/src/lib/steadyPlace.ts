// Where a control is drawn, watched at every frame. A control that grants
// something must not take a click aimed at what was in its place a moment
// before: when a panel beside it comes or goes (an approval answered, a
// question closed), the controls around it slide, and a double click, or a
// click begun on the old layout, lands on whatever slid under the pointer.
// So a control that moved is told (`onMove`), and its guard starts its
// delay again (ArmedButton.svelte). `check` looks at once, for a press: a
// move between two frames counts as well as one seen at a frame.

/** Pixels a box may shift by rounding without counting as a move. */
const ROUNDING_PX = 0.5;

export type PlaceWatch = {
  /** Looks now: whether the element moved since it was last looked at (then `onMove` was called). */
  check: () => boolean;
  stop: () => void;
};

type Box = { left: number; top: number; width: number; height: number };

const watched = new Set<() => boolean>();
let frame: number | undefined;

function boxOf(element: Element): Box {
  const { left, top, width, height } = element.getBoundingClientRect();
  return { left, top, width, height };
}

function same(a: Box, b: Box): boolean {
  return (
    Math.abs(a.left - b.left) <= ROUNDING_PX &&
    Math.abs(a.top - b.top) <= ROUNDING_PX &&
    Math.abs(a.width - b.width) <= ROUNDING_PX &&
    Math.abs(a.height - b.height) <= ROUNDING_PX
  );
}

const nextFrame = (run: () => void): number =>
  typeof requestAnimationFrame === "function" ? requestAnimationFrame(run) : (setTimeout(run, 16) as unknown as number);
const cancelFrame = (id: number): void => (typeof cancelAnimationFrame === "function" ? cancelAnimationFrame(id) : clearTimeout(id));

/** One loop for every watched element, running while any is watched. */
function everyFrame(): void {
  frame = undefined;
  for (const check of watched) check();
  if (watched.size > 0) frame = nextFrame(everyFrame);
}

/** Watches where `element` is drawn (its box in the window) until `stop`. */
export function watchPlace(element: Element, onMove: () => void): PlaceWatch {
  let last = boxOf(element);
  const check = (): boolean => {
    const now = boxOf(element);
    if (same(now, last)) return false;
    last = now;
    onMove();
    return true;
  };
  watched.add(check);
  frame ??= nextFrame(everyFrame);
  return {
    check,
    stop() {
      watched.delete(check);
      if (watched.size === 0 && frame !== undefined) {
        cancelFrame(frame);
        frame = undefined;
      }
    },
  };
}
