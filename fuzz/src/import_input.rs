//! The input of the `import_readers` target: which host's format, and a
//! text that may repeat one piece many times.
//!
//! Raw bytes are short (libFuzzer's inputs are a few kilobytes), and the
//! readers' faults that matter here need size: thousands of values on one
//! line, thousands of keys, a long run of nesting. So the input is a
//! format byte, two bytes of repeat count, then `prefix NUL unit NUL
//! suffix`: the text is the prefix, the unit repeated, the suffix. With
//! fewer than two NULs the rest is the text itself. The repeat is cut so
//! the text stays within [`MAX_IMPORT_TEXT`], below the readers' 8 MiB
//! cap, so the readers parse it rather than refuse its size.

use mcp_config::import::Host;

/// The largest text one input becomes.
pub const MAX_IMPORT_TEXT: usize = 2 << 20;

/// Each step of the count byte pair repeats the unit this many times.
const COUNT_SCALE: usize = 8;

/// The host and the text `data` stands for, or `None` when it is too
/// short to name a host. Invalid UTF-8 is replaced, as the loader's
/// reader refuses it before any format sees it.
pub fn import_input(data: &[u8]) -> Option<(Host, String)> {
    let (&format, rest) = data.split_first()?;
    let host = Host::ALL[usize::from(format) % Host::ALL.len()];
    let (count, rest) = match rest {
        [lo, hi, rest @ ..] => (usize::from(u16::from_le_bytes([*lo, *hi])) * COUNT_SCALE, rest),
        _ => (0, rest),
    };
    let text = String::from_utf8_lossy(rest);
    let mut parts = text.splitn(3, '\0');
    let (Some(prefix), Some(unit), Some(suffix)) = (parts.next(), parts.next(), parts.next()) else {
        let mut text = text.into_owned();
        text.truncate(floor_char_boundary(&text, MAX_IMPORT_TEXT));
        return Some((host, text));
    };
    let room = MAX_IMPORT_TEXT.saturating_sub(prefix.len() + suffix.len());
    let count = if unit.is_empty() {
        0
    } else {
        count.min(room / unit.len())
    };
    let mut out = String::with_capacity(prefix.len() + unit.len() * count + suffix.len());
    out.push_str(prefix);
    for _ in 0..count {
        out.push_str(unit);
    }
    out.push_str(suffix);
    out.truncate(floor_char_boundary(&out, MAX_IMPORT_TEXT));
    Some((host, out))
}

/// The largest char boundary of `text` at or below `at`.
fn floor_char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(data: &[u8], want: Option<(Host, &str)>) {
        let got = import_input(data);
        assert_eq!(
            got.as_ref().map(|(h, t)| (*h, t.as_str())),
            want,
            "{:?}",
            String::from_utf8_lossy(data)
        );
    }

    #[test]
    fn inputs_become_a_host_and_a_text() {
        check(b"", None);
        check(b"\x00", Some((Host::ClaudeDesktop, "")));
        check(b"\x03\x01", Some((Host::Codex, "\x01")));
        check(b"\x03\x00\x00a = 1", Some((Host::Codex, "a = 1")));
        check(b"\x07\x00\x00a: 1", Some((Host::Goose, "a: 1")));
        check(b"\x08\x00\x00{}", Some((Host::ClaudeDesktop, "{}")));
        // prefix, unit × (1 × 8), suffix
        check(b"\x03\x01\x00[\x00x,\x00]", Some((Host::Codex, "[x,x,x,x,x,x,x,x,]")));
        check(b"\x03\x00\x00[\x00x,\x00]", Some((Host::Codex, "[]")));
        // an empty unit repeats nothing; invalid UTF-8 is replaced
        check(b"\x02\xff\xff[\x00\x00]\xff", Some((Host::VsCode, "[]\u{fffd}")));
    }

    #[test]
    fn the_text_stays_within_the_cap() {
        let (host, text) = import_input(b"\x03\xff\xff[\x00\"long unit\",\x00]").unwrap();
        assert_eq!(host, Host::Codex);
        assert!(text.len() <= MAX_IMPORT_TEXT, "{}", text.len());
        assert!(text.len() > MAX_IMPORT_TEXT / 2, "{}", text.len());
        assert!(text.ends_with(']'));
        let (_, text) = import_input(b"\x00\xff\xff\x00\xc3\xa9\x00").unwrap();
        assert!(text.len() <= MAX_IMPORT_TEXT && text.chars().all(|c| c == 'é'));
        let mut raw = vec![0u8, 0, 0];
        raw.extend("é".repeat(MAX_IMPORT_TEXT).bytes());
        let (_, text) = import_input(&raw).unwrap();
        assert!(text.len() <= MAX_IMPORT_TEXT);
    }
}
