// A question about a domain off the egress allowlist: the domain shown
// whole with its hidden characters marked, Allow first where Approve once
// sits and Refuse beside it; the answer goes to the app for that question,
// a question the app closes goes, and another conversation's is not shown.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import type { DomainQuestion } from "../lib/types";
import DomainQuestions from "./DomainQuestions.svelte";

function questions(conversation = "k1") {
  let send: (question: DomainQuestion) => void = () => undefined;
  const unsubscribe = vi.fn();
  const subscribe = vi.fn(async (handler: (question: DomainQuestion) => void) => {
    send = handler;
    return unsubscribe;
  });
  const answer = vi.fn(async () => true);
  const view = render(DomainQuestions, { props: { conversation: () => conversation, subscribe, answer } });
  return { send: (q: DomainQuestion) => send(q), answer, unsubscribe, view };
}

async function click(testid: string): Promise<void> {
  const button = screen.getByTestId(testid) as HTMLButtonElement;
  await vi.waitFor(() => expect(button.disabled).toBe(false), { timeout: 2000 });
  await fireEvent.mouseDown(button);
  await fireEvent.click(button, { detail: 1 });
}

describe("DomainQuestions", () => {
  it("shows the domain whole with hidden characters marked, Allow then Refuse, and sends the answer", async () => {
    const t = questions();
    await vi.waitFor(() => expect(screen.queryByTestId("domain-question")).toBeNull());
    // A zero-width space and a right-to-left override hide in a name.
    t.send({ kind: "asked", id: "q1", conversation: "k1", domain: "pay\u200bpal.example\u202ecom" });
    const shown = await screen.findByTestId("domain-question-domain");
    const marks = [...shown.querySelectorAll(".mark")];
    expect(marks.length).toBe(2);
    expect(shown.textContent).toContain("pay");
    expect(shown.textContent).toContain("pal.example");
    const buttons = [...(screen.getByTestId("allow-domain").parentElement as HTMLElement).querySelectorAll("button")];
    expect(buttons.map((b) => b.dataset.testid)).toEqual(["allow-domain", "refuse-domain"]);
    expect(buttons[0].textContent).toContain("in this conversation");
    expect(buttons[1].textContent).toBe("Refuse");
    await click("refuse-domain");
    expect(t.answer).toHaveBeenCalledWith("q1", false);
    expect(screen.queryByTestId("domain-question")).toBeNull();
  });

  it("allows, drops a question the app closed, and leaves another conversation's alone", async () => {
    const t = questions();
    await vi.waitFor(() => expect(screen.queryByTestId("domain-question")).toBeNull());
    t.send({ kind: "asked", id: "other", conversation: "k2", domain: "elsewhere.test" });
    t.send({ kind: "asked", id: "q1", conversation: "k1", domain: "first.test" });
    t.send({ kind: "asked", id: "q2", conversation: "k1", domain: "second.test" });
    expect((await screen.findByTestId("domain-question-domain")).textContent).toBe("first.test");
    // Timed out or its command stopped: the app closes it.
    t.send({ kind: "closed", id: "q1" });
    await vi.waitFor(() => expect(screen.getByTestId("domain-question-domain").textContent).toBe("second.test"));
    await click("allow-domain");
    expect(t.answer).toHaveBeenCalledWith("q2", true);
    expect(t.answer).toHaveBeenCalledTimes(1);
    expect(screen.queryByTestId("domain-question")).toBeNull();
    t.view.unmount();
    expect(t.unsubscribe).toHaveBeenCalled();
  });
});
