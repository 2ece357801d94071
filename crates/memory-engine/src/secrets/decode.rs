//! gitleaks' decoding passes: text that is percent-, hex- or base64-encoded is decoded in place
//! (printable ASCII results only) and the result scanned again, up to [`MAX_DEPTH`] times for
//! encodings inside encodings. A secret found in decoded text is reported where its encoded form
//! is in the scanned text. The encoded forms are gitleaks' (`detect/codec`), in its order of
//! precedence: a match that touches one of higher precedence waits for the next pass.

use std::ops::Range;
use std::sync::OnceLock;

use base64::Engine as _;
use regex::bytes::Regex;

/// gitleaks' default `--max-decode-depth`.
pub(super) const MAX_DEPTH: usize = 5;

/// One decoded stretch of a pass: where the encoded text was in the pass's input, and where its
/// decoded text is in the pass's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Segment {
    pub encoded: Range<usize>,
    pub decoded: Range<usize>,
}

/// A pass's output: its input with every decodable stretch decoded, and where those are.
#[derive(Debug)]
pub(super) struct Pass {
    pub text: Vec<u8>,
    pub segments: Vec<Segment>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Encoding {
    // Lowest precedence first.
    Base64,
    Hex,
    Percent,
}

fn encodings() -> &'static Regex {
    static ENCODINGS: OnceLock<Regex> = OnceLock::new();
    ENCODINGS.get_or_init(|| {
        Regex::new(r"(?-u)(?:%[0-9A-Fa-f]{2})+|[0-9A-Fa-f]{32,}|[\w/+-]{16,}={0,3}")
            .expect("the encodings pattern compiles")
    })
}

/// Decodes what `text` holds encoded, or `None` when nothing decodes.
pub(super) fn pass(text: &[u8]) -> Option<Pass> {
    // Which alternative matched is told by the text (no capture groups: a plain search halves
    // the time over a long transcript): only percent starts with `%`, and where 32 hex digits
    // start, the hex alternative wins over base64.
    let found: Vec<(Encoding, Range<usize>)> = encodings()
        .find_iter(text)
        .map(|found| {
            let encoding = match found.as_bytes() {
                [b'%', ..] => Encoding::Percent,
                bytes if bytes.len() >= 32 && bytes.iter().all(u8::is_ascii_hexdigit) => {
                    Encoding::Hex
                }
                _ => Encoding::Base64,
            };
            (encoding, found.range())
        })
        .collect();
    let mut out = Vec::new();
    let mut segments = Vec::new();
    let mut copied = 0;
    for (i, (encoding, range)) in found.iter().enumerate() {
        let touches_stronger = |neighbour: Option<&(Encoding, Range<usize>)>| {
            neighbour.is_some_and(|(other, other_range)| {
                other > encoding
                    && (other_range.end == range.start || range.end == other_range.start)
            })
        };
        if touches_stronger(i.checked_sub(1).and_then(|j| found.get(j)))
            || touches_stronger(found.get(i + 1))
        {
            continue;
        }
        let encoded = &text[range.clone()];
        let Some(decoded) = (match encoding {
            Encoding::Percent => percent(encoded),
            Encoding::Hex => hex(encoded),
            Encoding::Base64 => base64(encoded),
        }) else {
            continue;
        };
        if decoded.is_empty() || !decoded.iter().all(|&b| (0x09..0x7f).contains(&b)) {
            continue;
        }
        out.extend_from_slice(&text[copied..range.start]);
        let start = out.len();
        out.extend_from_slice(&decoded);
        segments.push(Segment {
            encoded: range.clone(),
            decoded: start..out.len(),
        });
        copied = range.end;
    }
    if segments.is_empty() {
        return None;
    }
    out.extend_from_slice(&text[copied..]);
    Some(Pass {
        text: out,
        segments,
    })
}

fn percent(encoded: &[u8]) -> Option<Vec<u8>> {
    encoded
        .chunks(3)
        .map(|escape| u8::from_str_radix(std::str::from_utf8(&escape[1..]).ok()?, 16).ok())
        .collect()
}

fn hex(encoded: &[u8]) -> Option<Vec<u8>> {
    if !encoded.len().is_multiple_of(2) {
        return None;
    }
    encoded
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect()
}

/// Standard base64 (padded), else base64url without padding; gitleaks first asks for one of the
/// characters nearly every encoded value has, which spares decoding long words.
fn base64(encoded: &[u8]) -> Option<Vec<u8>> {
    if !encoded
        .iter()
        .any(|b| b.is_ascii_digit() || b"+/-_".contains(b))
    {
        return None;
    }
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .or_else(|_| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(encoded))
        .ok()
}

/// `range` of a pass's output as a range of its input: a bound inside a decoded stretch goes to
/// that stretch's encoded bounds (the whole encoded value), any other is shifted by the size
/// changes before it.
pub(super) fn to_input(segments: &[Segment], range: Range<usize>) -> Range<usize> {
    let map = |at: usize, is_end: bool| {
        let mut input = at;
        for segment in segments {
            let inside = if is_end {
                segment.decoded.start < at && at <= segment.decoded.end
            } else {
                segment.decoded.start <= at && at < segment.decoded.end
            };
            if inside {
                return if is_end {
                    segment.encoded.end
                } else {
                    segment.encoded.start
                };
            }
            if segment.decoded.end > at {
                break;
            }
            input = at - segment.decoded.end + segment.encoded.end;
        }
        input
    };
    map(range.start, false)..map(range.end, true).max(map(range.start, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_encoding_decodes_in_place_and_maps_back() {
        let text =
            b"a=%41%42%43 b=68656c6c6f20776f726c6420686f77206172652075 c=aGVsbG8gd29ybGQgMTIz d";
        let decoded = pass(text).expect("decodes");
        assert_eq!(
            String::from_utf8_lossy(&decoded.text),
            "a=ABC b=hello world how are u c=hello world 123 d"
        );
        assert_eq!(decoded.segments.len(), 3);
        let at = decoded
            .text
            .windows(15)
            .position(|w| w == b"hello world 123")
            .expect("c decoded");
        let hello = at..at + 11;
        let original = to_input(&decoded.segments, hello);
        assert_eq!(&text[original], b"aGVsbG8gd29ybGQgMTIz");
        let after = decoded.text.len() - 1..decoded.text.len();
        assert_eq!(&text[to_input(&decoded.segments, after)], b"d");
    }

    #[test]
    fn binary_results_long_words_and_odd_hex_stay_encoded() {
        // Decodes to bytes that are not printable, has no digit or symbol, odd length.
        assert!(pass(b"key: 3q2+7wAAAAAAAAAAAAAAAA==").is_none());
        assert!(pass(b"internationalizationandlocalization").is_none());
        assert!(pass(b"0123456789abcdef0123456789abcdef0").is_none());
    }
}
