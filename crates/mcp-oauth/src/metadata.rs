//! Discovery: the `WWW-Authenticate` challenge, RFC 9728 protected-resource
//! metadata, RFC 8414 / OpenID authorization-server metadata and the
//! 2025-03-26 fallbacks.

use serde::Deserialize;
use url::Url;

use crate::AuthError;

/// The parts of a `Bearer` challenge that drive authorization.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BearerChallenge {
    /// `resource_metadata`: where the protected-resource metadata lives.
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes this request needs.
    pub scope: Option<String>,
    /// `error`, e.g. `invalid_token` or `insufficient_scope`.
    pub error: Option<String>,
}

/// Parses the `Bearer` challenge of a `WWW-Authenticate` header value, or
/// the `DPoP` one (RFC 9449 section 7.1) when there is no `Bearer` one.
/// Unknown parameters and other schemes are ignored; a header without
/// either challenge gives the empty default.
pub(crate) fn parse_www_authenticate(header: &str) -> BearerChallenge {
    if find_scheme(header, "bearer").is_some() {
        parse_challenge(header, "bearer")
    } else {
        parse_challenge(header, "dpop")
    }
}

/// Whether the header has a challenge with `scheme` (case-insensitive).
pub(crate) fn has_scheme(header: &str, scheme: &str) -> bool {
    find_scheme(header, scheme).is_some()
}

/// Parses the parameters of the `scheme` challenge of a `WWW-Authenticate`
/// header value (the empty default when there is none).
pub(crate) fn parse_challenge(header: &str, scheme: &str) -> BearerChallenge {
    let mut out = BearerChallenge::default();
    let Some(start) = find_scheme(header, scheme) else {
        return out;
    };
    let mut rest = &header[start + scheme.len()..];
    loop {
        rest = rest.trim_start_matches([' ', '\t', ',']);
        let Some(eq) = rest.find('=') else { break };
        let key = rest[..eq].trim();
        if key.contains(' ') {
            // The next challenge's scheme (`Basic realm=...`): stop here.
            break;
        }
        rest = rest[eq + 1..].trim_start();
        let value;
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut buf = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, escaped)) = chars.next() {
                            buf.push(escaped);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    _ => buf.push(c),
                }
            }
            value = buf;
            rest = &quoted[end.min(quoted.len())..];
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            value = rest[..end].trim().to_owned();
            rest = &rest[end..];
        }
        match key.to_ascii_lowercase().as_str() {
            "resource_metadata" => out.resource_metadata = Some(value),
            "scope" => out.scope = Some(value),
            "error" => out.error = Some(value),
            _ => {}
        }
    }
    out
}

