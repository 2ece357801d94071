// The peer `make bench` times `engram scan --all --json` against: the same output (every memory
// file under the dir, `*.md` but MEMORY.md, its frontmatter's name / description / type, its
// mtime and age, newest first) from a straightforward Node scanner using js-yaml, the YAML parser
// most Node tools use. It reads each file whole, as such tools do with readFile.
//
// Usage: node scan.js DIR
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import yaml from "js-yaml";

const TYPES = new Set(["user", "feedback", "project", "reference"]);
const DAY = 86_400_000;

function walk(dir, prefix, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, rel, out);
    else if (entry.isFile() && entry.name.endsWith(".md") && entry.name !== "MEMORY.md") out.push({ rel, path });
  }
  return out;
}

function frontmatter(text) {
  const lines = text.replace(/^\uFEFF/, "").split("\n");
  if (!/^---\s*$/.test(lines[0] ?? "")) return {};
  const end = lines.findIndex((line, i) => i > 0 && i < 30 && /^---\s*$/.test(line));
  if (end < 0) return {};
  try {
    const data = yaml.load(lines.slice(1, end).join("\n"));
    return data && typeof data === "object" ? data : {};
  } catch {
    return {};
  }
}

const now = Date.now();
const rows = walk(process.argv[2], "", []).map(({ rel, path }) => {
  const mtime = statSync(path).mtimeMs;
  const data = frontmatter(readFileSync(path, "utf8"));
  const type = TYPES.has(data.type) ? data.type : TYPES.has(data.metadata?.type) ? data.metadata.type : null;
  const days = Math.max(0, Math.floor((now - mtime) / DAY));
  return {
    file: rel,
    name: typeof data.name === "string" ? data.name : null,
    description: typeof data.description === "string" ? data.description : null,
    type,
    mtime: new Date(mtime).toISOString(),
    age: days === 0 ? "today" : days === 1 ? "yesterday" : `${days} days ago`,
    days,
  };
});
rows.sort((a, b) => (a.mtime < b.mtime ? 1 : a.mtime > b.mtime ? -1 : a.file.localeCompare(b.file)));
process.stdout.write(JSON.stringify(rows, null, 2) + "\n");
