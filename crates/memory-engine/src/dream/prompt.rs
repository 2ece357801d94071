//! What a model dream is told: the four phases and the rules (the system prompt), and a compact,
//! pre-digested brief of the memory dir (the first message) — the manifest, what lint found, the
//! near-duplicates, the index budget and the sessions to gather from — so the model spends its
//! turns consolidating rather than discovering.

use std::fmt::Write as _;

use crate::index::{MAX_ENTRY_CHARS, MAX_INDEX_BYTES, MAX_INDEX_LINES};
use crate::lint::{Finding, DUPLICATE_MEMORY};
use crate::memdir::MemoryDir;
use crate::scan::manifest_line;
use crate::Result;

/// The dream's instructions, after the agent loop's own preamble about the tools.
pub fn system_prompt() -> String {
    format!(
        "You are consolidating a coding agent's long-term memory: the markdown files of one \
memory directory, indexed by MEMORY.md. Work in four phases.

1. Orient: read MEMORY.md and skim the topic files the brief lists (read only what you need).
2. Gather: look for new signal in the daily logs (logs/) and, narrowly, in the session \
transcripts offered to you (transcript_grep first, then transcript_read around a hit). Never \
read a whole transcript when a grep will do.
3. Consolidate: merge new facts into the existing topic file they belong to (merge over create; \
never create a near-duplicate); turn relative dates (today, yesterday, last week) into absolute \
dates; when a newer fact contradicts an older one, fix the old memory at its source and delete \
what is now false.
4. Prune and index: MEMORY.md stays under {MAX_INDEX_LINES} lines and {MAX_INDEX_BYTES} bytes, one \
line per topic file of at most ~{MAX_ENTRY_CHARS} characters, `- [Title](file.md) — one-line \
hook`; remove lines pointing at files that no longer exist; keep its section headings.

Rules:
- Topic files keep their YAML frontmatter (name, description, type: user | feedback | project | \
reference) and every key you do not need to change, exactly as it is.
- Never save as memory: code patterns, architecture, file paths or project structure, git \
history, debugging recipes, anything already in CLAUDE.md, ephemeral task state, credentials.
- `user` and `feedback` memories are the person's own words about themselves and how they want \
to work: change them only to merge a duplicate or to drop what a later statement contradicts.
- Everything you write is staged for the person's review; explain each change in your last \
message, one line per file.
- Be economical: few turns, few reads. When nothing needs to change, say so and stop."
    )
}

/// The first message: today's date and the brief of `dir`.
pub fn brief(dir: &MemoryDir, sessions: &[(String, String)], today: &str) -> Result<String> {
    let headers = dir.scan(None)?;
    let index = dir.load_index()?;
    let lint = dir.lint()?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Today is {today}. The memory directory holds {} topic files.\n",
        headers.len()
    );
    out.push_str("## Manifest (newest first)\n");
    for header in &headers {
        out.push_str(&manifest_line(header));
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "\n## Index budget\nMEMORY.md: {} lines of {MAX_INDEX_LINES}, {} bytes of {MAX_INDEX_BYTES}{}.",
        index.lines,
        index.bytes,
        if index.truncated {
            " — over its caps: Claude Code does not load the end"
        } else {
            ""
        }
    );
    let (duplicates, findings): (Vec<&Finding>, Vec<&Finding>) = lint
        .findings
        .iter()
        .partition(|f| f.rule == DUPLICATE_MEMORY);
    out.push_str("\n## Near-duplicates\n");
    if duplicates.is_empty() {
        out.push_str("(none found)\n");
    }
    for finding in duplicates {
        let _ = writeln!(out, "- {}: {}", finding.file, finding.message);
    }
    out.push_str("\n## Lint findings\n");
    if findings.is_empty() {
        out.push_str("(none)\n");
    }
    for finding in findings {
        let line = finding.line.map(|l| format!(":{l}")).unwrap_or_default();
        let _ = writeln!(
            out,
            "- {} {}{line}: {}",
            finding.rule, finding.file, finding.message
        );
    }
    out.push_str("\n## Sessions since the last consolidation (read-only transcripts)\n");
    if sessions.is_empty() {
        out.push_str("(none)\n");
    }
    for (id, modified) in sessions {
        let _ = writeln!(out, "- {id} (last active {modified})");
    }
    out.push_str("\nConsolidate now.");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::fixtures::TempMemoryDir;

    #[test]
    fn the_brief_lists_the_manifest_findings_budget_and_sessions() {
        let fx = TempMemoryDir::new("memory");
        fx.write("MEMORY.md", "- [Gone](gone.md) \u{2014} missing\n");
        fx.write(
            "user_a.md",
            "---\nname: A\ndescription: who the user is\ntype: user\n---\nx\n",
        );
        let dir = fx.engine.memory_dir(&fx.root);
        let brief = brief(
            &dir,
            &[(
                "11111111-2222-3333-4444-555555555555".into(),
                "2026-11-20T10:00:00.000Z".into(),
            )],
            "2026-11-23",
        )
        .expect("brief");
        assert!(brief.starts_with("Today is 2026-11-23."), "{brief}");
        assert!(brief.contains("- [user] user_a.md ("), "{brief}");
        assert!(brief.contains("): who the user is"), "{brief}");
        assert!(brief.contains("dangling-pointer MEMORY.md:1"), "{brief}");
        assert!(brief.contains("orphan-file user_a.md"), "{brief}");
        assert!(brief.contains("MEMORY.md: 1 lines of 200"), "{brief}");
        assert!(
            brief.contains("- 11111111-2222-3333-4444-555555555555 (last active"),
            "{brief}"
        );
        let system = system_prompt();
        for rule in [
            "merge over create",
            "absolute",
            "contradicts",
            "200 lines",
            "~150 characters",
            "git",
        ] {
            assert!(system.contains(rule), "missing `{rule}`");
        }
    }
}
