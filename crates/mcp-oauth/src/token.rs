//! Token endpoint requests: client authentication (`none`,
//! `client_secret_basic`, `client_secret_post`, `private_key_jwt`), the
//! response, and the RFC 7523 client assertion.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;

use crate::clock::now_secs;
use crate::dpop::TokenDpop;
use crate::store::TokenSet;
use crate::{AuthError, Secret};

/// How the client proves who it is at the token endpoint.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ClientAuth {
    /// No client authentication and no `client_id`: the grant itself
    /// identifies the caller (a workload identity assertion).
    Anonymous,
    /// A public client: `client_id` in the form.
    None {
        /// The client id.
        client_id: String,
    },
    /// HTTP Basic with the form-urlencoded id and secret (RFC 6749 2.3.1).
    Basic {
        /// The client id.
        client_id: String,
        /// The client secret.
        client_secret: Secret,
    },
    /// `client_id` and `client_secret` in the form.
    Post {
        /// The client id.
        client_id: String,
        /// The client secret.
        client_secret: Secret,
    },
    /// A signed JWT assertion (RFC 7523 section 2.2).
    PrivateKeyJwt {
        /// The client id, also the assertion's `iss` and `sub`.
        client_id: String,
        /// PKCS#8 PEM private key.
        private_key_pem: Secret,
        /// `ES256`, `ES384`, `RS256`, ...
        algorithm: String,
        /// The assertion's `aud`: the authorization server's issuer.
        audience: String,
    },
}

impl ClientAuth {
    /// Picks the method for `client_id`/`client_secret` from what the server
    /// advertises (a stored or registered method wins when given).
    pub fn choose(
        client_id: &str,
        client_secret: Option<&Secret>,
        preferred: Option<&str>,
        supports: impl Fn(&str) -> bool,
    ) -> Self {
        let client_id = client_id.to_owned();
        let Some(secret) = client_secret.cloned() else {
            return Self::None { client_id };
        };
        let method = match preferred {
            Some(m @ ("client_secret_basic" | "client_secret_post" | "none")) => m,
            _ if supports("client_secret_basic") => "client_secret_basic",
            _ if supports("client_secret_post") => "client_secret_post",
            _ if supports("none") => "none",
            _ => "client_secret_basic",
        };
        match method {
            "client_secret_post" => Self::Post {
                client_id,
                client_secret: secret,
            },
            "none" => Self::None { client_id },
            _ => Self::Basic {
                client_id,
                client_secret: secret,
            },
        }
    }
}

/// The name RFC 8414 uses for a method.
pub(crate) fn method_name(auth: &ClientAuth) -> &'static str {
    match auth {
        ClientAuth::None { .. } | ClientAuth::Anonymous => "none",
        ClientAuth::Basic { .. } => "client_secret_basic",
        ClientAuth::Post { .. } => "client_secret_post",
        ClientAuth::PrivateKeyJwt { .. } => "private_key_jwt",
    }
}

/// A successful token response.
#[derive(Debug, Clone, Deserialize)]
pub struct TokenResponse {
    /// The issued token.
    pub access_token: Secret,
    /// Usually `Bearer`; `N_A` for a token-exchange ID-JAG.
    #[serde(default)]
    pub token_type: Option<String>,
    /// Lifetime in seconds (some servers send it as a string).
    #[serde(default, deserialize_with = "lenient_seconds")]
    pub expires_in: Option<u64>,
    /// A refresh token, possibly rotated.
    #[serde(default)]
    pub refresh_token: Option<Secret>,
    /// The granted scope when it differs from the requested one.
    #[serde(default)]
    pub scope: Option<String>,
}

impl TokenResponse {
    /// Whether the token is DPoP-bound (`token_type` `DPoP`, RFC 9449
    /// section 5): it is then presented as `Authorization: DPoP` with a
    /// proof, never as a bearer token.
    pub fn is_dpop(&self) -> bool {
        self.token_type
            .as_deref()
            .is_some_and(|t| t.eq_ignore_ascii_case("dpop"))
    }

    /// The token set to store; keeps `previous_refresh` when the server did
    /// not rotate it, and `requested_scope` when it did not echo a scope.
    pub fn into_token_set(
        self,
        previous_refresh: Option<Secret>,
        requested_scope: Option<String>,
    ) -> TokenSet {
        TokenSet {
            access_token: self.access_token,
            refresh_token: self.refresh_token.or(previous_refresh),
            expires_at: self.expires_in.map(|s| now_secs().saturating_add(s)),
            scope: self.scope.or(requested_scope),
            lifetime: self.expires_in,
        }
    }
}

