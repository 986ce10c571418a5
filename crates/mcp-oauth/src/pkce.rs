//! PKCE S256 (RFC 7636) and the random values of an authorization request.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore as _;
use sha2::{Digest as _, Sha256};

use crate::Secret;

/// A PKCE verifier and its S256 challenge.
#[derive(Debug, Clone)]
pub struct Pkce {
    /// Sent in the token request only.
    pub verifier: Secret,
    /// Sent in the authorization request.
    pub challenge: String,
}

impl Pkce {
    /// A fresh verifier of 32 random bytes (43 base64url characters).
    pub fn generate() -> Self {
        Self::from_verifier(random_urlsafe(32))
    }

    /// The pair for a given verifier.
    pub fn from_verifier(verifier: String) -> Self {
        let challenge = s256_challenge(&verifier);
        Self {
            verifier: Secret::new(verifier),
            challenge,
        }
    }
}

/// `base64url(SHA-256(verifier))` without padding.
pub fn s256_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// `bytes` random bytes as unpadded base64url, for `state` and verifiers.
pub(crate) fn random_urlsafe(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::thread_rng().fill_bytes(&mut buf);
    URL_SAFE_NO_PAD.encode(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b_vector() {
        let pkce = Pkce::from_verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk".into());
        assert_eq!(
            pkce.challenge,
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn generated_verifier_has_rfc_length_and_alphabet() {
        let pkce = Pkce::generate();
        let v = pkce.verifier.expose();
        assert_eq!(v.len(), 43);
        assert!(
            v.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        assert_eq!(pkce.challenge, s256_challenge(v));
        assert_ne!(Pkce::generate().verifier, pkce.verifier);
    }
}
