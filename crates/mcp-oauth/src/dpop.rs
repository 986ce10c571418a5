//! DPoP (RFC 9449): the per-server proof key, its public JWK and RFC 7638
//! thumbprint, the proof JWTs sent with token and resource requests, and the
//! server nonces a proof must echo.
//!
//! The key is ES256 (P-256), generated once per server and kept with the
//! credentials as PKCS#8, because tokens bound to it are useless with any
//! other key: a refresh, and a later process, must sign with the same one.
//! A proof is built by hand (the JWS compact form of RFC 7515) rather than
//! through `jsonwebtoken`, which can neither generate a key nor export its
//! public half. Server nonces are untrusted input that ends up in our own
//! headers, so only short printable ones are ever kept.

use std::sync::{Arc, Mutex};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};
use serde_json::json;
use sha2::{Digest as _, Sha256};

use crate::clock::now_secs;
use crate::{AuthError, Secret};

/// The one proof algorithm we sign with.
pub(crate) const ALGORITHM: &str = "ES256";

/// The longest server nonce we keep; anything longer is ignored rather than
/// echoed into a header.
pub(crate) const MAX_NONCE_LEN: usize = 1024;

/// When to use DPoP for a server's tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DpopMode {
    /// When the authorization server advertises ES256 in
    /// `dpop_signing_alg_values_supported`, or the resource challenges with
    /// the `DPoP` scheme.
    #[default]
    Auto,
    /// Always; an authorization server that does not list ES256 is an error.
    Always,
    /// Never: tokens are bearer tokens.
    Never,
}

/// A DPoP proof key (RFC 9449): an ES256 (P-256) key pair. `Debug` shows
/// its thumbprint only.
///
/// A server's key is generated once and kept with its credentials as
/// PKCS#8, because tokens bound to it are useless with any other key: a
/// refresh, and a later process, must sign with the same one.
#[derive(Clone)]
pub struct DpopKey {
    pkcs8: Secret,
    pair: Arc<EcdsaKeyPair>,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopKey")
            .field("thumbprint", &self.thumbprint())
            .finish_non_exhaustive()
    }
}

impl DpopKey {
    /// A fresh key for `server`.
    pub fn generate(server: &str) -> Result<Self, AuthError> {
        let rng = SystemRandom::new();
        let document = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| AuthError::failed(server.to_owned(), "cannot generate a DPoP key"))?;
        Self::from_der(server, document.as_ref())
    }

    /// The key stored as [`DpopKey::pkcs8`].
    pub fn from_pkcs8(server: &str, stored: &Secret) -> Result<Self, AuthError> {
        let der = URL_SAFE_NO_PAD.decode(stored.expose()).map_err(|_| {
            AuthError::failed(server.to_owned(), "the stored DPoP key is not base64url")
        })?;
        Self::from_der(server, &der)
    }

    fn from_der(server: &str, der: &[u8]) -> Result<Self, AuthError> {
        let rng = SystemRandom::new();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &rng)
            // ring's rejection names the problem only, never the key.
            .map_err(|e| {
                AuthError::failed(
                    server.to_owned(),
                    format!("the DPoP key is not a P-256 PKCS#8 key: {e}"),
                )
                .with_source(e)
            })?;
        Ok(Self {
            pkcs8: Secret::new(URL_SAFE_NO_PAD.encode(der)),
            pair: Arc::new(pair),
        })
    }

    /// The private key as base64url PKCS#8 DER, for the credential store.
    pub fn pkcs8(&self) -> &Secret {
        &self.pkcs8
    }

    /// The uncompressed point's coordinates, base64url.
    fn coordinates(&self) -> (String, String) {
        // Uncompressed SEC1: 0x04, then 32 bytes of x and 32 of y.
        let point = self.pair.public_key().as_ref();
        let x = point.get(1..33).unwrap_or_default();
        let y = point.get(33..65).unwrap_or_default();
        (URL_SAFE_NO_PAD.encode(x), URL_SAFE_NO_PAD.encode(y))
    }

    /// The public JWK (RFC 7517): `kty`, `crv`, `x`, `y`; never `d`.
    pub fn public_jwk(&self) -> serde_json::Value {
        let (x, y) = self.coordinates();
        json!({"kty": "EC", "crv": "P-256", "x": x, "y": y})
    }

    /// The RFC 7638 thumbprint: base64url SHA-256 of the required members
    /// in lexicographic order without whitespace (the token's `cnf.jkt`).
    pub fn thumbprint(&self) -> String {
        let (x, y) = self.coordinates();
        let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
        URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
    }

    /// A fresh proof for one request: `method` and `url` (its query and
    /// fragment are dropped, RFC 9449 section 4.2), `ath` when presenting
    /// `access_token` to a resource, and the server's `nonce` if it gave one.
    pub fn proof(
        &self,
        server: &str,
        method: &str,
        url: &str,
        access_token: Option<&Secret>,
        nonce: Option<&str>,
    ) -> Result<String, AuthError> {
        let header = json!({"typ": "dpop+jwt", "alg": ALGORITHM, "jwk": self.public_jwk()});
        let mut claims = json!({
            "jti": crate::pkce::random_urlsafe(16),
            "htm": method,
            "htu": htu(url),
            "iat": now_secs(),
        });
        if let Some(token) = access_token {
            claims["ath"] = URL_SAFE_NO_PAD
                .encode(Sha256::digest(token.expose().as_bytes()))
                .into();
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self
            .pair
            .sign(&SystemRandom::new(), signing_input.as_bytes())
            .map_err(|_| AuthError::failed(server.to_owned(), "cannot sign a DPoP proof"))?;
        Ok(format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(signature.as_ref())
        ))
    }
}