/// A number of seconds as a JSON number (integer or not) or a numeric
/// string; anything else counts as absent rather than failing the login.
fn lenient_seconds<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let value = Option::<serde_json::Value>::deserialize(d)?;
    Ok(match value {
        Some(serde_json::Value::Number(n)) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)),
        Some(serde_json::Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    })
}

#[derive(Debug, Deserialize)]
struct ErrorBody {
    error: Option<String>,
    error_description: Option<String>,
}

/// An OAuth error answer from a token endpoint (RFC 6749 §5.2): what the
/// server said, which [`request_token`] hands back beside its own
/// [`AuthError`] so a caller can react to `invalid_grant`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenErrorResponse {
    /// HTTP status.
    pub status: u16,
    /// The OAuth `error` code, when the body had one.
    pub error: Option<String>,
    /// The server's description, when the body had one.
    pub description: Option<String>,
}

impl std::fmt::Display for TokenErrorResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "status {}", self.status)?;
        if let Some(error) = &self.error {
            write!(f, ", {error}")?;
        }
        if let Some(description) = &self.description {
            write!(f, ": {description}")?;
        }
        Ok(())
    }
}

/// The result of one token request: a token, or the server's refusal.
pub type TokenResult = Result<Result<TokenResponse, TokenErrorResponse>, AuthError>;

