// The wait for a first token: elapsed seconds, and the server's progress in
// reading the prompt as a bar where it streams it.
import { render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import WaitingNotice from "./WaitingNotice.svelte";

describe("WaitingNotice", () => {
  it("counts the seconds waited and shows the server's progress in reading the prompt", async () => {
    vi.useFakeTimers();
    try {
      const since = Date.now();
      const view = render(WaitingNotice, { props: { waiting: { since }, busy: true } });
      expect(screen.getByTestId("waiting").textContent).toContain("Waiting for the model… 0 s");
      await vi.advanceTimersByTimeAsync(3_000);
      expect(screen.getByTestId("waiting").textContent).toContain("3 s");
      await view.rerender({ waiting: { since, processed: 2_048, total: 3_900 }, busy: true });
      expect(screen.getByTestId("waiting").textContent).toContain("reading the prompt: 2,048 of 3,900 tokens");
      const bar = screen.getByTestId("prompt-progress") as HTMLProgressElement;
      expect([bar.max, bar.value]).toEqual([3_900, 2_048]);
      await view.rerender({ waiting: null, busy: true });
      expect(screen.queryByTestId("waiting")).toBeNull();
    } finally {
      vi.useRealTimers();
    }
  });

  it("says a summary is on its way, what the server has read of it and then that it is written, until it is in", async () => {
    vi.useFakeTimers();
    try {
      const since = Date.now();
      const view = render(WaitingNotice, { props: { waiting: null, busy: true, compacting: { since, tokens: 1_300 } } });
      expect(screen.getByTestId("compacting").textContent).toContain("Compacting: the server is reading about 1,300 tokens… 0 s");
      await vi.advanceTimersByTimeAsync(12_000);
      expect(screen.getByTestId("compacting").textContent).toContain("12 s");
      await view.rerender({ waiting: null, busy: true, compacting: { since, tokens: 1_300, processed: 640, total: 1_280 } });
      expect(screen.getByTestId("compacting").textContent).toContain("reading 640 of 1,280 tokens");
      await view.rerender({ waiting: null, busy: true, compacting: { since, tokens: 1_300, processed: 1_280, total: 1_280, writing: true } });
      expect(screen.getByTestId("compacting").textContent).toContain("Compacting: the model is writing the summary… 12 s");
      await view.rerender({ waiting: null, busy: true, compacting: null });
      expect(screen.queryByTestId("compacting")).toBeNull();
    } finally {
      vi.useRealTimers();
    }
  });
});
