//! Server names: the one rule the loader and every write verb share, so a
//! name that loads can be approved, denied, enabled, disabled and removed,
//! and a name no verb could manage never loads.
//!
//! A name is the key a person reads in a file and in every listing. It may
//! hold any printable text (Claude Code and OpenClaw accept `my server`
//! and `my.server`; the catalog turns each into a tool-name prefix), but
//! nothing a terminal acts on or hides: control characters (which can
//! forge rows or recolour a listing) and the invisible format characters
//! that reorder or hide text (bidirectional overrides, zero-width
//! characters). Leading or trailing white space is refused too, so two
//! servers can never print alike.

use crate::json::needs_escape;

/// The longest server name, in characters.
pub const MAX_NAME_LEN: usize = 128;

/// Why `name` cannot be a server name, or `None` when it can.
pub fn server_name_problem(name: &str) -> Option<String> {
    if name.trim().is_empty() {
        return Some("a server name must not be empty".into());
    }
    if let Some(c) = name.chars().find(|c| needs_escape(*c)) {
        return Some(format!(
            "a server name must not hold control or invisible formatting characters (`{}`)",
            c.escape_debug()
        ));
    }
    if name.trim() != name {
        return Some("a server name must not start or end with white space".into());
    }
    if name.chars().count() > MAX_NAME_LEN {
        return Some(format!(
            "a server name must not be longer than {MAX_NAME_LEN} characters"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_vectors() {
        for ok in ["a", "my server", "my.server", "-x", "ü", "a/b", "😀"] {
            assert_eq!(server_name_problem(ok), None, "{ok:?}");
        }
        let long = "n".repeat(MAX_NAME_LEN + 1);
        for bad in [
            "",
            " ",
            " a",
            "a ",
            "a\tb",
            "a\u{1b}",
            "a\u{202e}",
            long.as_str(),
        ] {
            assert!(server_name_problem(bad).is_some(), "{bad:?}");
        }
    }
}
