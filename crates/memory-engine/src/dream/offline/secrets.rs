//! Step 6 of the offline dream: likely secrets flagged, never changed (see the module docs of
//! [`super`]).

use chrono::TimeZone;

use super::Planner;
use crate::error::Result;
use crate::lint::{Severity, SECRET};
use crate::secrets::{by_line, scan_secrets};

impl<Tz: TimeZone> Planner<'_, Tz> {
    /// Step 6: likely secrets in every file as it will be once the change set is applied.
    pub(super) fn flag_secrets(&mut self) -> Result<()> {
        let mut files: Vec<String> = self
            .live()
            .into_iter()
            .map(|i| self.files[i].rel.clone())
            .collect();
        files.extend(self.logs.iter().cloned());
        files.extend(self.indexes.iter().cloned());
        for file in files {
            let Some(text) = self.set.read(&file)? else {
                continue;
            };
            for (line, rules) in by_line(&scan_secrets(&text)) {
                self.flag(
                    SECRET,
                    Severity::Error,
                    &file,
                    Some(line),
                    format!(
                        "looks like a credential ({}); never store secrets in memory — left unchanged",
                        rules.join(", ")
                    ),
                );
            }
        }
        Ok(())
    }
}
