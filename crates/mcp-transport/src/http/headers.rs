//! Per-request headers of one HTTP connection: static headers,
//! `headersHelper` output and credentials from an [`AuthProvider`] (a
//! token, and a DPoP proof for this one request), with the 401/403
//! challenge retry. Values are secrets: they are marked
//! sensitive and never appear in a log or an error.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_oauth::{AuthProvider, Challenge, ChallengeOutcome, RequestTarget};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio::sync::Mutex;

use super::{HttpOptions, io_error, reqwest_error};
use crate::error::TransportError;
use crate::headers_helper::run_headers_helper;

/// Headers added to every request of one connection.
#[derive(Debug)]
pub(crate) struct RequestHeaders {
    server: String,
    url: String,
    fixed: HeaderMap,
    helper: Option<String>,
    helper_headers: Mutex<HeaderMap>,
    auth: Option<Arc<dyn AuthProvider>>,
}

impl RequestHeaders {
    /// Validates static headers and runs the helper once.
    pub(crate) async fn new(options: &HttpOptions) -> Result<Self, TransportError> {
        let fixed = to_header_map(&options.server, "headers", &options.headers)?;
        let headers = RequestHeaders {
            server: options.server.clone(),
            url: options.url.clone(),
            fixed,
            helper: options.headers_helper.clone(),
            helper_headers: Mutex::new(HeaderMap::new()),
            auth: options.auth.clone(),
        };
        headers.refresh_helper().await?;
        Ok(headers)
    }

    /// Re-runs the helper (after a 401 its headers may be stale).
    async fn refresh_helper(&self) -> Result<bool, TransportError> {
        let Some(command) = &self.helper else {
            return Ok(false);
        };
        let map = run_headers_helper(&self.server, &self.url, command).await?;
        *self.helper_headers.lock().await =
            to_header_map(&self.server, "headersHelper output", &map)?;
        Ok(true)
    }

    /// Builds the request and adds static, helper and auth headers (the
    /// credentials are asked for with the request's real method and url, so
    /// a DPoP proof is bound to them); also returns the fingerprint of the
    /// `Authorization` value sent, for a challenge.
    async fn apply(
        &self,
        builder: reqwest::RequestBuilder,
    ) -> Result<(reqwest::Client, reqwest::Request, Option<String>), TransportError> {
        let (client, request) = builder.build_split();
        let mut request = request.map_err(|e| reqwest_error(&self.server, e))?;
        let headers = request.headers_mut();
        if !self.fixed.is_empty() {
            headers.extend(self.fixed.clone());
        }
        // Only a helper fills these.
        if self.helper.is_some() {
            headers.extend(self.helper_headers.lock().await.clone());
        }
        let mut sent = None;
        if let Some(auth) = &self.auth {
            let mut url = request.url().clone();
            url.set_query(None);
            url.set_fragment(None);
            let target = RequestTarget {
                method: request.method().as_str(),
                url: url.as_str(),
            };
            let credentials = auth
                .credentials(&target)
                .await
                .map_err(|e| io_error(&self.server, e.to_string()))?;
            if let Some(credentials) = credentials {
                let headers = request.headers_mut();
                headers.insert(
                    reqwest::header::AUTHORIZATION,
                    sensitive(&self.server, "Authorization", &credentials.authorization)?,
                );
                match &credentials.dpop {
                    Some(proof) => {
                        headers.insert(DPOP, sensitive(&self.server, "DPoP", proof)?);
                    }
                    None => {
                        headers.remove(DPOP);
                    }
                }
                sent = Some(mcp_oauth::authorization_fingerprint(
                    &credentials.authorization,
                ));
            }
        }
        Ok((client, request, sent))
    }

    /// Sends the request `build` makes, with every header applied. On a 401
    /// (or a 403 `insufficient_scope`) asks the auth provider and, if it has
    /// new credentials (or the helper could be re-run), sends once more.
    /// Each kind of challenge (a 401, a 403 step-up, a DPoP nonce request)
    /// is answered at most once per request, so a 401 followed by a 403
    /// step-up (new token, then more scope) still succeeds, and a request is
    /// sent at most four times. Every `DPoP-Nonce` a response carries goes
    /// to the auth provider.
    pub(crate) async fn send(
        &self,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, TransportError> {
        let mut answered_401 = false;
        let mut answered_403 = false;
        let mut answered_nonce = false;
        loop {
            let (response, sent_authorization) = self.exchange(&build).await?;
            let status = response.status().as_u16();
            let www_authenticate = response
                .headers()
                .get(reqwest::header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let dpop_nonce = response
                .headers()
                .get(DPOP_NONCE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            if let (Some(auth), Some(nonce)) = (&self.auth, &dpop_nonce) {
                auth.observe_dpop_nonce(nonce);
            }
            let answered = match status {
                401 if dpop_nonce.is_some()
                    && www_authenticate
                        .as_deref()
                        .is_some_and(|w| w.contains("use_dpop_nonce")) =>
                {
                    &mut answered_nonce
                }
                401 => &mut answered_401,
                403 if www_authenticate
                    .as_deref()
                    .is_some_and(|w| w.contains("insufficient_scope")) =>
                {
                    &mut answered_403
                }
                _ => return Ok(response),
            };
            if *answered {
                return Ok(response);
            }
            *answered = true;
            let mut retry = false;
            if let Some(auth) = &self.auth {
                let mut challenge = Challenge::new(status, self.url.clone());
                challenge.www_authenticate = www_authenticate;
                challenge.refused_authorization = sent_authorization;
                challenge.dpop_nonce = dpop_nonce;
                let outcome = auth
                    .on_challenge(&challenge)
                    .await
                    .map_err(|e| io_error(&self.server, e.to_string()))?;
                retry = outcome == ChallengeOutcome::Retry;
            } else if self.helper.is_some() {
                retry = self.refresh_helper().await?;
            }
            if !retry {
                return Ok(response);
            }
        }
    }

    /// One request with every header applied; also the fingerprint of the
    /// `Authorization` sent.
    async fn exchange(
        &self,
        build: &impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<(reqwest::Response, Option<String>), TransportError> {
        let (client, request, sent) = self.apply(build()).await?;
        let response = client
            .execute(request)
            .await
            .map_err(|e| reqwest_error(&self.server, e))?;
        Ok((response, sent))
    }
}

/// The DPoP proof header (RFC 9449 section 4.1).
const DPOP: HeaderName = HeaderName::from_static("dpop");
/// A server's nonce for the next proof (RFC 9449 section 9).
const DPOP_NONCE: HeaderName = HeaderName::from_static("dpop-nonce");

/// An auth header value, marked sensitive so it never reaches a log.
fn sensitive(server: &str, name: &str, value: &str) -> Result<HeaderValue, TransportError> {
    let mut v = HeaderValue::from_str(value).map_err(|_| {
        io_error(
            server,
            format!("the auth provider returned an invalid {name} value"),
        )
    })?;
    v.set_sensitive(true);
    Ok(v)
}

/// Checks and converts headers (`what` names where they come from in
/// errors); every value is marked sensitive, so it never reaches a log.
pub(crate) fn to_header_map(
    server: &str,
    what: &str,
    map: &BTreeMap<String, String>,
) -> Result<HeaderMap, TransportError> {
    let mut headers = HeaderMap::new();
    for (name, value) in map {
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            io_error(
                server,
                format!("{what}: `{name}` is not a valid header name"),
            )
        })?;
        let mut value = HeaderValue::from_str(value).map_err(|_| {
            io_error(
                server,
                format!("{what}: the value of `{name}` is not a valid header value"),
            )
        })?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    Ok(headers)
}
