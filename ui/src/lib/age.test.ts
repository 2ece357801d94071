import { describe, expect, it } from "vitest";

import { relativeAge } from "./age";

const now = new Date("2026-11-22T12:00:00Z");
const ago = (ms: number) => new Date(now.getTime() - ms).toISOString();
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

describe("relativeAge", () => {
  it("names each range by its largest whole unit", () => {
    expect(relativeAge(ago(59_999), now)).toBe("just now");
    expect(relativeAge(ago(MINUTE), now)).toBe("1 minute ago");
    expect(relativeAge(ago(59 * MINUTE), now)).toBe("59 minutes ago");
    expect(relativeAge(ago(HOUR), now)).toBe("1 hour ago");
    expect(relativeAge(ago(23 * HOUR + 59 * MINUTE), now)).toBe("23 hours ago");
    expect(relativeAge(ago(DAY), now)).toBe("yesterday");
    expect(relativeAge(ago(2 * DAY), now)).toBe("2 days ago");
    expect(relativeAge(ago(29 * DAY), now)).toBe("29 days ago");
  });

  it("switches to a date after a month, where a day count stops being useful", () => {
    expect(relativeAge("2026-03-12T12:00:00Z", now)).toBe("Mar 12, 2026");
  });

  it("reads a time from a skewed clock as just now, and garbage as unknown", () => {
    expect(relativeAge(ago(-5 * MINUTE), now)).toBe("just now");
    expect(relativeAge("not a time", now)).toBe("unknown");
  });
});
