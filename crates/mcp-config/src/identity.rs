//! The identity of a server (REFERENCE §1.5): its signature (what endpoint
//! it really reaches, used to connect equal servers once), the claude.ai
//! proxy url unwrap, and the config hash (what a runtime compares to decide
//! whether a server must reconnect).
//!
//! Urls and signatures shown to people go through [`redact_url`] and
//! [`redacted_signature`]: credentials in a url (userinfo, secret-looking
//! query values, values expanded from variables) become `***`. The
//! identity itself never changes: dedupe and reconnection compare the real
//! [`signature`] and [`config_hash`].

use std::collections::BTreeMap;

use percent_encoding::percent_decode_str;
use serde_json::{Value, json};

use crate::expand::expand_vars;
use crate::types::{ServerConfig, StdioConfig, TransportConfig};

/// Path markers of claude.ai's connector proxy.
const CCR_PROXY_MARKERS: &[&str] = &["/v2/session_ingress/shttp/mcp/", "/v2/ccr-sessions/"];

/// The endpoint identity of a server; `None` for in-process (sdk) servers.
///
/// stdio: `stdio:[command|arg|…]` with `\` and `|` escaped (env ignored);
/// remote kinds: `url:` followed by the unwrapped url.
pub fn signature(config: &ServerConfig) -> Option<String> {
    transport_signature(&config.transport)
}

/// [`signature`] of a transport alone.
pub(crate) fn transport_signature(transport: &TransportConfig) -> Option<String> {
    match transport {
        TransportConfig::Stdio(s) => {
            let parts: Vec<String> = std::iter::once(&s.command)
                .chain(&s.args)
                .map(|p| p.replace('\\', "\\\\").replace('|', "\\|"))
                .collect();
            Some(format!("stdio:[{}]", parts.join("|")))
        }
        TransportConfig::Sse(r) | TransportConfig::Http(r) | TransportConfig::Ws(r) => {
            Some(format!("url:{}", unwrap_ccr_proxy_url(&r.url)))
        }
        TransportConfig::ClaudeAiProxy(p) => Some(format!("url:{}", unwrap_ccr_proxy_url(&p.url))),
        TransportConfig::Sdk { .. } => None,
    }
}

/// The vendor url inside a claude.ai proxy url, or `url` unchanged.
///
/// A url carrying one of the proxy markers anywhere and a query pair whose
/// key is exactly `mcp_url` with a non-empty value yields that value,
/// percent-decoded (`+` is a space, invalid escapes stay literal, bytes that
/// are not UTF-8 are replaced).
pub fn unwrap_ccr_proxy_url(url: &str) -> String {
    if !CCR_PROXY_MARKERS.iter().any(|m| url.contains(m)) {
        return url.to_owned();
    }
    let Some((_, query)) = url.split_once('?') else {
        return url.to_owned();
    };
    let query = query.split_once('#').map_or(query, |(q, _)| q);
    for pair in query.split('&') {
        if let Some(("mcp_url", value)) = pair.split_once('=')
            && !value.is_empty()
        {
            let spaced = value.replace('+', " ");
            return percent_decode_str(&spaced).decode_utf8_lossy().into_owned();
        }
    }
    url.to_owned()
}

/// Query and fragment keys whose values are shown as `***`: any key that
/// contains one of these (compared in lowercase) looks like it carries a
/// credential. Over-matching (`author`, `zipcode`) only hides a harmless
/// value from a display.
const SECRET_KEY_PARTS: &[&str] = &[
    "token",
    "secret",
    "passw",
    "pwd",
    "auth",
    "key",
    "sig",
    "credential",
    "session",
    "jwt",
    "bearer",
    "code",
    "ticket",
    "cookie",
];

