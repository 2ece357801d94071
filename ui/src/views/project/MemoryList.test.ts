import { render } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";

import { header } from "../../testing/shell";
import MemoryList from "./MemoryList.svelte";

describe("the memory list", () => {
  it("renders only the rows in view of 20,000 memories, and the rest on scroll", async () => {
    const memories = Array.from({ length: 20_000 }, (_, i) =>
      header({ file: `m${i}.md`, name: `Memory ${i}` }),
    );
    const { container } = render(MemoryList, {
      memories,
      findings: new Map(),
      selected: null,
      onselect: () => {},
    });

    const rendered = () => container.querySelectorAll("[data-file]");
    expect(rendered().length).toBeGreaterThan(0);
    expect(rendered().length).toBeLessThan(100);
    const rows = container.querySelector(".spacer") as HTMLElement;
    expect(rows.style.height).toBe(`${20_000 * 64}px`);

    const viewport = container.querySelector("[role='listbox']") as HTMLElement;
    viewport.scrollTop = 64 * 10_000;
    viewport.dispatchEvent(new Event("scroll"));
    await expect.poll(() => container.querySelector("[data-file='m10000.md']")).not.toBeNull();
    expect(container.querySelector("[data-file='m0.md']")).toBeNull();
    expect(rendered().length).toBeLessThan(100);
  });

  it("scrolls to a new selection, but not when the list changes around the selected row", async () => {
    const memories = Array.from({ length: 2_000 }, (_, i) =>
      header({ file: `m${i}.md`, name: `Memory ${i}` }),
    );
    const props = {
      memories,
      findings: new Map(),
      selected: "m1500.md" as string | null,
      onselect: () => {},
    };
    const { container, rerender } = render(MemoryList, props);
    const viewport = container.querySelector("[role='listbox']") as HTMLElement;
    await expect.poll(() => viewport.scrollTop).toBeGreaterThan(64 * 1_000);

    // The user scrolls back to the top, away from the selection.
    viewport.scrollTop = 0;
    viewport.dispatchEvent(new Event("scroll"));
    // A memory lands above the selected one: its index shifts, the selection does not.
    await rerender({ memories: [header({ file: "new.md", name: "New" }), ...memories] });
    await expect.poll(() => container.querySelector("[data-file='new.md']")).not.toBeNull();
    expect(viewport.scrollTop).toBe(0);

    await rerender({ selected: "m1800.md" });
    await expect.poll(() => viewport.scrollTop).toBeGreaterThan(64 * 1_500);
  });
});
