//! The rule for outside text on a terminal: which characters never reach
//! it raw, how they are spelled instead, and how much of one value is
//! shown. `xtask check-config` compiles this same file, so the two
//! binaries that print config text share one rule.
//!
//! Escaped, wherever they appear ([`always_escaped`]):
//!
//! - C0 controls and DEL (ESC starts CSI, OSC 0/8/52 and every other
//!   sequence; BEL and ESC `\` end OSC; CR and BS overwrite), and C1
//!   controls U+0080–U+009F (U+009B is a one-byte CSI, U+009D a one-byte
//!   OSC);
//! - what reorders text: bidi marks, embeddings, overrides and isolates
//!   (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069), and line and
//!   paragraph separators (U+2028–U+2029);
//! - what is invisible yet changes what is read: soft hyphen U+00AD,
//!   combining grapheme joiner U+034F, Hangul fillers, Mongolian vowel
//!   separator U+180E, zero-width space, non-joiner and joiner
//!   (U+200B–U+200D; an emoji sequence joined by U+200D shows its parts),
//!   word joiner, invisible operators and the deprecated format
//!   characters (U+2060–U+206F), BOM U+FEFF, interlinear annotation
//!   (U+FFF9–U+FFFB), tag characters U+E0000–U+E007F (ASCII spelled
//!   invisibly; a subdivision flag shows its tags), and the supplementary
//!   variation selectors U+E0100–U+E01EF.
//!
//! The variation selectors U+FE00–U+FE0F are kept right after a character
//! they can modify (`❤️` stays `❤️`) and escaped anywhere else: after
//! another selector, a run of them spells hidden bytes.
//!
//! Human text spells an escaped character `\x1b` (C0, DEL) or `\u{202e}`;
//! JSON spells it `\u202e` (a UTF-16 pair above U+FFFF), which a JSON
//! reader decodes to the same string.
//!
//! Bounds: one value shown on a line ([`shown`]) is at most
//! [`LINE_CHARS`] characters as shown (an escape counts as the characters
//! that spell it), text that spans lines ([`shown_lines`]) at most
//! [`TEXT_CHARS`]; what is left out is named, `… [3.9 MiB more]`.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Characters of one outside value shown within a line: a name, a url, a
/// message, an error chain, a log line.
pub(crate) const LINE_CHARS: usize = 4096;

/// Characters of outside text that spans lines: a tool's or resource's
/// text, a description, an elicitation message. Above the catalog's
/// 100,000-byte result cap, so a result the catalog kept is never cut
/// again.
pub(crate) const TEXT_CHARS: usize = 200_000;

/// Whether `c` is escaped wherever it appears (see the module docs).
pub(crate) fn always_escaped(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00ad}'
                | '\u{034f}'
                | '\u{061c}'
                | '\u{115f}'
                | '\u{1160}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}'
                | '\u{3164}'
                | '\u{feff}'
                | '\u{ffa0}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{e0000}'..='\u{e007f}'
                | '\u{e0100}'..='\u{e01ef}'
        )
}

fn is_variation_selector(c: char) -> bool {
    matches!(c, '\u{fe00}'..='\u{fe0f}')
}

/// Decides character by character what is escaped; it remembers the
/// last character, as a variation selector is kept only after a
/// character it can modify.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Escaper {
    /// The last character was kept and was not itself a selector.
    after_base: bool,
}

impl Escaper {
    /// Whether `c`, coming next, is escaped.
    pub(crate) fn escapes(&mut self, c: char) -> bool {
        let escaped = always_escaped(c) || (is_variation_selector(c) && !self.after_base);
        self.after_base = !escaped && !is_variation_selector(c);
        escaped
    }
}

/// Appends the human spelling of an escaped character.
pub(crate) fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\0'..='\u{1f}' | '\u{7f}' => {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        }
        _ => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
}