/// The `htu` of a request to `url`: the url without query and fragment.
pub(crate) fn htu(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.into()
        }
        // Not a url: cut at the first `?` or `#` all the same.
        Err(_) => url.split(['?', '#']).next().unwrap_or_default().to_owned(),
    }
}

/// Whether a server's `DPoP-Nonce` is fit to keep and echo: 1 to
/// [`MAX_NONCE_LEN`] characters of RFC 9449's `NQCHAR` (visible ASCII
/// other than `"` and `\`).
pub(crate) fn acceptable_nonce(nonce: &str) -> bool {
    !nonce.is_empty()
        && nonce.len() <= MAX_NONCE_LEN
        && nonce
            .bytes()
            .all(|b| matches!(b, 0x21 | 0x23..=0x5b | 0x5d..=0x7e))
}

/// The latest nonce one server (an authorization server, or a resource)
/// gave. Shared by concurrent requests; a bad nonce never replaces a good
/// one.
#[derive(Debug, Default)]
pub(crate) struct DpopNonce(Mutex<Option<String>>);

impl DpopNonce {
    /// The nonce to put in the next proof, if any.
    pub(crate) fn get(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Keeps `nonce` if it is [`acceptable_nonce`]; returns whether it was.
    pub(crate) fn observe(&self, nonce: &str) -> bool {
        if !acceptable_nonce(nonce) {
            tracing::debug!(len = nonce.len(), "ignoring an unusable DPoP-Nonce");
            return false;
        }
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(nonce.to_owned());
        true
    }
}

/// DPoP for one token request: the key to prove possession of and the
/// authorization server's nonce, updated from the response.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TokenDpop<'a> {
    /// The proof key.
    pub key: &'a DpopKey,
    /// The authorization server's latest nonce.
    pub nonce: &'a DpopNonce,
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{ECDSA_P256_SHA256_FIXED, UnparsedPublicKey};

