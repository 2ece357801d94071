//! Rendering: JSON for machines, aligned and (on a terminal) coloured text for people, and the
//! one-line `engram: …` messages on stderr. Colour follows the usual conventions: only when
//! stdout is a terminal, never with `NO_COLOR` set or `TERM=dumb`.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write};

use memory_engine::{Error, MemoryType, Result};
use serde::Serialize;

/// Prints `value` as pretty JSON followed by a newline.
pub fn print_json<T: Serialize + ?Sized>(value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::InvalidInput(format!("cannot render as JSON: {e}")))?;
    print(&format!("{text}\n"));
    Ok(())
}

/// Writes to stdout. A closed pipe (`engram scan | head`) is not an error worth reporting.
pub fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// `engram: <message>` on stderr.
pub fn error_line(message: &str) {
    eprintln!("engram: {message}");
}

/// `engram: warning: <message>` on stderr.
pub fn warning_line(message: &str) {
    eprintln!("engram: warning: {message}");
}

/// One warning per transcript line a command could not read: `<file>:<line>: skipped: <why>`.
pub fn skipped_lines(file: &std::path::Path, lines: &[memory_engine::transcript::SkippedLine]) {
    for skipped in lines {
        warning_line(&format!(
            "{}:{}: skipped: {}",
            file.display(),
            skipped.line,
            skipped.reason
        ));
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    Red,
    Green,
    Yellow,
    Blue,
    Magenta,
    Cyan,
    Dim,
    Bold,
}

impl Color {
    fn code(self) -> &'static str {
        match self {
            Color::Red => "31",
            Color::Green => "32",
            Color::Yellow => "33",
            Color::Blue => "34",
            Color::Magenta => "35",
            Color::Cyan => "36",
            Color::Dim => "2",
            Color::Bold => "1",
        }
    }
}

/// How text output is dressed: ANSI colour, and clipping of long cells for a person reading a
/// terminal (piped output is never clipped, so `grep` sees everything).
#[derive(Debug, Clone, Copy)]
pub struct Style {
    color: bool,
    terminal: bool,
}

impl Style {
    /// Colour when stdout is an interactive terminal and the user has not opted out.
    pub fn detect() -> Style {
        let terminal = std::io::stdout().is_terminal();
        let opted_out = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
            || std::env::var_os("TERM").is_some_and(|t| t == "dumb");
        Style {
            color: terminal && !opted_out,
            terminal,
        }
    }

    /// `text` cut to `max` characters with an ellipsis, on a terminal only.
    pub fn clip(self, text: &str, max: usize) -> String {
        if !self.terminal || text.chars().count() <= max {
            return text.to_string();
        }
        let kept: String = text.chars().take(max.saturating_sub(1)).collect();
        format!("{}…", kept.trim_end())
    }

    pub fn paint(self, color: Color, text: &str) -> String {
        if self.color && !text.is_empty() {
            format!("\x1b[{}m{text}\x1b[0m", color.code())
        } else {
            text.to_string()
        }
    }
}

/// The colour of a memory type's badge, so a glance tells the four apart.
pub fn type_color(memory_type: Option<MemoryType>) -> Color {
    match memory_type {
        Some(MemoryType::User) => Color::Blue,
        Some(MemoryType::Feedback) => Color::Magenta,
        Some(MemoryType::Project) => Color::Green,
        Some(MemoryType::Reference) => Color::Cyan,
        None => Color::Dim,
    }
}

/// `user`, `feedback`, … or `-` for a file without a (known) type.
pub fn type_label(memory_type: Option<MemoryType>) -> &'static str {
    memory_type.map_or("-", MemoryType::as_str)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// One table cell: its text and an optional colour applied after padding is computed.
#[derive(Debug, Clone)]
pub struct Cell {
    text: String,
    color: Option<Color>,
}

impl Cell {
    pub fn new(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            color: None,
        }
    }

    pub fn colored(text: impl Into<String>, color: Color) -> Cell {
        Cell {
            text: text.into(),
            color: Some(color),
        }
    }
}

/// Columns padded to their widest cell; the last column is never padded (it may be long).
pub struct Table {
    headers: Vec<&'static str>,
    aligns: Vec<Align>,
    rows: Vec<Vec<Cell>>,
}

impl Table {
    pub fn new(columns: &[(&'static str, Align)]) -> Table {
        Table {
            headers: columns.iter().map(|(h, _)| *h).collect(),
            aligns: columns.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    pub fn render(&self, style: Style) -> String {
        let width = |text: &str| text.chars().count();
        let mut widths: Vec<usize> = self.headers.iter().map(|h| width(h)).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate() {
                if let Some(w) = widths.get_mut(i) {
                    *w = (*w).max(width(&cell.text));
                }
            }
        }
        let mut out = String::new();
        let headers: Vec<Cell> = self
            .headers
            .iter()
            .map(|h| Cell::colored(*h, Color::Bold))
            .collect();
        for row in std::iter::once(&headers).chain(&self.rows) {
            let last = row.len().saturating_sub(1);
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                let pad = widths
                    .get(i)
                    .copied()
                    .unwrap_or(0)
                    .saturating_sub(width(&cell.text));
                let text = match cell.color {
                    Some(color) => style.paint(color, &cell.text),
                    None => cell.text.clone(),
                };
                let align = self.aligns.get(i).copied().unwrap_or(Align::Left);
                match align {
                    Align::Right => line.push_str(&format!("{}{text}", " ".repeat(pad))),
                    Align::Left if i == last => line.push_str(&text),
                    Align::Left => line.push_str(&format!("{text}{}", " ".repeat(pad))),
                }
                if i != last {
                    line.push_str("  ");
                }
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
        out
    }
}

/// `25000` → `25,000`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// `1 error`, `2 warnings`, …
pub fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("{count} {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_pads_every_column_but_the_last() {
        let mut table = Table::new(&[("A", Align::Left), ("N", Align::Right), ("Z", Align::Left)]);
        table.row(vec![Cell::new("long"), Cell::new("7"), Cell::new("x")]);
        table.row(vec![Cell::new("s"), Cell::new("123"), Cell::new("tail")]);
        let text = table.render(Style {
            color: false,
            terminal: false,
        });
        assert_eq!(text, "A       N  Z\nlong    7  x\ns     123  tail\n");
    }

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(968), "968");
        assert_eq!(thousands(25_000), "25,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn clip_only_shortens_for_a_terminal() {
        let piped = Style {
            color: false,
            terminal: false,
        };
        let tty = Style {
            color: false,
            terminal: true,
        };
        assert_eq!(piped.clip("abcdefgh", 5), "abcdefgh");
        assert_eq!(tty.clip("abcdefgh", 5), "abcd…");
        assert_eq!(tty.clip("abcde", 5), "abcde");
    }

    #[test]
    fn colour_codes_do_not_count_towards_width() {
        let mut table = Table::new(&[("T", Align::Left), ("F", Align::Left)]);
        table.row(vec![Cell::colored("user", Color::Blue), Cell::new("a.md")]);
        let text = table.render(Style {
            color: true,
            terminal: true,
        });
        assert!(text.contains("\x1b[34muser\x1b[0m  a.md"), "{text:?}");
    }
}
