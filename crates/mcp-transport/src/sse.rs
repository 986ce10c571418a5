//! Legacy HTTP+SSE (MCP 2024-11-05).
//!
//! The client GETs the SSE url and waits for the `endpoint` event, whose data
//! is the url (often relative, with a session query) to POST messages to.
//! The endpoint must have the SSE url's origin (scheme, host and port): a
//! server must not be able to send our headers and tokens elsewhere. Every
//! answer and server message arrives on the one SSE stream as a `message`
//! event; the POSTs get 202 (any 2xx is accepted). When the stream ends
//! the session is over: legacy servers tie the session to the stream, so
//! there is nothing to resume.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use tokio::sync::oneshot;

use crate::error::TransportError;
use crate::event_stream::SseItem;
use crate::http::{
    HttpOptions, RequestHeaders, build_client, encode, io_error, is_message_event, media_type,
    sse_events, too_large_answers, unexpected_status, within,
};
use crate::inbox::{Delivery, Inbox};
use crate::message::JsonRpcMessage;
use crate::transport::{Transport, TransportInfo};

/// A legacy HTTP+SSE connection to one server.
#[derive(Debug)]
pub struct SseTransport {
    server: String,
    client: reqwest::Client,
    headers: Arc<RequestHeaders>,
    endpoint: reqwest::Url,
    /// Fed by the one task that reads the stream.
    inbox: Inbox,
    /// Bound on one POST (the entry's connect timeout): every POST is
    /// one-way, answered on the stream, and goes out on the session's
    /// driver, which must not wait forever on a stuck server.
    post_timeout: Duration,
}

impl SseTransport {
    /// Opens the SSE stream and waits (up to the connect timeout) for the
    /// `endpoint` event.
    pub async fn connect(options: HttpOptions) -> Result<Self, TransportError> {
        let server = options.server.clone();
        let url = reqwest::Url::parse(&options.url)
            .map_err(|e| io_error(&server, format!("invalid url: {e}")).with_source(e))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(io_error(
                &server,
                format!("url scheme must be http or https, not {}", url.scheme()),
            ));
        }
        let client = build_client(&options)?;
        let headers = Arc::new(RequestHeaders::new(&options).await?);
        let open = async {
            let response = headers
                .send(|| client.get(url.clone()).header(ACCEPT, "text/event-stream"))
                .await?;
            if !response.status().is_success() {
                return Err(unexpected_status(&server, "opening the SSE stream", response).await);
            }
            if media_type(&response) != "text/event-stream" {
                return Err(io_error(
                    &server,
                    format!(
                        "opening the SSE stream: expected text/event-stream, got `{}`",
                        media_type(&response)
                    ),
                ));
            }
            Ok(response)
        };
        let response = tokio::time::timeout(options.connect_timeout, open)
            .await
            .map_err(|_| io_error(&server, "timed out opening the SSE stream"))??;

        // Dropping the inbox on an early return stops the reader.
        let (inbox, delivery) = Inbox::new(&server);
        let (endpoint_tx, endpoint_rx) = oneshot::channel();
        inbox.tasks().spawn(read_stream(
            server.clone(),
            url.clone(),
            response,
            endpoint_tx,
            delivery,
        ));
        let endpoint = match tokio::time::timeout(options.connect_timeout, endpoint_rx).await {
            Ok(Ok(Ok(endpoint))) => endpoint,
            Ok(Ok(Err(e))) => return Err(e),
            Ok(Err(_)) => {
                return Err(io_error(
                    &server,
                    "the SSE stream ended before the endpoint event",
                ));
            }
            Err(_) => {
                return Err(io_error(
                    &server,
                    "timed out waiting for the endpoint event",
                ));
            }
        };
        Ok(SseTransport {
            server,
            client,
            headers,
            endpoint,
            inbox,
            post_timeout: options.connect_timeout,
        })
    }

    /// The url messages are posted to.
    pub fn endpoint(&self) -> &str {
        self.endpoint.as_str()
    }
}

