// The "Compacted" notice opens to show the summary the model wrote, as the
// instructions notice shows the text the model was given.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import { callTools, fakeIpc, say, use } from "../test/fakeIpc";
import { AgentLoop } from "../lib/agent/loop";
import { NO_INSTRUCTIONS } from "../lib/agent/instructions";
import Chat from "./Chat.svelte";

describe("the Compacted notice", () => {
  it("shows the model's summary when opened", async () => {
    const reads = [1, 2, 3, 4].map((n) => callTools(use("read_file", { path: `f${n}.txt` })));
    const summary = "## Task\nRead four files.\n## Open\nNothing.";
    const fake = fakeIpc([...reads, say("done"), say(summary)]);
    const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
    render(Chat, { props: { loop } });
    await loop.send("read four files");
    await fireEvent.click(screen.getByTestId("compact"));
    const notice = await vi.waitFor(() => {
      const found = screen.getAllByTestId("notice").find((n) => n.textContent?.includes("Compacted:"));
      if (!found) throw new Error("no Compacted notice yet");
      return found;
    });
    expect(notice.tagName).toBe("DETAILS");
    expect(notice.querySelector("summary")?.textContent).toContain("earlier messages were summarized");
    expect(notice.querySelector(".notice-detail")?.textContent).toBe(summary);
    // Text, not Markdown rendered into the app: the model's words stay data.
    expect(notice.querySelector("h2")).toBeNull();
  });
});
