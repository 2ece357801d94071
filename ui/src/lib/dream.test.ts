import { describe, expect, it } from "vitest";

import { changeSet, dreamSettings, dreamStatus } from "../testing/dreams";
import { gateVerdict, gateWords, schedulerWords, waitingByProject, waitingText } from "./dream";

describe("gateWords", () => {
  it("reads hours, sessions and the lock in one line", () => {
    expect(gateWords(dreamStatus())).toBe("18 h of 24 · 3 of 5 sessions · lock free");
    expect(gateWords(dreamStatus({ hoursSince: null, sessionsSince: 0, minSessions: 1 }))).toBe(
      "never consolidated · 0 of 1 session · lock free",
    );
  });

  it("names the holder of a live lock; a dead holder's or an hour-old lock is free", () => {
    const now = new Date("2026-11-23T12:00:00Z");
    const lock = { path: "/m/.consolidate-lock", exists: true, pid: 31337, alive: true, mtime: "2026-11-23T11:05:00Z" };
    expect(gateWords(dreamStatus({ lock }), now)).toContain("lock held by pid 31337");
    expect(gateWords(dreamStatus({ lock: { ...lock, alive: false } }), now)).toContain("lock free");
    expect(gateWords(dreamStatus({ lock: { ...lock, mtime: "2026-11-23T10:59:00Z" } }), now)).toContain("lock free");
  });
});

describe("gateVerdict", () => {
  it("names the first closed gate with its numbers", () => {
    const settings = dreamSettings();
    expect(gateVerdict(dreamStatus({ blockedBy: "sessions", sessionsSince: 1 }), settings).text).toBe(
      "Not due: 1 of 5 sessions since the last consolidation.",
    );
    const now = new Date("2026-11-26T10:00:00Z");
    expect(gateVerdict(dreamStatus({ blockedBy: "throttle" }), settings, now).text).toBe(
      "Not due: sessions were counted a short while ago.",
    );
    expect(
      gateVerdict(dreamStatus({ blockedBy: "throttle", nextCheck: "2026-11-26T10:04:30Z" }), settings, now).text,
    ).toBe("Not due: sessions were counted a short while ago; they are counted again in 5 min.");
    expect(gateVerdict(dreamStatus({ blockedBy: "disabled" }), settings)).toEqual({
      due: false,
      text: "Off: background dreams skip this project.",
    });
  });

  it("says a model dream waits for tomorrow once the token budget is reached", () => {
    const budget = { day: "2026-11-22", tokensToday: 101_000, dailyTokens: 100_000, reached: true };
    expect(gateVerdict(dreamStatus({ blockedBy: "budget", budget }), dreamSettings())).toEqual({
      due: false,
      text: "Waiting: today's token budget is reached (101,000 of 100,000 tokens); model dreams resume tomorrow.",
    });
  });

  it("says when a due dream waits for a paused scheduler", () => {
    const due = dreamStatus({ blockedBy: null, due: true });
    expect(gateVerdict(due, dreamSettings()).due).toBe(true);
    expect(gateVerdict(due, dreamSettings({ background: false })).text).toBe("Due, but background dreams are paused.");
    const now = new Date("2026-11-26T10:00:00Z");
    const soon = dreamStatus({ blockedBy: null, due: true, nextCheck: "2026-11-26T10:00:03Z" });
    expect(gateVerdict(soon, dreamSettings(), now).text).toBe("Due: the next background check (in 3 s) dreams on this project.");
  });

  it("says when the scheduler looks next, or that none runs", () => {
    const now = new Date("2026-11-26T10:00:00Z");
    expect(schedulerWords(dreamStatus(), now)).toBe("No background scheduler is running.");
    expect(schedulerWords(dreamStatus({ nextCheck: "2026-11-26T10:05:00Z" }), now)).toBe("Next background check in 5 min.");
  });
});

describe("waitingByProject", () => {
  it("counts only the sets still waiting, per project", () => {
    const counts = waitingByProject([
      changeSet(),
      changeSet({ id: "b" }),
      changeSet({ id: "c", status: "undone" }),
      changeSet({ id: "d", project: "-other" }),
    ]);
    expect([...counts]).toEqual([
      ["-path-to-Demo", 2],
      ["-other", 1],
    ]);
    expect(waitingText(1)).toBe("1 change to review");
    expect(waitingText(2)).toBe("2 changes to review");
  });
});