fn find_scheme(header: &str, scheme: &str) -> Option<usize> {
    let lower = header.to_ascii_lowercase();
    let scheme = scheme.to_ascii_lowercase();
    let mut from = 0;
    while let Some(pos) = lower[from..].find(&scheme) {
        let at = from + pos;
        let before_ok = at == 0 || matches!(lower.as_bytes()[at - 1], b' ' | b',' | b'\t');
        let after = lower.as_bytes().get(at + scheme.len());
        let after_ok = matches!(after, None | Some(b' ') | Some(b'\t'));
        if before_ok && after_ok {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// RFC 9728 protected-resource metadata (the fields we use).
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
pub(crate) struct ProtectedResourceMetadata {
    /// The resource identifier; must match the server url.
    #[serde(default)]
    pub resource: Option<String>,
    /// Issuers of the authorization servers that protect it.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// Scopes the resource understands.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
}

/// RFC 8414 / OpenID Connect discovery metadata (the fields we use).
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq, serde::Serialize)]
pub(crate) struct AuthServerMetadata {
    /// The issuer identifier.
    #[serde(default)]
    pub issuer: Option<String>,
    /// Where the user is sent to approve access.
    pub authorization_endpoint: String,
    /// Where codes, refresh tokens and assertions become tokens.
    pub token_endpoint: String,
    /// RFC 7591 dynamic registration endpoint.
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    /// Scopes the server can grant.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// Client authentication methods at the token endpoint.
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Grant types the server accepts.
    #[serde(default)]
    pub grant_types_supported: Option<Vec<String>>,
    /// PKCE methods; MCP requires `S256`.
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Whether a URL may serve as `client_id` (client ID metadata documents).
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    /// RFC 9207: the server puts `iss` in every authorization response, so
    /// a response without one is refused.
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
    /// RFC 7009 token revocation endpoint.
    #[serde(default)]
    pub revocation_endpoint: Option<String>,
    /// JWS algorithms the server accepts in DPoP proofs (RFC 9449 5.1).
    #[serde(default)]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl AuthServerMetadata {
    /// The 2025-03-26 defaults: `/authorize`, `/token` and `/register` at the
    /// root of the server's origin.
    pub(crate) fn fallback_for(origin: &Url) -> Self {
        let at = |path: &str| origin.join(path).map(String::from).unwrap_or_default();
        Self {
            issuer: Some(origin.origin().ascii_serialization()),
            authorization_endpoint: at("/authorize"),
            token_endpoint: at("/token"),
            registration_endpoint: Some(at("/register")),
            ..Self::default()
        }
    }

    /// Every endpoint the flow may send to or open, with what it is for:
    /// each is judged by the URL policy before anything is sent to any.
    pub(crate) fn endpoints(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [
            ("authorization endpoint", Some(&self.authorization_endpoint)),
            ("token endpoint", Some(&self.token_endpoint)),
            ("registration endpoint", self.registration_endpoint.as_ref()),
            ("revocation endpoint", self.revocation_endpoint.as_ref()),
        ]
        .into_iter()
        .filter_map(|(what, url)| Some((what, url?.as_str())))
    }

    /// Whether `method` is allowed at the token endpoint; RFC 8414 makes
    /// `client_secret_basic` the default when the list is absent.
    pub(crate) fn supports_auth_method(&self, method: &str) -> bool {
        match &self.token_endpoint_auth_methods_supported {
            Some(list) => list.iter().any(|m| m == method),
            None => method == "client_secret_basic",
        }
    }

    /// The issuer, else the origin of the token endpoint: the audience of
    /// assertions sent to this server.
    pub(crate) fn audience(&self) -> String {
        if let Some(issuer) = &self.issuer {
            return issuer.clone();
        }
        Url::parse(&self.token_endpoint)
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_else(|_| self.token_endpoint.clone())
    }
}

/// Where protected-resource metadata may live, best first: the
/// challenge's `resource_metadata`, then the path-based RFC 9728 location,
/// then the root one. The later ones are only tried when the earlier ones
/// have nothing.
pub(crate) fn protected_resource_candidates(server_url: &Url, hint: Option<&str>) -> Vec<Url> {
    let mut out = Vec::new();
    if let Some(hint) = hint.and_then(|h| server_url.join(h).ok()) {
        out.push(hint);
    }
    let path = server_url.path().trim_end_matches('/');
    if !path.is_empty()
        && let Ok(u) = server_url.join(&format!("/.well-known/oauth-protected-resource{path}"))
    {
        out.push(u);
    }
    if let Ok(u) = server_url.join("/.well-known/oauth-protected-resource") {
        out.push(u);
    }
    let mut seen = Vec::new();
    out.retain(|u| {
        let fresh = !seen.contains(u);
        seen.push(u.clone());
        fresh
    });
    out
}

/// Where authorization-server metadata may live for `issuer`, best first
/// (RFC 8414 section 3.1 path insertion, then OpenID discovery with path
/// insertion, then OpenID discovery appended to the issuer path). An issuer
/// with a path is never looked up at the bare root.
pub(crate) fn auth_server_candidates(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let mut out = Vec::new();
    let mut push = |p: String| {
        if let Ok(u) = issuer.join(&p) {
            out.push(u);
        }
    };
    if path.is_empty() {
        push("/.well-known/oauth-authorization-server".into());
        push("/.well-known/openid-configuration".into());
    } else {
        push(format!("/.well-known/oauth-authorization-server{path}"));
        push(format!("/.well-known/openid-configuration{path}"));
        push(format!("{path}/.well-known/openid-configuration"));
    }
    out
}

/// Whether the protected-resource `resource` identifies `server_url`: same
/// origin, and the server's path lies at or under the resource's path.
pub(crate) fn resource_matches(resource: &str, server_url: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else {
        return false;
    };
    if resource.origin() != server_url.origin() {
        return false;
    }
    let want = resource.path().trim_end_matches('/');
    let have = server_url.path().trim_end_matches('/');
    have == want || have.starts_with(&format!("{want}/"))
}

/// The canonical form of a server url used as the RFC 8707 `resource` when
/// no metadata names one: no fragment, no query.
pub(crate) fn canonical_resource(server_url: &Url) -> String {
    let mut u = server_url.clone();
    u.set_fragment(None);
    u.set_query(None);
    u.to_string()
}

/// Checks an `authServerMetadataUrl` override with the policy for URLs
/// the user configured.
pub(crate) fn check_metadata_override(server: &str, raw: &str) -> Result<Url, AuthError> {
    crate::UrlPolicy::user().check(raw).map_err(|reason| {
        AuthError::config(
            server.to_owned(),
            "oauth.authServerMetadataUrl",
            reason.to_string(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_www(header: &str, expect: (Option<&str>, Option<&str>, Option<&str>)) {
        let got = parse_www_authenticate(header);
        assert_eq!(
            (
                got.resource_metadata.as_deref(),
                got.scope.as_deref(),
                got.error.as_deref()
            ),
            expect,
            "{header}"
        );
    }

    #[test]
    fn www_authenticate_variants() {
        check_www(
            r#"Bearer resource_metadata="http://x/.well-known/oauth-protected-resource/mcp""#,
            (
                Some("http://x/.well-known/oauth-protected-resource/mcp"),
                None,
                None,
            ),
        );
        check_www(
            r#"Bearer scope="mcp:basic mcp:write", resource_metadata="http://x/m", error="insufficient_scope""#,
            (
                Some("http://x/m"),
                Some("mcp:basic mcp:write"),
                Some("insufficient_scope"),
            ),
        );
        check_www(
            r#"Bearer error="insufficient_scope", scope="a", error_description="never \"ok\"""#,
            (None, Some("a"), Some("insufficient_scope")),
        );
        check_www(
            r#"Basic realm="x", Bearer error=invalid_token, scope=a"#,
            (None, Some("a"), Some("invalid_token")),
        );
        check_www(r#"Basic realm="bearer""#, (None, None, None));
        check_www(
            r#"DPoP error="use_dpop_nonce", resource_metadata="http://x/m""#,
            (Some("http://x/m"), None, Some("use_dpop_nonce")),
        );
        check_www(
            r#"DPoP algs="ES256", Bearer resource_metadata="http://x/b""#,
            (Some("http://x/b"), None, None),
        );
        check_www("Bearer", (None, None, None));
        check_www("", (None, None, None));
    }

    fn urls(v: Vec<Url>) -> Vec<String> {
        v.into_iter().map(String::from).collect()
    }

    #[test]
    fn protected_resource_locations() {
        let server = Url::parse("http://localhost:9/mcp").unwrap();
        assert_eq!(
            urls(protected_resource_candidates(&server, None)),
            [
                "http://localhost:9/.well-known/oauth-protected-resource/mcp",
                "http://localhost:9/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            urls(protected_resource_candidates(
                &server,
                Some("http://localhost:9/custom/metadata/location.json")
            )),
            [
                "http://localhost:9/custom/metadata/location.json",
                "http://localhost:9/.well-known/oauth-protected-resource/mcp",
                "http://localhost:9/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            urls(protected_resource_candidates(
                &server,
                Some("http://localhost:9/.well-known/oauth-protected-resource/mcp")
            )),
            [
                "http://localhost:9/.well-known/oauth-protected-resource/mcp",
                "http://localhost:9/.well-known/oauth-protected-resource"
            ]
        );
        let root = Url::parse("http://localhost:9/").unwrap();
        assert_eq!(
            urls(protected_resource_candidates(&root, None)),
            ["http://localhost:9/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn auth_server_locations_with_and_without_tenant() {
        let root = Url::parse("http://localhost:7").unwrap();
        assert_eq!(
            urls(auth_server_candidates(&root)),
            [
                "http://localhost:7/.well-known/oauth-authorization-server",
                "http://localhost:7/.well-known/openid-configuration"
            ]
        );
        let tenant = Url::parse("http://localhost:7/tenant1/").unwrap();
        assert_eq!(
            urls(auth_server_candidates(&tenant)),
            [
                "http://localhost:7/.well-known/oauth-authorization-server/tenant1",
                "http://localhost:7/.well-known/openid-configuration/tenant1",
                "http://localhost:7/tenant1/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn resource_matching() {
        let server = Url::parse("http://localhost:9/mcp").unwrap();
        for (resource, ok) in [
            ("http://localhost:9/mcp", true),
            ("http://localhost:9/mcp/", true),
            ("http://localhost:9", true),
            ("http://localhost:9/", true),
            ("https://evil.example.com/mcp", false),
            ("http://localhost:10/mcp", false),
            ("http://localhost:9/mc", false),
            ("http://localhost:9/mcp/sub", false),
            ("not a url", false),
        ] {
            assert_eq!(resource_matches(resource, &server), ok, "{resource}");
        }
    }

    #[test]
    fn metadata_override_schemes() {
        assert!(check_metadata_override("s", "https://as.example.com/m").is_ok());
        assert!(check_metadata_override("s", "http://127.0.0.1:5/m").is_ok());
        assert!(check_metadata_override("s", "http://localhost:5/m").is_ok());
        let err = check_metadata_override("s", "http://as.example.com/m")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "oauth settings for s: oauth.authServerMetadataUrl: plain http is allowed only on loopback, and only for a server on loopback; use https"
        );
    }

    proptest::proptest! {
        #[test]
        fn www_authenticate_never_panics(header in "\\PC{0,80}") {
            let _ = parse_www_authenticate(&header);
        }

        #[test]
        fn quoted_parameters_round_trip(
            scope in "[ -~]{0,30}",
            resource in "[!#-~]{1,30}",
            error in "[a-z_]{1,20}",
        ) {
            let quote = |v: &str| v.replace('\\', "\\\\").replace('"', "\\\"");
            let header = format!(
                r#"Bearer error="{}", scope="{}", resource_metadata="{}""#,
                quote(&error), quote(&scope), quote(&resource)
            );
            let got = parse_www_authenticate(&header);
            proptest::prop_assert_eq!(got.scope.as_deref(), Some(scope.as_str()));
            proptest::prop_assert_eq!(got.resource_metadata.as_deref(), Some(resource.as_str()));
            proptest::prop_assert_eq!(got.error.as_deref(), Some(error.as_str()));
        }
    }

    #[test]
    fn fallback_endpoints_sit_at_the_origin_root() {
        let meta = AuthServerMetadata::fallback_for(&Url::parse("http://localhost:3/mcp").unwrap());
        assert_eq!(meta.authorization_endpoint, "http://localhost:3/authorize");
        assert_eq!(meta.token_endpoint, "http://localhost:3/token");
        assert_eq!(
            meta.registration_endpoint.as_deref(),
            Some("http://localhost:3/register")
        );
    }
}
