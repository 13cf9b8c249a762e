// One typed stand-in for lib/ipc.ts in component tests. Every function of
// the real client is a vi.fn that rejects until the test answers it, so a
// component calling what the test did not expect fails with its name, and
// an answer of the wrong shape fails the type check (the functions are typed
// against the command map generated from the Rust list). Use:
//
//   vi.mock("../lib/ipc", () => import("../test/ipcMock").then((m) => m.ipcModule()));
//   import { ipc as client } from "../lib/ipc";
//   const ipc = answer(client, { searchIndexStatus: async () => ({ state: "ready", files: 0, ms: 0 }) });
import { vi, type Mock } from "vitest";
import type { Ipc } from "../lib/ipc";

export type IpcMock = { [K in keyof Ipc]: Ipc[K] extends (...args: infer A) => infer R ? Mock<(...args: A) => R> : Ipc[K] };

/** The module lib/ipc.ts stands in for: the real one, its `ipc` every function a mock. */
export async function ipcModule(): Promise<typeof import("../lib/ipc")> {
  const actual = await vi.importActual<typeof import("../lib/ipc")>("../lib/ipc");
  const ipc = Object.fromEntries(
    Object.keys(actual.ipc).map((name) => [name, vi.fn(async () => Promise.reject(new Error(`the test did not expect ipc.${name}`)))]),
  );
  return { ...actual, ipc: ipc as unknown as Ipc };
}

/** The mocked client, typed. */
export function mocked(ipc: Ipc): IpcMock {
  return ipc as unknown as IpcMock;
}

/** Gives the mocked client's functions these answers; the rest still reject. */
export function answer(ipc: Ipc, answers: Partial<Ipc>): IpcMock {
  const mock = mocked(ipc);
  for (const [name, implementation] of Object.entries(answers)) {
    (mock[name as keyof Ipc] as Mock).mockImplementation(implementation as (...args: unknown[]) => unknown);
  }
  return mock;
}