/// `url` as it may be shown to a person or written to a report: the same
/// text with every part that may be a credential replaced by `***`.
///
/// - with `written` (the url as the config file spells it, before `${VAR}`
///   expansion), the text shown is the written one with every variable
///   reference as `***`: no part that came from a variable is ever shown,
///   wherever it sits (host, path, query, userinfo);
/// - userinfo: the password (`user:***@`); a user name alone, which is how
///   tokens are often passed (`https://<token>@host`), becomes `***@`;
/// - query and fragment values whose key looks secret (`token`, `api_key`,
///   `sig`, `password`, ... see the list in the source).
///
/// The url is not normalised or re-encoded: what is not redacted is shown
/// as written. This is for display only; [`signature`] and every
/// connection use the url unchanged.
pub fn redact_url(url: &str, written: Option<&str>) -> String {
    let masked;
    let url = match written {
        Some(written) => {
            masked = expand_vars(written, |_| Some(REDACTED.to_owned())).value;
            masked.as_str()
        }
        None => url,
    };
    let parts = UrlParts::split(url);
    let mut out = String::with_capacity(url.len());
    out.push_str(parts.scheme);
    if let Some(userinfo) = parts.userinfo {
        match userinfo.split_once(':') {
            Some((user, _)) => {
                out.push_str(user);
                out.push_str(":***@");
            }
            None => out.push_str("***@"),
        }
    }
    out.push_str(parts.path);
    for (mark, text) in [('?', parts.query), ('#', parts.fragment)] {
        let Some(text) = text else { continue };
        out.push(mark);
        for (i, pair) in text.split('&').enumerate() {
            if i > 0 {
                out.push('&');
            }
            match pair.split_once('=') {
                Some((key, value)) if !value.is_empty() && looks_secret(key) => {
                    out.push_str(key);
                    out.push_str("=***");
                }
                _ => out.push_str(pair),
            }
        }
    }
    out
}

/// What a redacted part is shown as.
const REDACTED: &str = "***";

fn looks_secret(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    SECRET_KEY_PARTS.iter().any(|part| key.contains(part))
}

/// A url cut into the parts [`redact_url`] treats, without decoding.
#[derive(Debug, Clone, Copy)]
struct UrlParts<'a> {
    /// Up to and including `://` (or empty).
    scheme: &'a str,
    userinfo: Option<&'a str>,
    /// Host, port and path.
    path: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

impl<'a> UrlParts<'a> {
    fn split(url: &'a str) -> UrlParts<'a> {
        let (rest, fragment) = match url.split_once('#') {
            Some((r, f)) => (r, Some(f)),
            None => (url, None),
        };
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q)),
            None => (rest, None),
        };
        let (scheme, rest) = match rest.find("://") {
            Some(i) => rest.split_at(i + 3),
            None => ("", rest),
        };
        // The authority ends at the first `/`; its userinfo ends at its
        // last `@`. (A url parser also ends the authority at `\` for
        // http(s) and ws(s); not doing so can only hide more.)
        let authority_end = rest.find('/').unwrap_or(rest.len());
        let (userinfo, path) = match rest.get(..authority_end).and_then(|a| a.rfind('@')) {
            Some(at) if !scheme.is_empty() => (rest.get(..at), rest.get(at + 1..).unwrap_or("")),
            _ => (None, rest),
        };
        UrlParts {
            scheme,
            userinfo,
            path,
            query,
            fragment,
        }
    }
}

/// [`signature`] for display. `written` is the server's entry as its file
/// spells it, before `${VAR}` expansion (the loader keeps it in
/// `raw_entries`): every part that came from a variable is shown as `***`
/// (a stdio command or argument, see [`redacted_command_line`]; a url's
/// host, path, query or userinfo, see [`redact_url`]), and every url in it
/// loses its credentials. Without `written` only url credentials are
/// hidden. The signature used to connect equal servers once is
/// [`signature`], which this never changes.
pub fn redacted_signature(config: &ServerConfig, written: Option<&Value>) -> Option<String> {
    match &config.transport {
        TransportConfig::Stdio(s) => {
            let parts: Vec<String> = redacted_command_line(s, written)
                .into_iter()
                .map(|shown| shown.replace('\\', "\\\\").replace('|', "\\|"))
                .collect();
            Some(format!("stdio:[{}]", parts.join("|")))
        }
        TransportConfig::Sse(r) | TransportConfig::Http(r) | TransportConfig::Ws(r) => {
            Some(redacted_url_signature(&r.url, written_url(written)))
        }
        TransportConfig::ClaudeAiProxy(p) => {
            Some(redacted_url_signature(&p.url, written_url(written)))
        }
        TransportConfig::Sdk { .. } => None,
    }
}

