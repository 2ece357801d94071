import { describe, expect, it } from "vitest";

import { isCommand, isTyping } from "./keys";

describe("isCommand", () => {
  it("is Ctrl or Cmd with the key, and nothing else", () => {
    expect(isCommand(new KeyboardEvent("keydown", { key: "s", ctrlKey: true }), "s")).toBe(true);
    expect(isCommand(new KeyboardEvent("keydown", { key: "S", metaKey: true }), "s")).toBe(true);
    expect(isCommand(new KeyboardEvent("keydown", { key: "s" }), "s")).toBe(false);
    const shifted = new KeyboardEvent("keydown", { key: "s", ctrlKey: true, shiftKey: true });
    expect(isCommand(shifted, "s")).toBe(false);
  });
});

describe("isTyping", () => {
  it("is true for keys sent to text fields only", () => {
    const input = document.createElement("input");
    document.body.append(input);
    const event = new KeyboardEvent("keydown", { key: "/", bubbles: true });
    let typing: boolean | null = null;
    input.addEventListener("keydown", (e) => (typing = isTyping(e)));
    input.dispatchEvent(event);
    expect(typing).toBe(true);

    const button = document.createElement("button");
    document.body.append(button);
    button.addEventListener("keydown", (e) => (typing = isTyping(e)));
    button.dispatchEvent(new KeyboardEvent("keydown", { key: "/", bubbles: true }));
    expect(typing).toBe(false);
    input.remove();
    button.remove();
  });
});
