const numberFormat = new Intl.NumberFormat("en");

/** A count as people read it: `20,000`, not `20000`. */
export function formatCount(n: number): string {
  return numberFormat.format(n);
}

/** `1 memory`, `20,000 memories`. */
export function countOf(n: number, one: string, many: string): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}