/// Sends a token request with `params` (grant type and grant fields)
/// authenticated by `auth`. Transport failures are the outer error; an OAuth
/// error answer is the inner one, so callers can react to `invalid_grant`.
pub async fn request_token(
    http: &reqwest::Client,
    server: &str,
    token_endpoint: &str,
    auth: &ClientAuth,
    params: Vec<(&'static str, String)>,
) -> TokenResult {
    request_token_with(http, server, token_endpoint, auth, params, None).await
}

/// [`request_token`] with a DPoP proof (RFC 9449 section 5) when `dpop` is
/// given. The server's `DPoP-Nonce` is kept from every answer, and a
/// `use_dpop_nonce` refusal carrying a usable nonce is retried once with it
/// (section 8).
pub(crate) async fn request_token_with(
    http: &reqwest::Client,
    server: &str,
    token_endpoint: &str,
    auth: &ClientAuth,
    params: Vec<(&'static str, String)>,
    dpop: Option<TokenDpop<'_>>,
) -> TokenResult {
    let http_error =
        |message: String| AuthError::http(server.to_owned(), token_endpoint.to_owned(), message);
    let mut retried = false;
    loop {
        let (status, nonce, body) =
            token_attempt(http, server, token_endpoint, auth, params.clone(), dpop).await?;
        let fresh_nonce = match (dpop, nonce) {
            (Some(dpop), Some(nonce)) => dpop.nonce.observe(&nonce),
            _ => false,
        };
        if !status.is_success() {
            let refused = refusal(status.as_u16(), &body);
            if refused.error.as_deref() == Some("use_dpop_nonce") && fresh_nonce && !retried {
                tracing::debug!(server = %server, "token endpoint asked for a DPoP nonce; retrying");
                retried = true;
                continue;
            }
            return Ok(Err(refused));
        }
        return serde_json::from_slice::<TokenResponse>(&body)
            .map(Ok)
            .map_err(|e| {
                http_error(format!("token response is not valid json: {e}")).with_source(e)
            });
    }
}

/// One token request: the status, the `DPoP-Nonce` header and the body.
async fn token_attempt(
    http: &reqwest::Client,
    server: &str,
    token_endpoint: &str,
    auth: &ClientAuth,
    params: Vec<(&'static str, String)>,
    dpop: Option<TokenDpop<'_>>,
) -> Result<(reqwest::StatusCode, Option<String>, Vec<u8>), AuthError> {
    let http_error =
        |message: String| AuthError::http(server.to_owned(), token_endpoint.to_owned(), message);
    let mut request = authenticated_form(http, server, token_endpoint, auth, params)?;
    if let Some(dpop) = dpop {
        let proof = dpop.key.proof(
            server,
            "POST",
            token_endpoint,
            None,
            dpop.nonce.get().as_deref(),
        )?;
        let mut value = reqwest::header::HeaderValue::from_str(&proof).map_err(|_| {
            AuthError::failed(server.to_owned(), "a DPoP proof is not a header value")
        })?;
        value.set_sensitive(true);
        request = request.header("DPoP", value);
    }
    let response = request.send().await.map_err(|e| {
        let e = e.without_url();
        http_error(e.to_string()).with_source(e)
    })?;
    let status = response.status();
    let nonce = response
        .headers()
        .get("DPoP-Nonce")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = crate::body::read_capped(response)
        .await
        .map_err(|e| http_error(e.to_string()).with_source(e))?;
    Ok((status, nonce, body))
}

/// Posts `params` to an endpoint of the authorization server other than
/// the token endpoint (revocation) with the same client authentication;
/// the inner error is the server's refusal.
pub(crate) async fn post_form(
    http: &reqwest::Client,
    server: &str,
    endpoint: &str,
    auth: &ClientAuth,
    params: Vec<(&'static str, String)>,
) -> Result<Result<(), TokenErrorResponse>, AuthError> {
    let request = authenticated_form(http, server, endpoint, auth, params)?;
    let response = request.send().await.map_err(|e| {
        let e = e.without_url();
        AuthError::http(server.to_owned(), endpoint.to_owned(), e.to_string()).with_source(e)
    })?;
    let status = response.status();
    if status.is_success() {
        return Ok(Ok(()));
    }
    let body = crate::body::read_capped(response).await.unwrap_or_default();
    Ok(Err(refusal(status.as_u16(), &body)))
}

/// A token endpoint's (or revocation endpoint's) error answer.
fn refusal(status: u16, body: &[u8]) -> TokenErrorResponse {
    let parsed: Option<ErrorBody> = serde_json::from_slice(body).ok();
    TokenErrorResponse {
        status,
        error: parsed.as_ref().and_then(|b| b.error.clone()),
        description: parsed.and_then(|b| b.error_description),
    }
}

/// A form post to `endpoint` carrying `params` and the client's
/// authentication (a header, form fields or a signed assertion).
fn authenticated_form(
    http: &reqwest::Client,
    server: &str,
    endpoint: &str,
    auth: &ClientAuth,
    mut params: Vec<(&'static str, String)>,
) -> Result<reqwest::RequestBuilder, AuthError> {
    let mut request = http
        .post(endpoint)
        .header(reqwest::header::ACCEPT, "application/json");
    match auth {
        ClientAuth::Anonymous => {}
        ClientAuth::None { client_id } => params.push(("client_id", client_id.clone())),
        ClientAuth::Basic {
            client_id,
            client_secret,
        } => {
            let pair = format!(
                "{}:{}",
                form_encode(client_id),
                form_encode(client_secret.expose())
            );
            request = request.header(
                reqwest::header::AUTHORIZATION,
                format!("Basic {}", STANDARD.encode(pair)),
            );
            // RFC 6749 3.2.1 lets a client name itself in the body too, and
            // some servers (the Python MCP SDK) look for it only there.
            params.push(("client_id", client_id.clone()));
        }
        ClientAuth::Post {
            client_id,
            client_secret,
        } => {
            params.push(("client_id", client_id.clone()));
            params.push(("client_secret", client_secret.expose().to_owned()));
        }
        ClientAuth::PrivateKeyJwt {
            client_id,
            private_key_pem,
            algorithm,
            audience,
        } => {
            let assertion =
                client_assertion(server, client_id, private_key_pem, algorithm, audience)?;
            params.push(("client_id", client_id.clone()));
            params.push((
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".into(),
            ));
            params.push(("client_assertion", assertion));
        }
    }
    Ok(request.form(&params))
}

/// Form-urlencodes a client id or secret for HTTP Basic (RFC 6749 2.3.1).
fn form_encode(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

#[derive(Debug, serde::Serialize)]
struct AssertionClaims<'a> {
    iss: &'a str,
    sub: &'a str,
    aud: &'a str,
    iat: u64,
    exp: u64,
    jti: String,
}

/// A short-lived signed client assertion (RFC 7523): `iss` = `sub` =
/// client id, `aud` = the authorization server, five minutes of validity.
pub(crate) fn client_assertion(
    server: &str,
    client_id: &str,
    private_key_pem: &Secret,
    algorithm: &str,
    audience: &str,
) -> Result<String, AuthError> {
    use jsonwebtoken::Header;
    let bad = |message: String| AuthError::config(server.to_owned(), "private key", message);
    let (alg, key) = signing_key(private_key_pem.expose(), algorithm).map_err(bad)?;
    let now = now_secs();
    let claims = AssertionClaims {
        iss: client_id,
        sub: client_id,
        aud: audience,
        iat: now,
        exp: now + 300,
        jti: crate::pkce::random_urlsafe(16),
    };
    jsonwebtoken::encode(&Header::new(alg), &claims, &key)
        .map_err(|e| bad(format!("cannot sign the client assertion: {e}")).with_source(e))
}

/// The signing key `pem` holds for the asymmetric `algorithm`; the
/// message of a failure never includes key material.
pub(crate) fn signing_key(
    pem: &str,
    algorithm: &str,
) -> Result<(jsonwebtoken::Algorithm, jsonwebtoken::EncodingKey), String> {
    use jsonwebtoken::{Algorithm, EncodingKey};
    let alg: Algorithm = algorithm
        .parse()
        .map_err(|_| format!("unsupported signing algorithm {algorithm}"))?;
    let pem = pem.as_bytes();
    let key = match alg {
        Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem),
        Algorithm::RS256
        | Algorithm::RS384
        | Algorithm::RS512
        | Algorithm::PS256
        | Algorithm::PS384
        | Algorithm::PS512 => EncodingKey::from_rsa_pem(pem),
        Algorithm::EdDSA => EncodingKey::from_ed_pem(pem),
        _ => return Err(format!("{algorithm} is not an asymmetric algorithm")),
    }
    .map_err(|e| format!("cannot read the {algorithm} key: {e}"))?;
    Ok((alg, key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_choice_follows_the_server() {
        let secret = Secret::new("s");
        let only = |m: &'static str| move |x: &str| x == m;
        let pick = |s: Option<&Secret>, pref, sup: &dyn Fn(&str) -> bool| {
            method_name(&ClientAuth::choose("c", s, pref, sup))
        };
        assert_eq!(
            pick(Some(&secret), None, &only("client_secret_post")),
            "client_secret_post"
        );
        assert_eq!(
            pick(Some(&secret), None, &only("client_secret_basic")),
            "client_secret_basic"
        );
        assert_eq!(pick(Some(&secret), None, &only("none")), "none");
        assert_eq!(pick(None, None, &only("client_secret_basic")), "none");
        assert_eq!(
            pick(
                Some(&secret),
                Some("client_secret_post"),
                &only("client_secret_basic")
            ),
            "client_secret_post"
        );
    }

    #[test]
    fn expires_in_is_read_leniently() {
        let parse = |raw: &str| {
            serde_json::from_str::<TokenResponse>(&format!(r#"{{"access_token":"a"{raw}}}"#))
                .unwrap()
                .expires_in
        };
        assert_eq!(parse(r#","expires_in":3600"#), Some(3600));
        assert_eq!(parse(r#","expires_in":"3600""#), Some(3600));
        assert_eq!(parse(r#","expires_in":59.9"#), Some(59));
        assert_eq!(parse(r#","expires_in":null"#), None);
        assert_eq!(parse(r#","expires_in":"soon""#), None);
        assert_eq!(parse(""), None);
    }

    #[test]
    fn es256_assertion_has_rfc7523_claims() {
        // A throwaway P-256 key generated for this test.
        let pem = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgY3fav5rHIyvceAtp\neEf6jz0IeKFE1GosIfYm/QrROnShRANCAASJEpQwpi927PzriH0YIom8gLnSLG/8\n8r3veVXPWp+uY6a3UIhkKSk6W1jK3JiMdKhtYFbdIx4crJ0in0MQGZZ7\n-----END PRIVATE KEY-----\n";
        let jwt = client_assertion("srv", "cid", &Secret::new(pem), "ES256", "http://as").unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let decode = |p: &str| -> serde_json::Value {
            serde_json::from_slice(
                &base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .decode(p)
                    .unwrap(),
            )
            .unwrap()
        };
        assert_eq!(decode(parts[0])["alg"], "ES256");
        let claims = decode(parts[1]);
        assert_eq!(claims["iss"], "cid");
        assert_eq!(claims["sub"], "cid");
        assert_eq!(claims["aud"], "http://as");
        assert_eq!(
            claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(),
            300
        );
    }

    #[test]
    fn bad_key_error_has_no_key_material() {
        let err = client_assertion(
            "srv",
            "cid",
            &Secret::new("-----BEGIN PRIVATE KEY-----\nSECRETSTUFF\n-----END PRIVATE KEY-----\n"),
            "ES256",
            "a",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("oauth settings for srv: private key: cannot read the ES256 key"),
            "{err}"
        );
        assert!(!err.contains("SECRETSTUFF"), "{err}");
    }
}
