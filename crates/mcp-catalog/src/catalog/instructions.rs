//! Server instructions as a host shows them: each server's `instructions`
//! (from `initialize` or `server/discover`) cut to
//! [`MAX_INSTRUCTIONS_CHARS`] with a note saying so, as Claude Code cuts
//! them, in catalog order (servers by raw name); and one text combining
//! them, for a host's system prompt or a gateway's own `instructions`.

use std::sync::Arc;

use serde::Serialize;

use super::materialize::cut_to;

/// Longest instructions kept per server, in characters (2 KB, as Claude
/// Code keeps them), the note saying they were cut included.
pub const MAX_INSTRUCTIONS_CHARS: usize = 2048;

/// One server's instructions as the catalog surfaces them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ServerInstructions {
    /// The configured server name.
    pub server: String,
    /// The server's text, trimmed, within [`MAX_INSTRUCTIONS_CHARS`].
    pub text: String,
    /// `(original, kept)` lengths in characters, when the text was cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<(usize, usize)>,
}

impl ServerInstructions {
    /// `server`'s instructions, or `None` when it gave none (or only
    /// whitespace).
    pub fn of(server: &str, instructions: Option<&Arc<str>>) -> Option<Self> {
        let trimmed = instructions.map(|text| text.trim())?;
        if trimmed.is_empty() {
            return None;
        }
        let described = cut_to(trimmed, MAX_INSTRUCTIONS_CHARS, "instructions");
        Some(ServerInstructions {
            server: server.to_owned(),
            text: described.text.into_owned(),
            cut: described.cut,
        })
    }
}

/// Every server's instructions in one text, each under a `## server`
/// heading, in the order given; `None` when there are none.
pub fn combine_instructions(instructions: &[ServerInstructions]) -> Option<String> {
    if instructions.is_empty() {
        return None;
    }
    let mut text = String::new();
    for (i, server) in instructions.iter().enumerate() {
        if i > 0 {
            text.push_str("\n\n");
        }
        text.push_str("## ");
        text.push_str(&server.server);
        text.push('\n');
        text.push_str(&server.text);
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(given: Option<&str>, expected: Option<(&str, Option<(usize, usize)>)>) {
        let given = given.map(Arc::<str>::from);
        let got = ServerInstructions::of("s", given.as_ref());
        let got = got.as_ref().map(|i| (i.text.as_str(), i.cut));
        assert_eq!(
            got,
            expected,
            "instructions of {:?} characters",
            given.as_ref().map(|t| t.chars().count())
        );
        if let Some((text, _)) = got {
            assert!(text.chars().count() <= MAX_INSTRUCTIONS_CHARS);
        }
    }

    #[test]
    fn instructions_are_trimmed_and_cut_with_a_note() {
        check(None, None);
        check(Some(""), None);
        check(Some(" \n\t "), None);
        check(
            Some("  Use the search tool first.\n"),
            Some(("Use the search tool first.", None)),
        );
        let exact = "x".repeat(MAX_INSTRUCTIONS_CHARS);
        check(Some(&exact), Some((&exact, None)));
        // Characters, not bytes: 2048 two-byte characters are kept whole.
        let wide = "é".repeat(MAX_INSTRUCTIONS_CHARS);
        check(Some(&wide), Some((&wide, None)));
        let long = "y".repeat(10_000);
        let note = "… [instructions cut at 2000 of 10000 characters]";
        let expected = format!("{}{note}", "y".repeat(2000));
        check(Some(&long), Some((&expected, Some((10_000, 2000)))));
    }

    #[test]
    fn combined_instructions_keep_the_order_given() {
        let a = ServerInstructions::of("alpha", Some(&Arc::from("first"))).unwrap();
        let b = ServerInstructions::of("beta", Some(&Arc::from("second"))).unwrap();
        assert_eq!(combine_instructions(&[]), None);
        assert_eq!(
            combine_instructions(&[a, b]).as_deref(),
            Some("## alpha\nfirst\n\n## beta\nsecond")
        );
    }
}