/// A stdio server's command and arguments as they may be shown to a
/// person: with `written` (the entry as its file spells it), a part
/// written with a `${VAR}` reference is shown as written with every
/// reference as `***` (an expanded variable may be a token: `--api-key
/// ${KEY}`), and a part that cannot be matched to what was written is
/// `***` whole; a url among them loses its credentials ([`redact_url`]).
/// Paths the loader resolved (`~`, a plugin's relative paths) are shown
/// resolved. Without `written` only url credentials are hidden.
pub fn redacted_command_line(stdio: &StdioConfig, written: Option<&Value>) -> Vec<String> {
    let parts: Vec<&str> = std::iter::once(stdio.command.as_str())
        .chain(stdio.args.iter().map(String::as_str))
        .collect();
    let written_parts = written.map(written_command_line);
    parts
        .iter()
        .enumerate()
        .map(|(i, &part)| {
            let shown = match &written_parts {
                None => part.to_owned(),
                Some(written) if written.len() == parts.len() => shown_part(part, written[i]),
                // Written and loaded parts do not line up: show only what
                // is written word for word, without a variable.
                Some(written) if written.iter().any(|w| *w == part && !w.contains("${")) => {
                    part.to_owned()
                }
                Some(_) => REDACTED.to_owned(),
            };
            without_url_credentials(shown)
        })
        .collect()
}

/// Command-line words (a credential command's, say) as they may be shown:
/// a url among them loses its credentials ([`redact_url`]).
pub fn redacted_words(words: &[String]) -> Vec<String> {
    words
        .iter()
        .map(|word| without_url_credentials(word.clone()))
        .collect()
}

/// A remote server's url as it may be shown ([`redact_url`]), `written`
/// being the server's entry as its file spells it.
pub fn redacted_remote_url(url: &str, written: Option<&Value>) -> String {
    redact_url(url, written_url(written))
}

/// A command-line word, without its credentials when it is a url.
fn without_url_credentials(word: String) -> String {
    if word.contains("://") {
        redact_url(&word, None)
    } else {
        word
    }
}

/// One loaded part of a command line as shown, given how it is written.
fn shown_part(part: &str, written: &str) -> String {
    if written.contains("${") {
        expand_vars(written, |_| Some(REDACTED.to_owned())).value
    } else {
        part.to_owned()
    }
}

/// The command and the string arguments of a written stdio entry, in the
/// order the loader reads them.
fn written_command_line(entry: &Value) -> Vec<&str> {
    let command = entry.get("command").and_then(Value::as_str);
    let args = entry
        .get("args")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    command.into_iter().chain(args).collect()
}

/// The url of a written entry.
fn written_url(entry: Option<&Value>) -> Option<&str> {
    entry
        .and_then(|entry| entry.get("url"))
        .and_then(Value::as_str)
}

fn redacted_url_signature(url: &str, written: Option<&str>) -> String {
    let written = written.map(unwrap_ccr_proxy_url);
    format!(
        "url:{}",
        redact_url(&unwrap_ccr_proxy_url(url), written.as_deref())
    )
}

/// FNV-1a 64 of `bytes`.
pub(crate) fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// FNV-1a 64 of `text` as 16 lowercase hex digits.
pub(crate) fn fnv1a64_hex(text: &str) -> String {
    format!("{:016x}", fnv1a64(text.as_bytes()))
}

