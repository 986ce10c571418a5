//! How one list entry matches a server: `serverName` exactly,
//! `serverCommand` as the exact argv, `serverUrl` as a pattern with `*`
//! wildcards (host case-insensitive, a trailing FQDN dot ignored, a
//! pattern without a path matching any path; the path case-sensitive).

use crate::identity::unwrap_ccr_proxy_url;
use crate::types::TransportConfig;

use super::rules::Matcher;

/// The argv of a stdio server: its command, then its arguments.
pub(crate) fn argv(transport: &TransportConfig) -> Option<Vec<&str>> {
    match transport {
        TransportConfig::Stdio(stdio) => Some(
            std::iter::once(stdio.command.as_str())
                .chain(stdio.args.iter().map(String::as_str))
                .collect(),
        ),
        _ => None,
    }
}

/// The urls a remote server reaches: as configured, and the endpoint a
/// claude.ai proxy url carries (so a proxy cannot hide where it leads).
pub(crate) fn urls(transport: &TransportConfig) -> Vec<String> {
    let url = match transport {
        TransportConfig::Sse(r) | TransportConfig::Http(r) | TransportConfig::Ws(r) => &r.url,
        TransportConfig::ClaudeAiProxy(p) => &p.url,
        TransportConfig::Stdio(_) | TransportConfig::Sdk { .. } => return Vec::new(),
    };
    let unwrapped = unwrap_ccr_proxy_url(url);
    if unwrapped == *url {
        vec![url.clone()]
    } else {
        vec![url.clone(), unwrapped]
    }
}

/// Whether `matcher` matches the server `name` reached through `transport`.
/// A url entry matches when `every_url` of the server's urls match (allow
/// lists: the proxy and where it leads must both be allowed) or when any
/// does (deny lists).
pub(crate) fn matches(
    matcher: &Matcher,
    name: &str,
    transport: &TransportConfig,
    every_url: bool,
) -> bool {
    match matcher {
        Matcher::Name(wanted) => wanted == name,
        Matcher::Command(wanted) => argv(transport).is_some_and(|argv| argv == *wanted),
        Matcher::Url(pattern) => {
            let urls = urls(transport);
            let hit = |url: &String| url_matches(pattern, url);
            !urls.is_empty()
                && if every_url {
                    urls.iter().all(hit)
                } else {
                    urls.iter().any(hit)
                }
        }
    }
}

/// Whether `url` matches the `serverUrl` pattern.
pub(crate) fn url_matches(pattern: &str, url: &str) -> bool {
    let (pattern_head, pattern_path) = split(pattern);
    let (url_head, url_path) = split(url);
    let pattern_path = if pattern_path.is_empty() {
        "*"
    } else {
        pattern_path
    };
    let url_path = if url_path.is_empty() { "/" } else { url_path };
    glob(&normal_head(pattern_head), &normal_head(url_head)) && glob(pattern_path, url_path)
}

/// `scheme://authority` and the rest (path, query, fragment).
fn split(url: &str) -> (&str, &str) {
    let authority_start = url.find("://").map_or(0, |i| i + 3);
    let end = url[authority_start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| authority_start + i);
    url.split_at(end)
}

/// The scheme and authority lowercased, without a trailing FQDN dot on
/// the host.
fn normal_head(head: &str) -> String {
    let lower = head.to_ascii_lowercase();
    let authority_start = lower.find("://").map_or(0, |i| i + 3);
    // The port, when there is one, follows the last `:` after any `]`.
    let host_end = match lower[authority_start..].rfind(':') {
        Some(i) if !lower[authority_start + i..].contains(']') => authority_start + i,
        _ => lower.len(),
    };
    let (host, port) = lower.split_at(host_end);
    format!("{}{port}", host.strip_suffix('.').unwrap_or(host))
}

/// `*` matches any run of characters (none included); everything else
/// matches itself. Greedy with one backtrack point: time is bounded by the
/// product of the two lengths, both a url's.
fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((star_pi, star_ti)) = star {
            pi = star_pi + 1;
            ti = star_ti + 1;
            star = Some((star_pi, star_ti + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::url_matches;

    fn check(pattern: &str, url: &str, expect: bool) {
        assert_eq!(url_matches(pattern, url), expect, "{pattern} against {url}");
    }

    #[test]
    fn url_patterns() {
        for (pattern, url, expect) in [
            (
                "https://mcp.example.com/*",
                "https://mcp.example.com/api",
                true,
            ),
            ("https://mcp.example.com/*", "https://mcp.example.com", true),
            (
                "https://mcp.example.com",
                "https://mcp.example.com/any/path",
                true,
            ),
            (
                "https://mcp.example.com",
                "https://mcp.example.com.evil.test/",
                false,
            ),
            (
                "https://*.example.com/*",
                "https://api.internal.example.com/mcp",
                true,
            ),
            ("https://*.example.com/*", "https://example.com/mcp", false),
            (
                "https://*.example.com/*",
                "https://evil.test/?x=.example.com/",
                false,
            ),
            ("http://localhost:*/*", "http://localhost:8080/mcp", true),
            ("http://localhost:*/*", "https://localhost:8080/mcp", false),
            ("*://mcp.example.com/*", "wss://mcp.example.com/ws", true),
            (
                "https://Mcp.Example.com/*",
                "https://mcp.example.com/api",
                true,
            ),
            (
                "https://mcp.example.com/*",
                "https://MCP.example.com./api",
                true,
            ),
            (
                "https://mcp.example.com/API",
                "https://mcp.example.com/api",
                false,
            ),
            (
                "https://mcp.example.com/a*c",
                "https://mcp.example.com/abbbc",
                true,
            ),
            (
                "https://mcp.example.com/a*c",
                "https://mcp.example.com/abbbd",
                false,
            ),
            ("https://[::1]:*/*", "https://[::1]:9/x", true),
        ] {
            check(pattern, url, expect);
        }
    }
}
