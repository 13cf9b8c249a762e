// The conversation list tells conversations apart: two with one title say
// when each started; a long title keeps its age beside it (the ellipsis
// itself is drawn by the window, see e2e/tests/first-hour.test.js); an
// error reads as a message and a hint, two sentences.
import { render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import type { ConversationSummary, WireError } from "../lib/types";
import ConversationList from "./ConversationList.svelte";

const NOW = Date.now();

function summary(id: string, title: string, createdMinutesAgo: number): ConversationSummary {
  const created = NOW - createdMinutesAgo * 60_000;
  return { id, project: "/p", title, first_line: title, created_ms: created, updated_ms: created, model: "m", input_tokens: 0, output_tokens: 0, entries: 2 } as ConversationSummary;
}

function show(conversations: ConversationSummary[], error: WireError | null = null, current: string | null = null): void {
  render(ConversationList, {
    props: { conversations, current, busy: false, error, search: async () => [], onOpen: vi.fn(), onRename: vi.fn(), onDelete: vi.fn(), onExport: vi.fn() },
  });
}

describe("the conversation list", () => {
  it("says when each conversation of a repeated title started, and nothing more for the others", () => {
    show([summary("a", "Fix the tests", 5), summary("b", "Add a README", 30), summary("c", "Fix the tests", 90)]);
    const rows = screen.getAllByTestId("conversation-item");
    const started = (row: HTMLElement): string | null => row.querySelector('[data-testid="conversation-started"]')?.textContent ?? null;
    expect(started(rows[0])).toMatch(/^started /);
    expect(started(rows[2])).toMatch(/^started /);
    expect(started(rows[0])).not.toBe(started(rows[2]));
    expect(started(rows[1])).toBeNull();
  });

  it("says when the current conversation started, whatever its title", () => {
    show([summary("a", "Fix the tests", 5), summary("b", "Add a README", 30)], null, "b");
    const rows = screen.getAllByTestId("conversation-item");
    const started = (row: HTMLElement): string | null => row.querySelector('[data-testid="conversation-started"]')?.textContent ?? null;
    const at = new Date(NOW - 30 * 60_000).toLocaleString("en", { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
    expect(started(rows[1])).toBe(`started ${at}`);
    expect(started(rows[0])).toBeNull();
  });

  it("keeps the age beside a long title, and the whole title in its tooltip", () => {
    const long = "Refactor the temperature conversion module and its command line so that every unit has tests";
    show([summary("a", long, 3)]);
    const title = screen.getByTestId("conversation-title");
    expect(title.getAttribute("title")).toBe(long);
    expect(screen.getByTestId("conversation-age").textContent).toBe("3 min ago");
    // Title and age share one row; the title is the one that gives way.
    expect(title.parentElement).toBe(screen.getByTestId("conversation-age").parentElement);
  });

  it("writes a failure as its message and its hint, two sentences", () => {
    show([], { code: "io", message: "the history could not be read: Name or service not known", hint: "Check the data folder.", retryable: false, details: {} });
    expect(screen.getByTestId("conversations-error").textContent).toBe("the history could not be read: Name or service not known. Check the data folder.");
  });
});