/// Appends how many bytes were left out: `… [512 bytes more]`,
/// `… [3.9 MiB more]`.
pub(crate) fn push_cut(out: &mut String, bytes: usize) {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * 1024;
    // Precision is not wanted here; the rounding is display only.
    #[allow(clippy::cast_precision_loss)]
    let _ = match bytes {
        0..KIB => write!(out, "… [{bytes} bytes more]"),
        KIB..MIB => write!(out, "… [{:.1} KiB more]", bytes as f64 / KIB as f64),
        _ => write!(out, "… [{:.1} MiB more]", bytes as f64 / MIB as f64),
    };
}

/// Outside text as one line a terminal can show: every character of the
/// rule escaped, newlines included (so no value prints a row of its own),
/// cut after [`LINE_CHARS`] characters.
pub(crate) fn shown(text: &str) -> Cow<'_, str> {
    escape(text, false, LINE_CHARS)
}

/// [`shown`] for text that may span lines: newlines are kept, everything
/// else is escaped the same way; cut after [`TEXT_CHARS`] characters.
pub(crate) fn shown_lines(text: &str) -> Cow<'_, str> {
    escape(text, true, TEXT_CHARS)
}

fn escape(text: &str, keep_newlines: bool, max_chars: usize) -> Cow<'_, str> {
    let mut escaper = Escaper::default();
    let mut out: Option<String> = None;
    // Characters shown so far, escapes counted as they are spelled: the
    // bound is on what the terminal shows.
    let mut shown_chars = 0_usize;
    let mut spelled = String::new();
    for (at, c) in text.char_indices() {
        let escaped = escaper.escapes(c) && !(keep_newlines && c == '\n');
        spelled.clear();
        if escaped {
            push_escaped(&mut spelled, c);
        }
        let width = if escaped { spelled.chars().count() } else { 1 };
        if shown_chars + width > max_chars {
            let out = out.get_or_insert_with(|| text[..at].to_owned());
            push_cut(out, text.len() - at);
            break;
        }
        shown_chars += width;
        match (&mut out, escaped) {
            (None, false) => {}
            (None, true) => {
                let mut owned = String::with_capacity(text.len().min(max_chars) + 16);
                owned.push_str(&text[..at]);
                owned.push_str(&spelled);
                out = Some(owned);
            }
            (Some(out), false) => out.push(c),
            (Some(out), true) => out.push_str(&spelled),
        }
    }
    out.map_or(Cow::Borrowed(text), Cow::Owned)
}

/// One line of compact JSON (a protocol message) with every character of
/// the rule inside its strings spelled `\uXXXX`, as [`json_pretty`]
/// spells them; its closing newline is kept. Outside strings compact JSON
/// has ASCII only, and the serializer already escaped C0 controls inside
/// them, so every character the rule escapes here is inside a string, and
/// the line means the same value.
pub(crate) fn json_line(line: &str) -> Cow<'_, str> {
    let body = line.strip_suffix('\n').unwrap_or(line);
    let mut escaper = Escaper::default();
    let mut out: Option<String> = None;
    for (at, c) in body.char_indices() {
        let escaped = escaper.escapes(c);
        match (&mut out, escaped) {
            (None, false) => {}
            (None, true) => {
                let mut owned = String::with_capacity(line.len() + 16);
                owned.push_str(&body[..at]);
                push_json_escaped(&mut owned, c);
                out = Some(owned);
            }
            (Some(out), false) => out.push(c),
            (Some(out), true) => push_json_escaped(out, c),
        }
    }
    match out {
        None => Cow::Borrowed(line),
        Some(mut out) => {
            if body.len() < line.len() {
                out.push('\n');
            }
            Cow::Owned(out)
        }
    }
}

/// Appends the JSON spelling of an escaped character (UTF-16 units).
fn push_json_escaped(out: &mut String, c: char) {
    let mut units = [0_u16; 2];
    for unit in c.encode_utf16(&mut units) {
        let _ = write!(out, "\\u{unit:04x}");
    }
}

