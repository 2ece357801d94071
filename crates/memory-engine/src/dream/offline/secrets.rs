//! Step 6 of the offline dream: secrets redacted, as `engram secrets redact` does, inside the
//! dream's change set — every file as it will be once the set is applied (see the module docs of
//! [`super`]). Only the secret goes (`[REDACTED:<rule>]`, a rule's capture group), the reason
//! names the rule and the line; a finding redaction cannot reach is flagged for a person.

use chrono::TimeZone;

use super::{names, plural, Planner};
use crate::error::Result;
use crate::lint::{Severity, SECRET};
use crate::secrets::{by_line, redact, scan_secrets};

impl<Tz: TimeZone> Planner<'_, Tz> {
    /// Step 6.
    pub(super) fn redact_secrets(&mut self) -> Result<()> {
        let mut files: Vec<(String, Option<usize>)> = self
            .live()
            .into_iter()
            .map(|i| (self.files[i].rel.clone(), Some(i)))
            .collect();
        files.extend(self.logs.iter().map(|l| (l.clone(), None)));
        files.extend(self.indexes.iter().map(|l| (l.clone(), None)));
        // Files the dream itself adds (a topic index, notes moved out of the index).
        let added: Vec<String> = self
            .set
            .changes
            .iter()
            .filter(|c| c.before.is_none() && c.after.is_some())
            .map(|c| c.file.clone())
            .filter(|f| !files.iter().any(|(known, _)| known == f))
            .collect();
        files.extend(added.into_iter().map(|f| (f, None)));
        let mut redacted = Vec::new();
        for (file, topic) in files {
            let Some(text) = self.set.read(&file)? else {
                continue;
            };
            let (clean, replaced) = redact(&text);
            let text = if replaced.is_empty() {
                text
            } else {
                let mut rules: Vec<&str> = replaced.iter().map(|m| m.rule).collect();
                rules.sort_unstable();
                rules.dedup();
                let lines: Vec<String> = replaced.iter().map(|m| m.line.to_string()).collect();
                let reason = format!(
                    "{} replaced by [REDACTED:…] on line {} ({}): never store secrets in memory",
                    plural(replaced.len(), "a secret", "secrets"),
                    lines.join(", "),
                    rules.join(", ")
                );
                self.set.stage_write(&file, clean.clone(), &reason)?;
                if let Some(i) = topic {
                    self.protect(i);
                }
                redacted.push(file.clone());
                clean
            };
            for (line, rules) in by_line(&scan_secrets(&text)) {
                self.flag(
                    SECRET,
                    Severity::Error,
                    &file,
                    Some(line),
                    format!(
                        "looks like a credential ({}) the dream could not redact; never store secrets in memory",
                        rules.join(", ")
                    ),
                );
            }
        }
        if !redacted.is_empty() {
            self.notes.push(format!(
                "secrets redacted in {} {} ({})",
                redacted.len(),
                plural(redacted.len(), "file", "files"),
                names(&redacted)
            ));
        }
        Ok(())
    }
}