/// The canonical rendering the config hash is computed over: every field
/// that changes how the server is reached or used (kind, command, args, env,
/// envPassthrough, cwd, url, headers, headersHelper, oauth, sdk name,
/// proxy id, timeouts, toolFilter, required, descriptionLimit), and nothing
/// about where it was configured (name, scope, source, enabled). Maps are
/// sorted, so the rendering is stable.
///
/// A literal `oauth.clientSecret` serializes as `***`; here it is replaced
/// by a digest of its value, so a changed secret still reconnects.
pub(crate) fn canonical_rendering(config: &ServerConfig) -> String {
    let mut out = String::new();
    write_canonical(&canonical_value(config), &mut out);
    out
}

/// The value [`canonical_rendering`] writes.
fn canonical_value(config: &ServerConfig) -> Value {
    let mut value = json!({
        "transport": config.transport,
        "required": config.required,
        "toolFilter": config.tool_filter,
        "timeouts": config.timeouts,
    });
    // Added only when set, so the hashes of entries without it stay
    // what they were.
    if let Some(limit) = config.description_limit {
        value["descriptionLimit"] = json!(limit.get());
    }
    if let TransportConfig::Sse(r) | TransportConfig::Http(r) = &config.transport
        && let Some(secret) = r.oauth.as_ref().and_then(|o| o.client_secret.as_ref())
    {
        value["transport"]["oauth"]["clientSecret"] =
            json!(fnv1a64_hex(&format!("clientSecret\0{}", secret.expose())));
    }
    value
}

// Recursion is bounded by the shape of a `ServerConfig` (a few levels).
fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The config hash of a server: the first 64 bits of SHA-256, as 16
/// lowercase hex digits, of a canonical rendering of every field that changes how the server is
/// reached or used (kind, command, args, env, envPassthrough, cwd, url,
/// headers, headersHelper, oauth, sdk name, proxy id, timeouts, toolFilter,
/// required, descriptionLimit), and nothing about where it was configured
/// (name, scope, source, enabled). Maps are sorted, so the hash is stable;
/// a literal `oauth.clientSecret` enters as a digest of its value, so a
/// changed secret still changes the hash. A runtime compares hashes to
/// decide whether a server must reconnect; an organisation's policy pins a
/// server by it, so it is a cryptographic digest: no one can write a
/// different entry with a pinned hash.
pub fn config_hash(config: &ServerConfig) -> String {
    sha256_hex16(&canonical_rendering(config))
}

/// One digest per part of what [`config_hash`] covers, keyed by the
/// part's name as a config file spells it: `type`, `command`, `args`,
/// `env`, `envPassthrough`, `cwd`, `url`, `headers`, `headersHelper`,
/// `oauth`, `name` (sdk), `id` (proxy), `timeouts`, `toolFilter`,
/// `required`, `descriptionLimit`; a part that is not set has no digest.
///
/// A policy pin keeps them beside the config hash, so that when the hash
/// differs the parts whose digests differ can be named. Each is the first
/// 64 bits of SHA-256, as 16 lowercase hex digits, of the part's name, a
/// NUL and its canonical rendering: a value never shows, but like the
/// config hash, a digest of a guessable secret (a short token in `env` or
/// `headers`) can be found by trying values.
pub fn config_field_hashes(config: &ServerConfig) -> BTreeMap<String, String> {
    let Value::Object(mut parts) = canonical_value(config) else {
        return BTreeMap::new();
    };
    let transport = match parts.remove("transport") {
        Some(Value::Object(transport)) => transport,
        _ => serde_json::Map::new(),
    };
    transport
        .into_iter()
        .chain(parts)
        .filter(|(_, value)| !value.is_null())
        .map(|(part, value)| {
            let mut text = format!("{part}\0");
            write_canonical(&value, &mut text);
            (part, sha256_hex16(&text))
        })
        .collect()
}