/// Pretty JSON whose strings hold no character of the rule raw: each is
/// written as a `\uXXXX` escape, so the document means exactly what serde
/// would have written and stays valid JSON.
pub(crate) fn json_pretty(value: &impl serde::Serialize) -> serde_json::Result<String> {
    let mut bytes = Vec::new();
    let mut serializer =
        serde_json::Serializer::with_formatter(&mut bytes, JsonFormatter::default());
    value.serialize(&mut serializer)?;
    // The serializer writes UTF-8 only.
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// serde's pretty formatter with the string fragments escaped by the rule.
#[derive(Default)]
struct JsonFormatter {
    pretty: serde_json::ser::PrettyFormatter<'static>,
}

impl serde_json::ser::Formatter for JsonFormatter {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut escaper = Escaper::default();
        let mut start = 0;
        for (at, c) in fragment.char_indices() {
            if !escaper.escapes(c) {
                continue;
            }
            writer.write_all(&fragment.as_bytes()[start..at])?;
            let mut units = [0_u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(writer, "\\u{unit:04x}")?;
            }
            start = at + c.len_utf8();
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.pretty.begin_array(w)
    }

    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.pretty.end_array(w)
    }

    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.pretty.begin_array_value(w, first)
    }

    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.pretty.end_array_value(w)
    }

    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.pretty.begin_object(w)
    }

    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.pretty.end_object(w)
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.pretty.begin_object_key(w, first)
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.pretty.begin_object_value(w)
    }

    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.pretty.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::{LINE_CHARS, TEXT_CHARS, json_line, json_pretty, shown, shown_lines};

    #[test]
    fn outside_text_is_shown_escaped() {
        let check = |text: &str, line: &str, lines: &str| {
            assert_eq!(shown(text), line, "shown({text:?})");
            assert_eq!(shown_lines(text), lines, "shown_lines({text:?})");
        };
        check("plain name", "plain name", "plain name");
        check(
            "ünï 😀 \\d+ C:\\x",
            "ünï 😀 \\d+ C:\\x",
            "ünï 😀 \\d+ C:\\x",
        );
        check("\u{1b}[31mred", r"\x1b[31mred", r"\x1b[31mred");
        check("\u{1b}]0;t\u{7}", r"\x1b]0;t\x07", r"\x1b]0;t\x07");
        check(
            "\u{1b}]52;c;cHduZWQ=\u{1b}\\",
            r"\x1b]52;c;cHduZWQ=\x1b\",
            r"\x1b]52;c;cHduZWQ=\x1b\",
        );
        check("a\nb", r"a\nb", "a\nb");
        check("a\r\nb", r"a\r\nb", "a\\r\nb");
        check("a\tb\0", r"a\tb\x00", r"a\tb\x00");
        check(
            "\u{7f}\u{9b}\u{85}\u{9d}",
            r"\x7f\u{9b}\u{85}\u{9d}",
            r"\x7f\u{9b}\u{85}\u{9d}",
        );
        check("\u{202e}exe.txt", r"\u{202e}exe.txt", r"\u{202e}exe.txt");
        check(
            "\u{2066}\u{2069}\u{200f}\u{061c}\u{200b}\u{2028}\u{feff}",
            r"\u{2066}\u{2069}\u{200f}\u{61c}\u{200b}\u{2028}\u{feff}",
            r"\u{2066}\u{2069}\u{200f}\u{61c}\u{200b}\u{2028}\u{feff}",
        );
        // Invisible text: tags spell "rm", a soft hyphen, a word joiner.
        check(
            "ok\u{e0072}\u{e006d}",
            r"ok\u{e0072}\u{e006d}",
            r"ok\u{e0072}\u{e006d}",
        );
        check("pay\u{ad}pal", r"pay\u{ad}pal", r"pay\u{ad}pal");
        check(
            "a\u{2060}b\u{2064}",
            r"a\u{2060}b\u{2064}",
            r"a\u{2060}b\u{2064}",
        );
        check("\u{3164}\u{180e}", r"\u{3164}\u{180e}", r"\u{3164}\u{180e}");
        // A selector after a character it modifies stays; a run, or one
        // with nothing before it, is escaped.
        check("❤\u{fe0f}", "❤\u{fe0f}", "❤\u{fe0f}");
        check(
            "😀\u{fe0f}\u{fe01}\u{fe02}",
            r"😀\u{fe0f}\u{fe01}\u{fe02}"
                .replacen(r"\u{fe0f}", "\u{fe0f}", 1)
                .as_str(),
            r"😀\u{fe0f}\u{fe01}\u{fe02}"
                .replacen(r"\u{fe0f}", "\u{fe0f}", 1)
                .as_str(),
        );
        check("\u{fe0f}x", r"\u{fe0f}x", r"\u{fe0f}x");
        check("x\u{e0100}", r"x\u{e0100}", r"x\u{e0100}");
    }

    #[test]
    fn long_text_is_cut_with_what_was_left_out() {
        let tail = |text: &str| {
            text.chars()
                .rev()
                .take(40)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<String>()
        };
        let check = |text: String, line_ends: &str, lines_ends: &str| {
            let line = shown(&text);
            assert!(line.ends_with(line_ends), "{}", tail(&line));
            assert!(line.chars().count() <= LINE_CHARS + 40, "{}", line.len());
            let lines = shown_lines(&text);
            assert!(lines.ends_with(lines_ends), "{}", tail(&lines));
            assert!(lines.chars().count() <= TEXT_CHARS + 40, "{}", lines.len());
        };
        check("x".repeat(LINE_CHARS), "xxx", "xxx");
        check("x".repeat(LINE_CHARS + 1), "x… [1 bytes more]", "xxx");
        check("é".repeat(LINE_CHARS + 600), "é… [1.2 KiB more]", "ééé");
        check(
            "y".repeat(4 << 20),
            "y… [4.0 MiB more]",
            "y… [3.8 MiB more]",
        );
        // Escapes count as they are shown: 1,024 of 4,098 fit.
        check(
            "\u{1b}".repeat(LINE_CHARS + 2),
            r"\x1b… [3.0 KiB more]",
            r"\x1b\x1b",
        );
    }

    #[test]
    fn json_strings_escape_the_rule_and_mean_the_same() {
        let check = |text: &str, spelled: &str| {
            let value = serde_json::json!({ text: [text] });
            let json = json_pretty(&value).expect("json");
            assert!(json.contains(spelled), "{text:?}: {json}");
            assert!(
                !json.chars().any(|c| c != '\n' && super::always_escaped(c)),
                "{json}"
            );
            let back: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
            assert_eq!(back, value, "{json}");
        };
        check("\u{1b}[2J", r"\u001b[2J");
        check("\u{9b}2J", r"\u009b2J");
        check("\u{7f}", r"\u007f");
        check("\u{202e}gpj.exe", r"\u202egpj.exe");
        check("a\u{ad}b", r"a\u00adb");
        check("\u{e0041}", r"\udb40\udc41");
        check("\u{200b}\u{feff}", r"\u200b\ufeff");
        check("❤\u{fe0f}", "❤\u{fe0f}");
        check("plain ünï", "plain ünï");
    }

    #[test]
    fn protocol_lines_escape_the_rule_and_mean_the_same() {
        let check = |text: &str, spelled: &str| {
            let value = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {text: [text]}});
            let line = format!("{}\n", serde_json::to_string(&value).expect("json"));
            let escaped = json_line(&line);
            assert!(escaped.contains(spelled), "{text:?}: {escaped}");
            assert!(escaped.ends_with('\n') && escaped.matches('\n').count() == 1);
            assert!(
                !escaped
                    .chars()
                    .any(|c| c != '\n' && super::always_escaped(c)),
                "{escaped}"
            );
            let back: serde_json::Value = serde_json::from_str(&escaped).expect("valid JSON");
            assert_eq!(back, value, "{escaped}");
        };
        check("\u{1b}[2J", r"\u001b[2J");
        check("\u{9b}2J", r"\u009b2J");
        check("\u{7f}", r"\u007f");
        check("\u{202e}gpj.exe", r"\u202egpj.exe");
        check("\u{e0041}", r"\udb40\udc41");
        check("\u{2028}", r"\u2028");
        check("❤\u{fe0f}", "❤\u{fe0f}");
        check("plain ünï", "plain ünï");
        // A line with nothing to escape is passed on as it is.
        let plain = "{\"id\":1}\n";
        assert!(matches!(json_line(plain), std::borrow::Cow::Borrowed(_)));
    }
}
