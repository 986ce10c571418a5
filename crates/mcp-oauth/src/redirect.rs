//! The redirect policy of every HTTP client that sends credentials.
//!
//! A server answers with a redirect, and the client would resend the request
//! there: with `Authorization`, every configured or helper header (API keys
//! in custom headers are common) and, for 307/308, the body (a token
//! request's client secret or PKCE verifier). The HTTP library drops only a
//! few well-known headers when the host changes, so a hostile or
//! compromised server could collect the rest. [`same_origin_only`] follows a
//! redirect only within the request's origin (scheme, host and port) and
//! fails the request otherwise, naming both origins.

/// Most redirects followed within one origin.
pub const MAX_REDIRECTS: usize = 10;

/// Follows redirects within the request's origin (at most
/// [`MAX_REDIRECTS`]); a redirect to any other origin fails the request.
pub fn same_origin_only() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let Some(first) = attempt.previous().first() else {
            return attempt.follow();
        };
        let from = first.origin();
        let to = attempt.url().origin();
        if from != to {
            let message = format!(
                "refused a redirect from {} to another origin ({})",
                from.ascii_serialization(),
                to.ascii_serialization()
            );
            attempt.error(message)
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}
