// The model's plan (update_plan's result) as the window shows it.
import type { PlanStep, ToolDisplay, UpdatePlanOutput } from "./types";

/** update_plan's result, as the Rust tool writes it. */
export type Plan = UpdatePlanOutput;

/** The plan in an update_plan result, or null when it is not one. */
export function planOf(result: unknown): Plan | null {
  if (typeof result !== "object" || result === null) return null;
  const steps = (result as { steps?: unknown }).steps;
  if (!Array.isArray(steps)) return null;
  const valid = steps.filter(
    (s): s is PlanStep =>
      typeof s === "object" && s !== null && typeof s.step === "string" && ["pending", "in_progress", "completed"].includes(s.status),
  );
  return { steps: valid, completed: valid.filter((s) => s.status === "completed").length, total: valid.length };
}

/** The latest plan among the conversation's tool cards. */
export function latestPlan(items: readonly { kind: string; display?: ToolDisplay | undefined; status?: string; result?: unknown }[]): Plan | null {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item.kind === "tool" && item.display?.result === "plan" && item.status === "done") return planOf(item.result);
  }
  return null;
}
