//! Reading an endpoint's answer with a size cap: metadata, registration,
//! token and revocation answers are small, and a hostile endpoint must not
//! be able to make us buffer an endless body.

/// Largest answer read from any OAuth endpoint.
pub(crate) const MAX_BODY: usize = 1024 * 1024;

/// Why a capped read failed.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// The connection failed while reading.
    Read(reqwest::Error),
    /// The answer is larger than [`MAX_BODY`].
    TooLarge,
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::Read(e) => write!(f, "{e}"),
            BodyError::TooLarge => write!(f, "the answer is larger than {MAX_BODY} bytes"),
        }
    }
}

impl std::error::Error for BodyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BodyError::Read(e) => Some(e),
            BodyError::TooLarge => None,
        }
    }
}

/// The whole body of `response`, or an error once it passes [`MAX_BODY`].
pub(crate) async fn read_capped(mut response: reqwest::Response) -> Result<Vec<u8>, BodyError> {
    if response
        .content_length()
        .is_some_and(|n| n > MAX_BODY as u64)
    {
        return Err(BodyError::TooLarge);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| BodyError::Read(e.without_url()))?
    {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(BodyError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
