// The Updates part of Settings: the switch is off until turned on, an
// install owned by a package says its package manager updates it (and
// offers nothing to fetch), and a refused signature is shown as the
// standardized error it is.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { UpdateStatus, WireError } from "../lib/types";

vi.mock("../lib/ipc", () => import("../test/ipcMock").then((m) => m.ipcModule()));
import { ipc as client } from "../lib/ipc";
import { answer } from "../test/ipcMock";

const ipc = answer(client, {
  updateStatus: vi.fn(),
  saveUpdateSettings: vi.fn(),
  checkUpdate: vi.fn(),
  installUpdate: vi.fn(),
});

import AppUpdates from "./AppUpdates.svelte";

const file: UpdateStatus = {
  settings: { check: false, manifest_url: "" },
  version: "0.1.0",
  install: { kind: "file", path: "/home/me/bin/corral" },
  has_key: true,
  manifest_url: "https://releases.example.org/corral/latest.json",
};

beforeEach(() => {
  vi.clearAllMocks();
  ipc.saveUpdateSettings.mockImplementation(async (settings) => ({ ...file, settings }));
});

function shown(status: UpdateStatus, props: Record<string, unknown> = {}) {
  ipc.updateStatus.mockResolvedValue(status);
  return render(AppUpdates, { props });
}

describe("the updates switch", () => {
  it("is off until turned on; Check now saves it, then checks, then offers the install", async () => {
    const onStatus = vi.fn();
    shown(file, { onStatus });
    const box = (await screen.findByTestId("update-check")) as HTMLInputElement;
    expect(box.checked).toBe(false);
    expect((screen.getByTestId("update-check-now") as HTMLButtonElement).disabled).toBe(true);

    await fireEvent.click(box);
    ipc.checkUpdate.mockResolvedValue({ version: "0.2.0", current_version: "0.1.0", notes: "Faster search" });
    await fireEvent.click(screen.getByTestId("update-check-now"));
    await vi.waitFor(() => expect(onStatus).toHaveBeenCalledWith("Corral 0.2.0 is available."));
    expect(ipc.saveUpdateSettings).toHaveBeenCalledWith({ check: true, manifest_url: "" });
    expect(screen.getByTestId("update-notes").textContent).toBe("Faster search");

    ipc.installUpdate.mockResolvedValue({ version: "0.2.0", path: "/home/me/bin/corral" });
    await fireEvent.click(screen.getByTestId("update-install"));
    await vi.waitFor(() => expect(onStatus).toHaveBeenLastCalledWith("Corral 0.2.0 is installed (its signature matched); restart Corral to use it."));
    expect(ipc.installUpdate).toHaveBeenCalledWith("0.2.0");
  });

  it("says a package manager updates a packaged install, and offers nothing to fetch", async () => {
    shown({ ...file, install: { kind: "package", marker: "/usr/share/corral/package-managed" } });
    expect((await screen.findByTestId("update-package")).textContent).toContain("your package manager (apt, dnf) updates it");
    expect((screen.getByTestId("update-check") as HTMLInputElement).disabled).toBe(true);
    expect(screen.queryByTestId("update-check-now")).toBeNull();
    expect(ipc.checkUpdate).not.toHaveBeenCalled();
  });

  it("shows a refused signature as the error it is", async () => {
    const onError = vi.fn();
    shown({ ...file, settings: { check: true, manifest_url: "" } }, { onError });
    ipc.checkUpdate.mockResolvedValue({ version: "0.2.0", current_version: "0.1.0", notes: null });
    await fireEvent.click(await screen.findByTestId("update-check-now"));
    const refused: WireError = {
      code: "update",
      message: "The downloaded build does not match its signature, so it was refused: …",
      hint: "Nothing was installed.",
      retryable: false,
      details: { reason: "signature", version: "0.2.0" },
    };
    ipc.installUpdate.mockRejectedValue(refused);
    await fireEvent.click(await screen.findByTestId("update-install"));
    await vi.waitFor(() => expect(onError).toHaveBeenCalledWith(refused));
  });
});