/// Resolves the `endpoint` event's data against the SSE url and insists on
/// the same origin.
fn resolve_endpoint(
    server: &str,
    base: &reqwest::Url,
    data: &str,
) -> Result<reqwest::Url, TransportError> {
    let endpoint = base.join(data.trim()).map_err(|e| {
        io_error(
            server,
            format!("the endpoint event is not a valid url: {e}"),
        )
        .with_source(e)
    })?;
    if endpoint.origin() != base.origin() {
        return Err(io_error(
            server,
            format!(
                "the endpoint event points to another origin ({}), refusing to post there",
                endpoint.origin().ascii_serialization()
            ),
        ));
    }
    Ok(endpoint)
}

async fn read_stream(
    server: String,
    base: reqwest::Url,
    response: reqwest::Response,
    endpoint_tx: oneshot::Sender<Result<reqwest::Url, TransportError>>,
    inbox: Delivery,
) {
    let mut endpoint_tx = Some(endpoint_tx);
    let mut events = Box::pin(sse_events(response));
    while let Some(item) = events.next().await {
        let event = match item {
            Ok(SseItem::Event(event)) => event,
            Ok(SseItem::TooLarge { max, answers }) => {
                // The stream goes on past the skipped event; the requests it
                // answered fail now instead of at their timeout.
                tracing::warn!(server = %server, max, "skipping an SSE event past the size cap");
                if !too_large_answers(&server, max, answers).all(|answer| inbox.message(answer)) {
                    return;
                }
                continue;
            }
            Err(e) => {
                inbox.lost(io_error(&server, format!("SSE stream broke: {e}")));
                return;
            }
        };
        if event.event == "endpoint" {
            if let Some(sender) = endpoint_tx.take() {
                let _ = sender.send(resolve_endpoint(&server, &base, &event.data));
            }
            continue;
        }
        if !is_message_event(&event) {
            continue;
        }
        if !inbox.payload(event.data.as_bytes(), "SSE event") {
            return;
        }
    }
}

#[async_trait]
impl Transport for SseTransport {
    async fn send(&mut self, message: JsonRpcMessage) -> Result<(), TransportError> {
        if self.inbox.is_closed() {
            return Err(TransportError::closed(&*self.server));
        }
        let body = encode(&message);
        let post = async {
            let response = self
                .headers
                .send(|| {
                    self.client
                        .post(self.endpoint.clone())
                        .header(CONTENT_TYPE, "application/json")
                        .body(body.clone())
                })
                .await?;
            if !response.status().is_success() {
                return Err(unexpected_status(&self.server, "POST", response).await);
            }
            Ok(())
        };
        within(&self.server, "POST", self.post_timeout, post).await
    }

    async fn receive(
        &mut self,
        out: &mut Vec<crate::message::Incoming>,
    ) -> Result<bool, TransportError> {
        self.inbox.receive(out).await
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        self.inbox.close();
        Ok(())
    }

    fn info(&self) -> TransportInfo {
        TransportInfo::new("sse")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(base: &str, data: &str, expect: Result<&str, &str>) {
        let base = reqwest::Url::parse(base).unwrap();
        let got = resolve_endpoint("files", &base, data)
            .map(|u| u.to_string())
            .map_err(|e| e.to_string());
        assert_eq!(
            got.as_deref().map_err(String::as_str),
            expect,
            "{base} + {data}"
        );
    }

    #[test]
    fn endpoints_resolve_against_the_stream_url_and_stay_on_its_origin() {
        check(
            "http://127.0.0.1:8080/sse",
            "/message?sessionId=abc",
            Ok("http://127.0.0.1:8080/message?sessionId=abc"),
        );
        check(
            "http://127.0.0.1:8080/mcp/sse",
            "messages/?session_id=1",
            Ok("http://127.0.0.1:8080/mcp/messages/?session_id=1"),
        );
        check(
            "http://127.0.0.1:8080/sse",
            "http://127.0.0.1:8080/m",
            Ok("http://127.0.0.1:8080/m"),
        );
        check(
            "http://127.0.0.1:8080/sse",
            "http://evil.example/m",
            Err(
                "files: the endpoint event points to another origin (http://evil.example), refusing to post there",
            ),
        );
        check(
            "http://127.0.0.1:8080/sse",
            "//127.0.0.1:9999/m",
            Err(
                "files: the endpoint event points to another origin (http://127.0.0.1:9999), refusing to post there",
            ),
        );
        check(
            "https://127.0.0.1/sse",
            "http://127.0.0.1/m",
            Err(
                "files: the endpoint event points to another origin (http://127.0.0.1), refusing to post there",
            ),
        );
    }
}
