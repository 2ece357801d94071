// How long ago something happened, in the words a file manager would use. Pure (the current time
// is a parameter) so it is tested without faking the clock.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const dateFormat = new Intl.DateTimeFormat("en", {
  day: "numeric",
  month: "short",
  year: "numeric",
});

function plural(count: number, unit: string): string {
  return `${count} ${unit}${count === 1 ? "" : "s"} ago`;
}

/** "just now", "5 minutes ago", "3 hours ago", "yesterday", "12 days ago", then a date. A time
 * in the future (a clock skewed between machines) reads "just now" rather than a negative age. */
export function relativeAge(iso: string, now: Date): string {
  const then = new Date(iso);
  const elapsed = now.getTime() - then.getTime();
  if (Number.isNaN(elapsed)) return "unknown";
  if (elapsed < MINUTE) return "just now";
  if (elapsed < HOUR) return plural(Math.floor(elapsed / MINUTE), "minute");
  if (elapsed < DAY) return plural(Math.floor(elapsed / HOUR), "hour");
  const days = Math.floor(elapsed / DAY);
  if (days === 1) return "yesterday";
  if (days < 30) return `${days} days ago`;
  return dateFormat.format(then);
}

/** The full local date and time, for tooltips. */
export function fullTime(iso: string): string {
  const then = new Date(iso);
  return Number.isNaN(then.getTime())
    ? iso
    : then.toLocaleString("en", { dateStyle: "medium", timeStyle: "short" });
}
