//! `${VAR}`, `${VAR:-default}` and leading-`~` expansion (REFERENCE §1.2).
//!
//! Expansion never consults the process: variables come from a lookup the
//! caller supplies. An unset variable without a default keeps its literal
//! text and is reported back, so the caller can emit a diagnostic instead
//! of silently dropping the server.

use std::path::Path;

/// The result of expanding one string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Expanded {
    /// The expanded text.
    pub value: String,
    /// Variables that were referenced, unset and had no default, in order.
    pub unset: Vec<String>,
}

/// Expands `${VAR}` and `${VAR:-default}` in `text`.
///
/// `:-` follows the shell: an empty variable also takes the default. A `$`
/// not followed by `{`, or a `${` without a closing `}`, stays as written.
pub(crate) fn expand_vars(text: &str, lookup: impl Fn(&str) -> Option<String>) -> Expanded {
    if !text.contains("${") {
        return Expanded {
            value: text.to_owned(),
            unset: Vec::new(),
        };
    }
    let mut value = String::with_capacity(text.len());
    let mut unset = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        value.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            value.push_str(&rest[start..]);
            rest = "";
            break;
        };
        let inner = &after[..end];
        if inner.starts_with("secret:") {
            // `${secret:NAME}` is a secret reference, not a variable: it
            // stays as written for `secret::resolve`, and is never unset.
            value.push_str(&rest[start..start + 2 + end + 1]);
            rest = &after[end + 1..];
            continue;
        }
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        if !is_var_name(name) {
            value.push_str(&rest[start..start + 2 + end + 1]);
        } else {
            match (lookup(name), default) {
                (Some(v), Some(d)) if v.is_empty() => value.push_str(d),
                (Some(v), _) => value.push_str(&v),
                (None, Some(d)) => value.push_str(d),
                (None, None) => {
                    value.push_str(&rest[start..start + 2 + end + 1]);
                    if !unset.iter().any(|u| u == name) {
                        unset.push(name.to_owned());
                    }
                }
            }
        }
        rest = &after[end + 1..];
    }
    value.push_str(rest);
    Expanded { value, unset }
}

fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Replaces a leading `~` (alone or followed by `/`) with `home`.
/// `~user` forms and a missing home leave the text unchanged.
pub(crate) fn expand_tilde(text: &str, home: Option<&Path>) -> String {
    match (home, text.strip_prefix('~')) {
        (Some(home), Some(rest)) if rest.is_empty() || rest.starts_with('/') => {
            format!("{}{rest}", home.display())
        }
        _ => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expect: &str, expect_unset: &[&str]) {
        let lookup = |name: &str| match name {
            "SET" => Some("v".to_owned()),
            "EMPTY" => Some(String::new()),
            _ => None,
        };
        let got = expand_vars(text, lookup);
        assert_eq!(got.value, expect, "expanding {text:?}");
        assert_eq!(got.unset, expect_unset, "unset vars of {text:?}");
    }

    #[test]
    fn expansion_vectors() {
        check("plain", "plain", &[]);
        check("${SET}", "v", &[]);
        check("a-${SET}-b", "a-v-b", &[]);
        check("${UNSET}", "${UNSET}", &["UNSET"]);
        check("${UNSET:-d}", "d", &[]);
        check("${UNSET:-}", "", &[]);
        check("${EMPTY:-d}", "d", &[]);
        check("${EMPTY}", "", &[]);
        check("${SET:-d}", "v", &[]);
        check("$SET", "$SET", &[]);
        check("${SET", "${SET", &[]);
        check("${not a name}", "${not a name}", &[]);
        check("${A}${A}${B}", "${A}${A}${B}", &["A", "B"]);
        check("${UNSET:-http://x/y}", "http://x/y", &[]);
        check("${secret:api}", "${secret:api}", &[]);
        check("${secret:-x}", "${secret:-x}", &[]);
        check("Bearer ${secret:a.b}-${SET}", "Bearer ${secret:a.b}-v", &[]);
    }

    #[test]
    fn tilde_vectors() {
        let home = Some(Path::new("/h"));
        assert_eq!(expand_tilde("~", home), "/h");
        assert_eq!(expand_tilde("~/bin/x", home), "/h/bin/x");
        assert_eq!(expand_tilde("~user/x", home), "~user/x");
        assert_eq!(expand_tilde("a/~", home), "a/~");
        assert_eq!(expand_tilde("~/x", None), "~/x");
    }
}
