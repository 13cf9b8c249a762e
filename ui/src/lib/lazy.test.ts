import { describe, expect, it, vi } from "vitest";
import { lazy, preload, whenIdle } from "./lazy";

describe("lazy parts", () => {
  it("imports once and shares the result", async () => {
    const importer = vi.fn(async () => "part");
    const part = lazy(importer);
    const [a, b] = await Promise.all([part.load(), part.load()]);
    expect([a, b]).toEqual(["part", "part"]);
    await part.load();
    expect(importer).toHaveBeenCalledTimes(1);
  });

  it("tries again after a failed import", async () => {
    const importer = vi.fn().mockRejectedValueOnce(new Error("chunk missing")).mockResolvedValue("part");
    const part = lazy(importer as () => Promise<string>);
    await expect(part.load()).rejects.toThrow("chunk missing");
    await expect(part.load()).resolves.toBe("part");
    expect(importer).toHaveBeenCalledTimes(2);
  });

  it("preloads when idle, and not once cancelled", async () => {
    const importer = vi.fn(async () => "part");
    preload(lazy(importer));
    const cancelled = vi.fn();
    whenIdle(cancelled)();
    await vi.waitFor(() => expect(importer).toHaveBeenCalledTimes(1));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(cancelled).not.toHaveBeenCalled();
  });

  it("swallows a preload's failure (the first real use reports it)", async () => {
    const importer = vi.fn(async () => Promise.reject(new Error("offline")));
    preload(lazy(importer));
    await vi.waitFor(() => expect(importer).toHaveBeenCalledTimes(1));
  });
});
