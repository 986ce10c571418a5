//! Reading an HTTP answer: a status the transport did not expect (with a
//! bounded excerpt of its body), the statuses that say a gateway could not
//! reach the server, the media type, and a body read whole under the
//! message cap.

use std::time::Duration;

use super::{io_error, reqwest_error};
use crate::error::{TransportError, TransportErrorKind};

/// How much of an unexpected answer's body is read for its excerpt, and
/// for how long: a refusal must not hold the caller on an endless or
/// trickling body.
const EXCERPT_BYTES: usize = 1024;
const EXCERPT_WAIT: Duration = Duration::from_secs(1);

/// 502 and 504: a gateway (a proxy, a load balancer) could not reach the
/// server behind it.
pub(crate) fn is_gateway_failure(status: reqwest::StatusCode) -> bool {
    matches!(
        status,
        reqwest::StatusCode::BAD_GATEWAY | reqwest::StatusCode::GATEWAY_TIMEOUT
    )
}

/// An HTTP status the transport did not expect, with a short body excerpt.
pub(crate) async fn unexpected_status(
    server: &str,
    what: &str,
    response: reqwest::Response,
) -> TransportError {
    let status = response.status();
    let body = read_refusal(response, EXCERPT_BYTES).await;
    let excerpt = excerpt(&body);
    if excerpt.is_empty() {
        io_error(server, format!("{what}: HTTP {status}"))
    } else {
        io_error(server, format!("{what}: HTTP {status}: {excerpt}"))
    }
}

/// The start of a refusal's body, at most `max` bytes (a little more when
/// the last chunk runs past it), read for at most [`EXCERPT_WAIT`].
pub(crate) async fn read_refusal(mut response: reqwest::Response, max: usize) -> Vec<u8> {
    let mut body = Vec::new();
    let read = async {
        while body.len() < max {
            match response.chunk().await {
                Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                Ok(None) | Err(_) => break,
            }
        }
    };
    let _ = tokio::time::timeout(EXCERPT_WAIT, read).await;
    body
}

/// The first 200 characters of a body, trimmed, for an error message.
pub(crate) fn excerpt(body: &[u8]) -> String {
    let body = String::from_utf8_lossy(body);
    let excerpt: String = body.chars().take(200).collect();
    excerpt.trim().to_owned()
}

/// The `Content-Type` media type, lowercase, without parameters.
pub(crate) fn media_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default()
}

/// A whole response body, refused past `max` bytes without buffering more.
pub(crate) async fn read_body_capped(
    server: &str,
    mut response: reqwest::Response,
    max: usize,
) -> Result<Vec<u8>, TransportError> {
    let too_large = || TransportError::new(server, TransportErrorKind::MessageTooLarge { max });
    if response
        .content_length()
        .is_some_and(|length| length > max as u64)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| reqwest_error(server, e))?
    {
        if body.len() + chunk.len() > max {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
