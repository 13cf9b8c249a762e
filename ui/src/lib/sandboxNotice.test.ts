import { describe, expect, it } from "vitest";
import { sandboxNotice } from "./sandboxNotice";

describe("sandboxNotice", () => {
  it("says nothing for a fenced command or a result that is not a command's", () => {
    expect(sandboxNotice({ sandbox: "namespaces", profile: "read_only" })).toBeNull();
    expect(sandboxNotice({ path: "a.txt", content: "x" })).toBeNull();
    expect(sandboxNotice(null)).toBeNull();
  });

  it("names the fallback and the reason", () => {
    expect(sandboxNotice({ sandbox: "landlock", sandbox_note: "no namespaces (bubblewrap is not installed)" })).toBe(
      "Commands run without their full sandbox here (no namespaces (bubblewrap is not installed)). Every command will ask first; only their writes are confined.",
    );
    expect(sandboxNotice({ sandbox: "none" })).toBe("Commands run with no sandbox here. Every command will ask first.");
  });
});
