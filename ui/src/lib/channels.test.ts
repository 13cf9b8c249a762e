import { describe, expect, it, vi } from "vitest";
import { drain } from "./channels";

describe("the channel drain", () => {
  it("hands each queued message to its channel, in order, as Tauri's script would", async () => {
    const runCallback = vi.fn();
    await drain(async () => [[7, 0, { type: "delta", text: "a" }], [9, 0, "x"], [7, 1, { end: 1 }]], { runCallback });
    expect(runCallback.mock.calls).toEqual([
      [7, { message: { type: "delta", text: "a" }, index: 0 }],
      [9, { message: "x", index: 0 }],
      [7, { message: { end: 1 }, index: 1 }],
    ]);
  });
});