    fn decode(part: &str) -> serde_json::Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    }

    /// Checks the signature with the public key taken from the proof's own
    /// `jwk`, as a server does; returns header and claims.
    fn verify(proof: &str) -> (serde_json::Value, serde_json::Value) {
        let parts: Vec<&str> = proof.split('.').collect();
        assert_eq!(parts.len(), 3, "{proof}");
        let header = decode(parts[0]);
        let jwk = &header["jwk"];
        let mut point = vec![4u8];
        point.extend(URL_SAFE_NO_PAD.decode(jwk["x"].as_str().unwrap()).unwrap());
        point.extend(URL_SAFE_NO_PAD.decode(jwk["y"].as_str().unwrap()).unwrap());
        let signature = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &point)
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
            .expect("the proof verifies with its own jwk");
        (header, decode(parts[1]))
    }

    #[test]
    fn a_resource_proof_has_every_claim_and_verifies() {
        let key = DpopKey::generate("srv").unwrap();
        let token = Secret::new("access-token-1");
        let proof = key
            .proof(
                "srv",
                "POST",
                "https://mcp.example.com/mcp?session=1#frag",
                Some(&token),
                Some("n-1"),
            )
            .unwrap();
        let (header, claims) = verify(&proof);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert_eq!(header["jwk"], key.public_jwk());
        assert!(header["jwk"].get("d").is_none());
        assert_eq!(header["jwk"]["kty"], "EC");
        assert_eq!(header["jwk"]["crv"], "P-256");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://mcp.example.com/mcp");
        assert!(claims["jti"].as_str().unwrap().len() >= 16);
        let iat = claims["iat"].as_u64().unwrap();
        assert!(iat.abs_diff(now_secs()) < 5);
        assert_eq!(
            claims["ath"],
            URL_SAFE_NO_PAD.encode(Sha256::digest(b"access-token-1"))
        );
        assert_eq!(claims["nonce"], "n-1");
    }

    #[test]
    fn a_token_request_proof_has_no_ath_and_no_nonce_unless_given() {
        let key = DpopKey::generate("srv").unwrap();
        let (_, claims) = verify(
            &key.proof("srv", "POST", "http://127.0.0.1:1/token", None, None)
                .unwrap(),
        );
        assert!(claims.get("ath").is_none());
        assert!(claims.get("nonce").is_none());
        assert_eq!(claims["htu"], "http://127.0.0.1:1/token");
    }

    #[test]
    fn every_proof_has_a_fresh_jti() {
        let key = DpopKey::generate("srv").unwrap();
        let jti = || {
            let proof = key.proof("srv", "GET", "http://x/mcp", None, None).unwrap();
            verify(&proof).1["jti"].as_str().unwrap().to_owned()
        };
        assert_ne!(jti(), jti());
    }

    #[test]
    fn the_stored_key_is_the_same_key() {
        let key = DpopKey::generate("srv").unwrap();
        let again = DpopKey::from_pkcs8("srv", key.pkcs8()).unwrap();
        assert_eq!(again.thumbprint(), key.thumbprint());
        assert_eq!(again.public_jwk(), key.public_jwk());
        let other = DpopKey::generate("srv").unwrap();
        assert_ne!(other.thumbprint(), key.thumbprint());
        assert!(!format!("{key:?}").contains(key.pkcs8().expose()));
    }

    #[test]
    fn thumbprint_is_rfc7638_over_the_jwk() {
        let key = DpopKey::generate("srv").unwrap();
        let jwk = key.public_jwk();
        // Members in lexicographic order, no whitespace (RFC 7638 3.3).
        let canonical = format!(
            r#"{{"crv":"{}","kty":"{}","x":"{}","y":"{}"}}"#,
            jwk["crv"].as_str().unwrap(),
            jwk["kty"].as_str().unwrap(),
            jwk["x"].as_str().unwrap(),
            jwk["y"].as_str().unwrap()
        );
        assert_eq!(
            key.thumbprint(),
            URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
        );
        assert_eq!(key.thumbprint().len(), 43);
        assert_eq!(
            URL_SAFE_NO_PAD
                .decode(jwk["x"].as_str().unwrap())
                .unwrap()
                .len(),
            32
        );
        assert_eq!(
            URL_SAFE_NO_PAD
                .decode(jwk["y"].as_str().unwrap())
                .unwrap()
                .len(),
            32
        );
    }

    #[test]
    fn a_broken_stored_key_is_an_error_without_key_material() {
        for stored in ["not base64!", "AAAA"] {
            let err = DpopKey::from_pkcs8("srv", &Secret::new(stored))
                .unwrap_err()
                .to_string();
            assert!(err.starts_with("authorization for srv failed: "), "{err}");
            assert!(!err.contains(stored), "{err}");
        }
    }

    #[test]
    fn htu_drops_query_and_fragment() {
        assert_eq!(htu("http://h:1/mcp?a=b#c"), "http://h:1/mcp");
        assert_eq!(htu("http://h:1/token"), "http://h:1/token");
        assert_eq!(htu("not a url?x"), "not a url");
    }

    #[test]
    fn only_short_visible_nonces_are_kept() {
        let cell = DpopNonce::default();
        assert!(cell.observe("eyJ7S_zG.9-Q~"));
        assert_eq!(cell.get().as_deref(), Some("eyJ7S_zG.9-Q~"));
        for bad in [
            String::new(),
            "a".repeat(MAX_NONCE_LEN + 1),
            "with space".into(),
            "quote\"".into(),
            "back\\slash".into(),
            "tab\t".into(),
            "new\nline".into(),
            "ü".into(),
        ] {
            assert!(!cell.observe(&bad), "{bad:?}");
        }
        // A bad nonce never replaces the good one.
        assert_eq!(cell.get().as_deref(), Some("eyJ7S_zG.9-Q~"));
        assert!(cell.observe(&"n".repeat(MAX_NONCE_LEN)));
    }
}