/// The first 64 bits of SHA-256 of `text`, as 16 lowercase hex digits.
fn sha256_hex16(text: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(text.as_bytes());
    digest[..8]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::types::{RemoteConfig, StdioConfig};

    fn server(transport: TransportConfig) -> ServerConfig {
        ServerConfig::new("s", transport)
    }

    fn stdio(command: &str, args: &[&str], env: &[(&str, &str)]) -> ServerConfig {
        server(TransportConfig::Stdio(StdioConfig {
            command: command.into(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            cwd: None,
            env_passthrough: Vec::new(),
        }))
    }

    fn remote(url: &str) -> RemoteConfig {
        RemoteConfig {
            url: url.into(),
            headers: BTreeMap::new(),
            headers_helper: None,
            oauth: None,
        }
    }

    #[test]
    fn signature_vectors() {
        let check = |config: ServerConfig, expect: Option<&str>| {
            assert_eq!(signature(&config).as_deref(), expect);
        };
        check(
            stdio("uvx", &["mcp-server"], &[("TOKEN", "secret")]),
            Some("stdio:[uvx|mcp-server]"),
        );
        check(
            server(TransportConfig::Ws(remote(
                "https://api.anthropic.com/v2/ccr-sessions/1?mcp_url=wss%3A%2F%2Fvendor.example%2Fmcp",
            ))),
            Some("url:wss://vendor.example/mcp"),
        );
        check(stdio("a|b", &["c\\d"], &[]), Some("stdio:[a\\|b|c\\\\d]"));
        check(
            server(TransportConfig::Http(remote("https://x.example/mcp"))),
            Some("url:https://x.example/mcp"),
        );
        check(server(TransportConfig::Sdk { name: "n".into() }), None);
    }

    #[test]
    fn unwrap_vectors() {
        let check =
            |url: &str, expect: &str| assert_eq!(unwrap_ccr_proxy_url(url), expect, "{url}");
        check(
            "https://api.anthropic.com/v2/ccr-sessions/1?mcp_url=wss%3A%2F%2Fvendor.example%2Fmcp",
            "wss://vendor.example/mcp",
        );
        check(
            "https://h/v2/session_ingress/shttp/mcp/abc?x=1&mcp_url=https%3A%2F%2Fv.example%2Fa+b",
            "https://v.example/a b",
        );
        // invalid escapes stay literal
        check("https://h/v2/ccr-sessions/1?mcp_url=a%zzb%2", "a%zzb%2");
        // lossy UTF-8
        check("https://h/v2/ccr-sessions/1?mcp_url=%ff", "\u{fffd}");
        // no marker, no key, empty value, near-miss key: unchanged
        for url in [
            "https://vendor.example/mcp?mcp_url=x",
            "https://h/v2/ccr-sessions/1",
            "https://h/v2/ccr-sessions/1?mcp_url=",
            "https://h/v2/ccr-sessions/1?xmcp_url=y",
            "https://h/v2/ccr-sessions/1?mcp_url",
        ] {
            check(url, url);
        }
    }

    #[test]
    fn field_hashes_change_only_for_the_part_that_changed() {
        let base = stdio("node", &["server.js"], &[("K", "1")]);
        let hashes = config_field_hashes(&base);
        let parts: Vec<&str> = hashes.keys().map(String::as_str).collect();
        assert_eq!(
            parts,
            [
                "args",
                "command",
                "env",
                "required",
                "timeouts",
                "toolFilter",
                "type"
            ]
        );
        let changed = |config: &ServerConfig| -> Vec<String> {
            let now = config_field_hashes(config);
            let parts: std::collections::BTreeSet<&String> =
                now.keys().chain(hashes.keys()).collect();
            parts
                .into_iter()
                .filter(|part| now.get(*part) != hashes.get(*part))
                .cloned()
                .collect()
        };
        assert_eq!(
            changed(&stdio("deno", &["server.js"], &[("K", "1")])),
            ["command"]
        );
        assert_eq!(changed(&stdio("node", &["x.js"], &[("K", "1")])), ["args"]);
        assert_eq!(
            changed(&stdio("node", &["server.js"], &[("K", "2")])),
            ["env"]
        );
        let mut remote = server(TransportConfig::Http(remote("https://x.example/mcp")));
        let before = config_field_hashes(&remote);
        if let TransportConfig::Http(r) = &mut remote.transport {
            r.headers.insert("X".into(), "1".into());
        }
        let after = config_field_hashes(&remote);
        assert_ne!(before["headers"], after["headers"]);
        assert_eq!(before["url"], after["url"]);
        assert!(!before.contains_key("command"));
    }

    #[test]
    fn fnv_vectors() {
        assert_eq!(fnv1a64_hex(""), "cbf29ce484222325");
        assert_eq!(fnv1a64_hex("a"), "af63dc4c8601ec8c");
    }

    #[test]
    fn hash_changes_with_every_behaviour_field_and_ignores_name() {
        let base = server(TransportConfig::Http(remote("https://x.example/mcp")));
        let h = config_hash(&base);
        let mut renamed = base.clone();
        renamed.name = "other".into();
        renamed.enabled = false;
        assert_eq!(config_hash(&renamed), h);

        let mut variants: Vec<ServerConfig> = Vec::new();
        let mut v = base.clone();
        if let TransportConfig::Http(r) = &mut v.transport {
            r.headers.insert("Authorization".into(), "Bearer 1".into());
        }
        variants.push(v);
        let mut v = base.clone();
        if let TransportConfig::Http(r) = &mut v.transport {
            r.headers_helper = Some("helper".into());
        }
        variants.push(v);
        let mut v = base.clone();
        if let TransportConfig::Http(r) = &mut v.transport {
            r.oauth = Some(Default::default());
        }
        variants.push(v);
        for change in [
            |o: &mut crate::McpOAuthConfig| o.client_secret = Some(crate::ConfigSecret::new("a")),
            |o: &mut crate::McpOAuthConfig| o.client_secret = Some(crate::ConfigSecret::new("b")),
            |o: &mut crate::McpOAuthConfig| {
                o.assertion = Some(crate::CredentialSource::Env { name: "T".into() });
            },
            |o: &mut crate::McpOAuthConfig| o.dpop = Some(true),
            |o: &mut crate::McpOAuthConfig| o.grant = Some(crate::OAuthGrantKind::JwtBearer),
        ] {
            let mut v = base.clone();
            if let TransportConfig::Http(r) = &mut v.transport {
                let mut oauth = crate::McpOAuthConfig::default();
                change(&mut oauth);
                r.oauth = Some(oauth);
            }
            variants.push(v);
        }
        let mut v = base.clone();
        v.transport = TransportConfig::Sse(remote("https://x.example/mcp"));
        variants.push(v);
        let mut v = base.clone();
        v.required = true;
        variants.push(v);
        let mut v = base.clone();
        v.tool_filter.include.push("a*".into());
        variants.push(v);
        let mut v = base.clone();
        v.timeouts.tool_call = std::time::Duration::from_millis(5);
        variants.push(v);
        let mut v = base.clone();
        v.description_limit = std::num::NonZeroUsize::new(300);
        variants.push(v);
        for v in &variants {
            assert_ne!(config_hash(v), h, "{v:?}");
        }
        // Each variant differs from every other (two secrets included),
        // and no rendering carries the secret itself.
        let hashes: std::collections::BTreeSet<String> = variants.iter().map(config_hash).collect();
        assert_eq!(hashes.len(), variants.len());
        for v in &variants {
            let text = canonical_rendering(v);
            assert!(!text.contains("\"a\"") && !text.contains("\"b\""), "{text}");
        }
        let a = config_hash(&stdio("a", &[], &[("K", "1")]));
        // `envPassthrough` counts when set, and an empty one renders as before.
        let mut passing = stdio("a", &[], &[("K", "1")]);
        if let TransportConfig::Stdio(s) = &mut passing.transport {
            s.env_passthrough = vec!["AWS_PROFILE".into()];
        }
        assert_ne!(config_hash(&passing), a);
        assert!(!canonical_rendering(&stdio("a", &[], &[])).contains("envPassthrough"));
        assert_ne!(a, config_hash(&stdio("a", &[], &[("K", "2")])));
        assert_ne!(a, config_hash(&stdio("a", &["x"], &[("K", "1")])));
    }
}
