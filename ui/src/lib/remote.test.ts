import { describe, expect, it } from "vitest";
import { installFolder, remoteHost } from "./remote";

describe("remote folder names", () => {
  it("names the host of both forms, without the port", () => {
    expect(remoteHost("ssh://dev@box:2222/srv/app")).toBe("dev@box");
    expect(remoteHost("ssh://box/srv/app")).toBe("box");
    expect(remoteHost("dev@box:/srv/app")).toBe("dev@box");
    expect(remoteHost("my-alias:/srv/app")).toBe("my-alias");
  });

  it("reads a local path as local", () => {
    expect(remoteHost("/srv/app")).toBeNull();
    expect(remoteHost("./a:b")).toBeNull();
    expect(remoteHost("src/a:/b")).toBeNull();
  });

  it("finds the folder only in the question about copying corral-cli", () => {
    const asked = { code: "approval_required", message: "m", retryable: false, details: { folder: "/home/dev/.cache/corral/bin" } };
    expect(installFolder(asked as never)).toBe("/home/dev/.cache/corral/bin");
    expect(installFolder({ ...asked, code: "io" } as never)).toBeNull();
    expect(installFolder({ ...asked, details: {} } as never)).toBeNull();
  });
});
