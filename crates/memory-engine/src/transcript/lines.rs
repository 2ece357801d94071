//! Reading a transcript line by line in bounded memory: one reusable buffer, a cap on a single
//! line's length, the byte offset of each line (so a line can be read again later without keeping
//! it), a leading BOM and blank lines tolerated.

use std::io::{self, BufRead};

/// A line longer than this is skipped (and reported) rather than held: a transcript line is one
/// message, and even a huge tool result stays far below it. Keeps any file in bounded memory.
pub const MAX_LINE_BYTES: usize = 32 << 20;

/// One non-blank line of a transcript.
pub struct Line<'a> {
    /// 1-based, counting every line of the file (blank ones too), as an editor shows it.
    pub number: usize,
    /// Byte offset of the line's first byte in the file.
    pub offset: u64,
    /// The line without its `\n` (and without a `\r` before it, or a BOM on the first line).
    /// Empty when the line was longer than [`MAX_LINE_BYTES`]: see `too_long`.
    pub bytes: &'a [u8],
    /// The line's length in the file, terminator excluded.
    pub len: u64,
    pub too_long: bool,
}

pub struct LineReader<R> {
    reader: R,
    buf: Vec<u8>,
    offset: u64,
    number: usize,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(reader: R) -> Self {
        Self::starting_at(reader, 0, 0)
    }

    /// A reader positioned at `offset` (the start of line `number + 1`): for reading only what
    /// was appended since a previous pass.
    pub fn starting_at(reader: R, offset: u64, number: usize) -> Self {
        LineReader {
            reader,
            buf: Vec::new(),
            offset,
            number,
        }
    }

    /// The next non-blank line, or `None` at the end of the file.
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        let (start, body, len, too_long) = loop {
            self.buf.clear();
            let start = self.offset;
            let (consumed, too_long, ended) = self.read_bounded()?;
            if consumed == 0 {
                return Ok(None);
            }
            self.offset += consumed;
            self.number += 1;
            let mut len = consumed - u64::from(ended);
            let mut body = 0..self.buf.len();
            let mut start = start;
            if start == 0 && self.buf.starts_with(b"\xEF\xBB\xBF") {
                body.start = 3;
                start += 3;
                len -= 3;
            }
            if self.buf[body.clone()].ends_with(b"\r") {
                body.end -= 1;
                len -= 1;
            }
            if too_long
                || !self.buf[body.clone()]
                    .iter()
                    .all(|b| b.is_ascii_whitespace())
            {
                break (start, body, len, too_long);
            }
        };
        Ok(Some(Line {
            number: self.number,
            offset: start,
            bytes: if too_long { &[] } else { &self.buf[body] },
            len,
            too_long,
        }))
    }

    /// Reads up to and including the next `\n` into `buf`, keeping at most [`MAX_LINE_BYTES`].
    /// Returns the bytes consumed, whether the line was too long, and whether it ended in `\n`.
    fn read_bounded(&mut self) -> io::Result<(u64, bool, bool)> {
        let mut consumed = 0u64;
        let mut too_long = false;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok((consumed, too_long, false));
            }
            let (chunk, ended) = match memchr::memchr(b'\n', available) {
                Some(at) => (&available[..at], true),
                None => (available, false),
            };
            if !too_long && self.buf.len() + chunk.len() <= MAX_LINE_BYTES {
                self.buf.extend_from_slice(chunk);
            } else {
                too_long = true;
                self.buf.clear();
            }
            let used = chunk.len() + usize::from(ended);
            self.reader.consume(used);
            consumed += used as u64;
            if ended {
                return Ok((consumed, too_long, true));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<(usize, u64, Vec<u8>)> {
        let mut reader = LineReader::new(io::BufReader::with_capacity(4, input));
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().expect("test input") {
            out.push((line.number, line.offset, line.bytes.to_vec()));
        }
        out
    }

    #[test]
    fn bom_crlf_blank_lines_and_a_missing_final_newline() {
        let got = lines(b"\xEF\xBB\xBF{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\"");
        assert_eq!(
            got,
            vec![
                (1, 3, b"{\"a\":1}".to_vec()),
                (4, 16, b"{\"b\":2}".to_vec()),
                (5, 24, b"{\"c\"".to_vec()),
            ]
        );
    }

    #[test]
    fn offsets_let_a_line_be_read_again() {
        let input = b"first\nsecond line\nthird";
        let mut reader = LineReader::new(io::BufReader::with_capacity(3, &input[..]));
        while let Some(line) = reader.next_line().expect("test input") {
            let at = line.offset as usize;
            assert_eq!(&input[at..at + line.len as usize], line.bytes);
        }
    }
}
