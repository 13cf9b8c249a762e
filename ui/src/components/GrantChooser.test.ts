// "Allow in this conversation" offers what the call's ticket says may be
// granted, and nothing else. For a file whose way goes through a link
// (`vendor/pkg -> ..`), Rust offers only the whole project and names the
// link: neither the file alone nor its folders are offered, the chooser
// says why, and only the project can be allowed. For a command, an edited
// pattern can be given only when it is one Rust says covers the call.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import type { ToolItem } from "../lib/agent/state";
import type { GrantChoices } from "../lib/grants";
import type { Grant } from "../lib/types";
import { displayOf } from "../test/fakeIpc";
import GrantChooser from "./GrantChooser.svelte";

const PATH = "vendor/pkg/src/greet.js";

const write = (grantChoices: GrantChoices): ToolItem => ({
  kind: "tool",
  id: "c1",
  callId: "t1",
  name: "write_file",
  input: { path: PATH, content: "x" },
  risk: "write",
  status: "waiting",
  display: displayOf("write_file"),
  paths: [{ typed: PATH, inside: PATH }],
  grantChoices,
});

const command = (command: string, args: string[], more: boolean): Grant => ({ kind: "command", command, args, more });

const node = (): ToolItem => ({
  kind: "tool",
  id: "c2",
  callId: "t2",
  name: "exec_shell",
  input: { command: "node", args: ["-e", "console.log(1)"] },
  risk: "shell",
  status: "waiting",
  display: displayOf("exec_shell"),
  grantChoices: {
    exact_grant: command("node", ["-e", "console.log(1)"], false),
    proposed_pattern: command("node", ["-e"], true),
    covering_patterns: [command("node", ["-e", "console.log(1)"], false), command("node", [], true), command("node", ["-e"], true)],
  },
});

function chooser(item: ToolItem) {
  const onGrant = vi.fn();
  render(GrantChooser, { props: { item, onGrant, onCancel: vi.fn() } });
  return { onGrant };
}

async function confirm(): Promise<void> {
  const button = screen.getByTestId("grant-confirm") as HTMLButtonElement;
  await vi.waitFor(() => expect(button.disabled).toBe(false), { timeout: 2000 });
  await fireEvent.mouseDown(button);
  await fireEvent.click(button, { detail: 1 });
}

const options = () => [...(screen.getByTestId("grant-folder-choice") as HTMLSelectElement).options].map((o) => o.textContent);
const meaning = () => screen.getByTestId("grant-pattern-meaning").textContent ?? "";

describe("GrantChooser", () => {
  it("offers neither the file nor its folders when a link lies on the way, says why, and allows the whole project once chosen", async () => {
    const { onGrant } = chooser(write({ grant_link: "vendor/pkg", grant_folders: ["."] }));
    const said = screen.getByTestId("grant-link");
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

  it("offers the file and each of its folders Rust offers, the file chosen first", async () => {
    const exact: Grant = { kind: "path", tool: "write_file", path: PATH };
    const { onGrant } = chooser(write({ exact_grant: exact, grant_folders: ["vendor/pkg/src", "vendor/pkg", "vendor", "."] }));
    expect(screen.queryByTestId("grant-link")).toBeNull();
    expect(screen.getByTestId("grant-exact").closest("label")?.textContent).toContain(`on this file only: ${PATH}`);
    expect(options()).toEqual(["vendor/pkg/src/", "vendor/pkg/", "vendor/", "the whole project"]);
    await confirm();
    expect(onGrant.mock.calls).toEqual([[exact]]);
  });

  it("gives a folder picked among those offered", async () => {
    const { onGrant } = chooser(write({ exact_grant: { kind: "path", tool: "write_file", path: PATH }, grant_folders: ["vendor/pkg/src", "."] }));
    await fireEvent.click(screen.getByTestId("grant-folder"));
    await fireEvent.change(screen.getByTestId("grant-folder-choice"), { target: { value: "." } });
    await confirm();
    expect(onGrant.mock.calls).toEqual([[{ kind: "folder", tool: "write_file", folder: "." }]]);
  });

  it("proposes the ticket's pattern and gives an edited one only when Rust says it covers the call", async () => {
    const { onGrant } = chooser(node());
    const text = screen.getByTestId("grant-pattern-text") as HTMLInputElement;
    expect(text.value).toBe("node -e *");
    await fireEvent.click(screen.getByTestId("grant-pattern"));
    expect(meaning()).toContain("Covers commands starting with node -e, whatever follows.");
    // Not one of the patterns that cover it: said, and the button holds.
    await fireEvent.input(text, { target: { value: "node -x *" } });
    expect(meaning()).toContain("This pattern does not cover the command shown");
    await new Promise((r) => setTimeout(r, 700));
    expect((screen.getByTestId("grant-confirm") as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.input(text, { target: { value: "node  *" } });
    expect(meaning()).toContain("Covers commands starting with node, whatever follows.");
    await confirm();
    expect(onGrant.mock.calls).toEqual([[command("node", [], true)]]);
  });

  it("offers nothing to give for a call whose ticket has no choices", async () => {
    chooser({ ...node(), grantChoices: undefined });
    expect((screen.getByTestId("grant-exact") as HTMLInputElement).disabled).toBe(true);
    await new Promise((r) => setTimeout(r, 700));
    expect((screen.getByTestId("grant-confirm") as HTMLButtonElement).disabled).toBe(true);
  });
});
