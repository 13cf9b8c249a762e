// "Allow in this conversation" for a file whose way goes through a link
// (`vendor/pkg -> ..`): Rust holds a grant only for a place its name leads
// to itself, so neither the file alone nor its folders are offered, the
// chooser says why, and only the whole project can be allowed.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import type { ToolItem } from "../lib/agent/state";
import type { Lister } from "../lib/grantPlaces";
import type { DirEntry } from "../lib/types";
import { displayOf } from "../test/fakeIpc";
import GrantChooser from "./GrantChooser.svelte";

const write = (path: string): ToolItem => ({
  kind: "tool",
  id: "c1",
  callId: "t1",
  name: "write_file",
  input: { path, content: "x" },
  risk: "write",
  status: "waiting",
  display: displayOf("write_file"),
});

function chooser(path: string, folders: Record<string, DirEntry[]>) {
  const list: Lister = vi.fn(async (folder: string) => ({ entries: folders[folder] ?? [], truncated: false }));
  const onGrant = vi.fn();
  render(GrantChooser, { props: { item: write(path), onGrant, onCancel: vi.fn(), list } });
  return { onGrant, list };
}

async function confirm(): Promise<void> {
  const button = screen.getByTestId("grant-confirm") as HTMLButtonElement;
  await vi.waitFor(() => expect(button.disabled).toBe(false), { timeout: 2000 });
  await fireEvent.mouseDown(button);
  await fireEvent.click(button, { detail: 1 });
}

const options = () => [...(screen.getByTestId("grant-folder-choice") as HTMLSelectElement).options].map((o) => o.textContent);

describe("GrantChooser", () => {
  it("offers neither the file nor its folders when a link lies on the way, says why, and allows the whole project once chosen", async () => {
    const { onGrant } = chooser("vendor/pkg/src/greet.js", { ".": [{ path: "vendor", kind: "dir" }], vendor: [{ path: "vendor/pkg", kind: "symlink" }] });
    const said = await screen.findByTestId("grant-link");
    expect(said.textContent).toContain("goes through a link at vendor/pkg");
    expect(said.textContent).toContain("a grant names a place by where it really is");
    expect((screen.getByTestId("grant-exact") as HTMLInputElement).disabled).toBe(true);
    expect((screen.getByTestId("grant-exact") as HTMLInputElement).checked).toBe(false);
    expect(options()).toEqual(["the whole project"]);
    // Nothing is chosen for the user: the button waits for a choice.
    await new Promise((r) => setTimeout(r, 700));
    expect((screen.getByTestId("grant-confirm") as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.click(screen.getByTestId("grant-folder"));
    await confirm();
    expect(onGrant.mock.calls).toEqual([[{ kind: "folder", tool: "write_file", folder: "." }]]);
  });

  it("offers the file and each of its folders when none is a link", async () => {
    const { onGrant, list } = chooser("vendor/pkg/src/greet.js", {
      ".": [{ path: "vendor", kind: "dir" }],
      vendor: [{ path: "vendor/pkg", kind: "dir" }],
      "vendor/pkg": [{ path: "vendor/pkg/src", kind: "dir" }],
      "vendor/pkg/src": [],
    });
    await vi.waitFor(() => expect(list).toHaveBeenCalledTimes(4));
    expect(screen.queryByTestId("grant-link")).toBeNull();
    expect(options()).toEqual(["vendor/pkg/src/", "vendor/pkg/", "vendor/", "the whole project"]);
    await confirm();
    expect(onGrant.mock.calls).toEqual([[{ kind: "path", tool: "write_file", path: "vendor/pkg/src/greet.js" }]]);
  });
});
