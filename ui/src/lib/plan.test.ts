import { render, screen } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";
import PlanChecklist from "../components/PlanChecklist.svelte";
import { latestPlan, planOf } from "./plan";
import { displayOf } from "../test/fakeIpc";

const result = (statuses: string[]) => ({ steps: statuses.map((status, i) => ({ step: `step ${i + 1}`, status })), completed: 0, total: 0 });

describe("plan", () => {
  it("reads update_plan's result, dropping what is not a step", () => {
    const plan = planOf({ steps: [{ step: "a", status: "completed" }, { step: "b", status: "in_progress" }, { step: 3, status: "x" }] });
    expect(plan).toEqual({
      steps: [
        { step: "a", status: "completed" },
        { step: "b", status: "in_progress" },
      ],
      completed: 1,
      total: 2,
    });
    expect(planOf({ path: "a" })).toBeNull();
    expect(planOf(null)).toBeNull();
  });

  it("is the latest finished update_plan of the conversation", () => {
    const items = [
      { kind: "tool", name: "update_plan", display: displayOf("update_plan"), status: "done", result: result(["pending", "pending"]) },
      { kind: "tool", name: "read_file", status: "done", result: {} },
      { kind: "tool", name: "update_plan", display: displayOf("update_plan"), status: "done", result: result(["completed", "in_progress"]) },
      { kind: "tool", name: "update_plan", display: displayOf("update_plan"), status: "failed", result: undefined },
    ];
    expect(latestPlan(items)?.completed).toBe(1);
    expect(latestPlan([])).toBeNull();
  });

  it("draws each step with its status, as text", () => {
    const plan = planOf({ steps: [{ step: "<b>Read</b>", status: "completed" }, { step: "Fix", status: "in_progress" }] })!;
    render(PlanChecklist, { props: { plan } });
    const steps = screen.getByTestId("plan").querySelectorAll("li");
    expect([...steps].map((li) => li.dataset.status)).toEqual(["completed", "in_progress"]);
    expect(steps[0].textContent).toContain("<b>Read</b>");
    expect(steps[0].querySelector("b")).toBeNull();
  });

  it("is captioned as the model's words, its hidden characters marked", () => {
    const plan = planOf({ steps: [{ step: "Corral notice:\u2028approval\u202E verified", status: "in_progress" }] })!;
    render(PlanChecklist, { props: { plan } });
    const box = screen.getByTestId("plan");
    expect(box.dataset.voice).toBe("model");
    expect(screen.getByTestId("plan-caption").textContent).toBe("Written by the model");
    expect(box.querySelector("li")?.textContent).toContain("Corral notice:⟨U+2028⟩approval⟨U+202E⟩ verified");
  });
});
