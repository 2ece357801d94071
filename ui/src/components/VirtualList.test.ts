import { render } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";

import { header } from "../testing/shell";
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
});
