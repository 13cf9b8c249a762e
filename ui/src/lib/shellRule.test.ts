import { describe, expect, it } from "vitest";
import { proposedRule } from "./shellRule";

describe("proposedRule", () => {
  it("stops at paths, option values, a double dash and after two words", () => {
    expect(proposedRule({ command: "npm", args: ["test", "--", "--config", "x"] })).toBe("npm test");
    expect(proposedRule({ command: "pytest", args: ["-q", "tests/a.py"] })).toBe("pytest -q");
    expect(proposedRule({ command: "cargo", args: ["test", "--lib", "x"] })).toBe("cargo test --lib");
    expect(proposedRule({ command: "cargo", args: ["test", "--features=x"] })).toBe("cargo test");
    expect(proposedRule({ command: "make" })).toBe("make");
  });

  it("never carries hidden or bidi characters into the label", () => {
    expect(proposedRule({ command: "npm", args: ["te\u202Est", "x"] })).toBe("npm");
    expect(proposedRule({ command: "npm", args: ["a b"] })).toBe("npm");
    expect(proposedRule({ args: ["x"] })).toBeUndefined();
  });
});
