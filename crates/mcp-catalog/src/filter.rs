//! `toolFilter` matching (REFERENCE §3.3).

use mcp_config::ToolFilter;

/// Whether `pattern` matches `name`. Case-sensitive; `*` matches any run of
/// characters (also none) and is the only wildcard; a pattern without `*`
/// must equal the name.
pub fn pattern_matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return name.is_empty();
    };
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let remaining: Vec<&str> = parts.collect();
    let Some((last, middle)) = remaining.split_last() else {
        // no `*` at all: exact match
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Whether a tool named `name` passes `filter`: a non-empty `include`
/// needs a match, and any `exclude` match hides it.
pub fn passes(filter: &ToolFilter, name: &str) -> bool {
    if !filter.include.is_empty() && !filter.include.iter().any(|p| pattern_matches(p, name)) {
        return false;
    }
    !filter.exclude.iter().any(|p| pattern_matches(p, name))
}
