//! The bits of Markdown the offline dream's rules read: headings, list items, code fences, where
//! a file's body starts.

pub(super) fn is_heading(line: &str) -> bool {
    let trimmed = line.trim_start_matches(' ');
    let hashes = trimmed.len() - trimmed.trim_start_matches('#').len();
    line.len() - trimmed.len() <= 3
        && (1..=6).contains(&hashes)
        && trimmed[hashes..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace)
}

pub(super) fn is_list_item(line: &str) -> bool {
    list_marker_len(line.trim_start()).is_some()
}

/// The length of the list marker (`- `, `* `, `+ `, `1. `, `1) `) `text` starts with.
pub(super) fn list_marker_len(text: &str) -> Option<usize> {
    let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let marker = match text.as_bytes().get(digits) {
        Some(b'-' | b'*' | b'+') if digits == 0 => 1,
        Some(b'.' | b')') if (1..=9).contains(&digits) => digits + 1,
        _ => return None,
    };
    match text.as_bytes().get(marker) {
        Some(b' ' | b'\t') => Some(marker + 1),
        _ => None,
    }
}

/// The opening of a code fence: three or more backticks or tildes, indented at most 3 spaces.
pub(super) fn fence_marker(line: &str) -> Option<(u8, usize)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let c = *trimmed.as_bytes().first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let run = trimmed.bytes().take_while(|&b| b == c).count();
    (run >= 3).then_some((c, run))
}

pub(super) fn closes_fence(line: &str, (c, run): (u8, usize)) -> bool {
    fence_marker(line).is_some_and(|(close, len)| {
        close == c && len >= run && line.trim_start_matches(' ')[len..].trim().is_empty()
    })
}

/// The byte offset where the body of `text` starts: after the closing `---` of a leading
/// frontmatter block, or 0 when there is none. `None` when a block opens and never closes.
pub(super) fn body_start(text: &str) -> Option<usize> {
    let is_fence = |line: &str| {
        line.strip_prefix("---")
            .is_some_and(|rest| rest.trim_end().is_empty())
    };
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut lines = text[bom..].split_inclusive('\n');
    let Some(first) = lines.next() else {
        return Some(0);
    };
    if !is_fence(first) {
        return Some(0);
    }
    let mut offset = bom + first.len();
    for line in lines {
        offset += line.len();
        if is_fence(line) {
            return Some(offset);
        }
    }
    None
}
