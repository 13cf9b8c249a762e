// The would-be change of a write, edit or delete, as the approval card and
// the tool card show it. It is computed in Rust by the code that will make
// the change, on the same bytes (check_call's `preview`); nothing here
// re-implements a tool.
import type { PolicyCheck } from "../types";
import type { Preview } from "./state";

/** The card's preview from check_call's answer, if the tool has one. */
export function previewOf(check: PolicyCheck, path: unknown): Preview | undefined {
  if (check.preview) {
    const { path: shown, before, after } = check.preview;
    return { kind: "diff", path: shown, before, after };
  }
  if (check.preview_error) {
    const why = `${check.preview_error.code}: ${check.preview_error.message}`;
    return { kind: "unavailable", path: typeof path === "string" ? path : "", reason: why };
  }
  return undefined;
}
