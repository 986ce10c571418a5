//! MCP servers whose answers are raw bytes chosen by the test, for the
//! hostile transport suite: messages nested millions of levels deep,
//! answers that are not JSON, not UTF-8 or not JSON-RPC, and 50 MiB events,
//! which no well-behaved server library would write (and which a
//! `serde_json::Value` could not even hold).
//!
//! [`answer`] decides what to send for one request; the same answers are
//! served over stdio (`mcp-scripted-server`), streamable HTTP (as a JSON
//! body, as an SSE answer, or on the GET stream), legacy SSE and WebSocket
//! by [`serve`]. The test asks for a shape with the request
//! `hostile/answer` and params `{"shape": ..., "levels": N, "bytes": N}`;
//! `initialize`, `ping`, `tools/list` (an `echo` tool and a `deep` tool
//! whose input schema nests 65 levels, or `levels` when given) and
//! `tools/call` (a result whose `structuredContent` nests the argument
//! `levels` objects) are answered normally.

use std::sync::{Arc, Mutex};

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};

/// The message cap of the client under test.
pub const CAP: usize = 16 * 1024 * 1024;

/// Levels of nested object schemas in the `deep` tool (the issue's example).
pub const SCHEMA_LEVELS: usize = 65;

/// One message as bytes: small ones whole, huge ones as a head, `filler`
/// bytes of `x` and a tail (written a mebibyte at a time, never held).
#[derive(Debug, Clone)]
pub enum Answer {
    /// The whole message.
    Frame(Vec<u8>),
    /// A message too large to hold.
    Huge {
        /// Everything before the filler.
        head: Vec<u8>,
        /// How many `x` follow.
        filler: usize,
        /// Everything after.
        tail: Vec<u8>,
    },
}

impl Answer {
    /// Length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Answer::Frame(bytes) => bytes.len(),
            Answer::Huge { head, filler, tail } => head.len() + filler + tail.len(),
        }
    }

    /// Whether it is empty (never, for a real answer).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes the message.
    pub async fn write_to<W: AsyncWrite + Unpin>(&self, out: &mut W) -> std::io::Result<()> {
        match self {
            Answer::Frame(bytes) => out.write_all(bytes).await,
            Answer::Huge { head, filler, tail } => {
                out.write_all(head).await?;
                let chunk = vec![b'x'; 1 << 20];
                let mut left = *filler;
                while left > 0 {
                    let n = left.min(chunk.len());
                    out.write_all(&chunk[..n]).await?;
                    left -= n;
                }
                out.write_all(tail).await
            }
        }
    }

    /// The whole message (only for small ones; a huge one is refused).
    pub fn into_bytes(self) -> Option<Vec<u8>> {
        match self {
            Answer::Frame(bytes) => Some(bytes),
            Answer::Huge { .. } => None,
        }
    }
}

fn frame(text: String) -> Answer {
    Answer::Frame(text.into_bytes())
}

/// `{"a":{"a":...1...}}`, `levels` objects deep.
pub fn nested_objects(levels: usize) -> String {
    let mut out = String::with_capacity(levels * 6 + 1);
    for _ in 0..levels {
        out.push_str("{\"a\":");
    }
    out.push('1');
    out.extend(std::iter::repeat_n('}', levels));
    out
}

/// `[[...1...]]`, `levels` arrays deep.
pub fn nested_arrays(levels: usize) -> String {
    let mut out = String::with_capacity(levels * 2 + 1);
    out.extend(std::iter::repeat_n('[', levels));
    out.push('1');
    out.extend(std::iter::repeat_n(']', levels));
    out
}

/// An object schema whose `properties` nest `levels` object schemas.
pub fn nested_schema(levels: usize) -> String {
    let mut out = String::new();
    for _ in 0..levels {
        out.push_str(r#"{"type":"object","properties":{"a":"#);
    }
    out.push_str(r#"{"type":"string"}"#);
    for _ in 0..levels {
        out.push_str("}}");
    }
    out
}

/// How many levels `[`/`]` (2 bytes) or `{"a":`/`}` (6 bytes) a message
/// with `envelope` other bytes may nest while staying within [`CAP`].
pub fn max_levels(per_level: usize, envelope: usize) -> usize {
    (CAP - envelope - 64) / per_level
}

/// The answer to one request; `None` for notifications and answers.
pub fn answer(request: &Value) -> Option<Answer> {
    let id = request.get("id")?;
    let method = request.get("method")?.as_str()?;
    let params = request.get("params").cloned().unwrap_or(Value::Null);
    let ok =
        |result: Value| frame(json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string());
    let raw_result = |result: &str| {
        frame(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#
        ))
    };
    Some(match method {
        "initialize" => ok(json!({
            "protocolVersion": params.get("protocolVersion").cloned().unwrap_or(json!("2025-06-18")),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "scripted", "version": "0.1.0"},
        })),
        "ping" => ok(json!({})),
        "tools/list" => {
            let levels = params
                .get("levels")
                .and_then(Value::as_u64)
                .map_or(SCHEMA_LEVELS, |l| l as usize);
            raw_result(&format!(
                r#"{{"tools":[{{"name":"echo","inputSchema":{{"type":"object"}}}},{{"name":"deep","inputSchema":{}}}]}}"#,
                nested_schema(levels)
            ))
        }
        // `structuredContent` nests `levels` objects (from the arguments).
        "tools/call" => {
            let levels = params
                .pointer("/arguments/levels")
                .and_then(Value::as_u64)
                .unwrap_or(1) as usize;
            raw_result(&format!(
                r#"{{"content":[{{"type":"text","text":"deep"}}],"structuredContent":{}}}"#,
                nested_objects(levels)
            ))
        }
        "hostile/answer" => shaped(id, &params),
        other => frame(
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("method not found: {other}")}})
                .to_string(),
        ),
    })
}

fn shaped(id: &Value, params: &Value) -> Answer {
    let levels = params.get("levels").and_then(Value::as_u64).unwrap_or(0) as usize;
    let bytes = params.get("bytes").and_then(Value::as_u64).unwrap_or(0) as usize;
    let shape = params.get("shape").and_then(Value::as_str).unwrap_or("");
    let envelope = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"deep":}}}}"#).len();
    let deep = |value: String| {
        frame(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"deep":{value}}}}}"#
        ))
    };
    match shape {
        "nest-arrays" => deep(nested_arrays(levels)),
        "nest-objects" => deep(nested_objects(levels)),
        // The deepest messages that fit the cap.
        "max-arrays" => deep(nested_arrays(max_levels(2, envelope))),
        "max-objects" => deep(nested_objects(max_levels(6, envelope))),
        // The id after the deep part.
        "id-last" => frame(format!(
            r#"{{"jsonrpc":"2.0","result":{{"deep":{}}},"id":{id}}}"#,
            nested_arrays(levels)
        )),
        "not-json" => frame(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"text":nope}}}}"#
        )),
        "truncated" => frame(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"text":"cut"#
        )),
        "invalid-utf8" => {
            let mut out =
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"text":"bad "#).into_bytes();
            out.extend_from_slice(b"\xff\xfe\"}}");
            Answer::Frame(out)
        }
        "both" => frame(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{}},"error":{{"code":1,"message":"x"}}}}"#
        )),
        "bad-error" => frame(format!(r#"{{"jsonrpc":"2.0","id":{id},"error":"boom"}}"#)),
        "no-version" => frame(format!(r#"{{"id":{id},"result":{{}}}}"#)),
        // A batch: a notification that decodes, then the answer too deep.
        "batch-deep" => frame(format!(
            r#"[{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","data":"kept"}}}},{{"jsonrpc":"2.0","id":{id},"result":{{"deep":{}}}}}]"#,
            nested_arrays(levels)
        )),
        "huge" => Answer::Huge {
            head: format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#
            )
            .into_bytes(),
            filler: bytes,
            tail: br#""}]}}"#.to_vec(),
        },
        "huge-id-last" => Answer::Huge {
            head: br#"{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":""#.to_vec(),
            filler: bytes,
            tail: format!(r#""}}]}},"id":{id}}}"#).into_bytes(),
        },
        other => frame(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"unknown shape {other}"}}}}"#
        )),
    }
}

/// How a scripted network server delivers its answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Streamable HTTP, each answer as the JSON body of its POST.
    HttpJson,
    /// Streamable HTTP, each answer as one event of an SSE body.
    HttpSse,
    /// Streamable HTTP, `hostile/answer` answers on the GET stream (the
    /// POST gets 202); the handshake is answered with JSON.
    HttpGetStream,
    /// Legacy HTTP+SSE: every answer on the one stream.
    LegacySse,
    /// WebSocket, one answer per binary frame.
    Ws,
}

/// A running scripted server; dropping it stops it and every connection.
#[derive(Debug)]
pub struct Scripted {
    /// The url to connect to.
    pub url: String,
    stop: watch::Sender<bool>,
}

impl Drop for Scripted {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// Where the GET (or legacy SSE) stream's writer takes its answers from.
type Streams = Arc<Mutex<Vec<mpsc::UnboundedSender<Answer>>>>;

/// Starts a scripted server of `kind` on a loopback port.
pub async fn serve(kind: Kind) -> Scripted {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a loopback port");
    let port = listener.local_addr().expect("local address").port();
    let (stop, mut stopped) = watch::channel(false);
    let streams = Streams::default();
    tokio::spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    let streams = Arc::clone(&streams);
                    if kind == Kind::Ws {
                        connections.spawn(serve_ws(stream));
                    } else {
                        connections.spawn(serve_http(stream, kind, streams));
                    }
                }
                _ = stopped.wait_for(|stopped| *stopped) => break,
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
        connections.abort_all();
    });
    let path = match kind {
        Kind::LegacySse => "/sse",
        Kind::Ws => "/ws",
        _ => "/mcp",
    };
    let scheme = if kind == Kind::Ws { "ws" } else { "http" };
    Scripted {
        url: format!("{scheme}://127.0.0.1:{port}{path}"),
        stop,
    }
}

async fn serve_ws(stream: TcpStream) {
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
    #[allow(clippy::result_large_err)]
    let callback = |_: &Request, mut response: Response| -> Result<Response, ErrorResponse> {
        response.headers_mut().insert(
            "sec-websocket-protocol",
            "mcp".parse().expect("header value"),
        );
        Ok(response)
    };
    let Ok(mut socket) = tokio_tungstenite::accept_hdr_async(stream, callback).await else {
        return;
    };
    while let Some(Ok(message)) = socket.next().await {
        let text = match message {
            Message::Text(text) => text.to_string(),
            Message::Close(_) => return,
            _ => continue,
        };
        let Ok(request) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        if let Some(bytes) = answer(&request).and_then(Answer::into_bytes)
            && socket.send(Message::binary(bytes)).await.is_err()
        {
            return;
        }
    }
}

struct HttpRequest {
    line: String,
    body: Vec<u8>,
}

async fn read_request(reader: &mut BufReader<TcpStream>) -> Option<HttpRequest> {
    let mut line = String::new();
    if reader.read_line(&mut line).await.ok()? == 0 {
        return None;
    }
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).await.ok()? == 0 {
            return None;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length.min(1 << 20)];
    reader.read_exact(&mut body).await.ok()?;
    Some(HttpRequest {
        line: line.trim_end().to_owned(),
        body,
    })
}

fn head(status: &str, content_type: &str, length: Option<usize>) -> String {
    match length {
        Some(length) => format!(
            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {length}\r\n\r\n"
        ),
        None => format!(
            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n"
        ),
    }
}

const EVENT_HEAD: &[u8] = b"event: message\ndata: ";
const EVENT_TAIL: &[u8] = b"\n\n";

async fn write_event(out: &mut TcpStream, answer: &Answer) -> std::io::Result<()> {
    out.write_all(EVENT_HEAD).await?;
    answer.write_to(out).await?;
    out.write_all(EVENT_TAIL).await
}

/// Keeps an SSE response open, writing the answers sent to it.
async fn run_stream(stream: &mut TcpStream, first: &[u8], streams: &Streams) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    // Registered before the client can see the stream open and ask.
    streams.lock().unwrap_or_else(|e| e.into_inner()).push(tx);
    if stream
        .write_all(head("200 OK", "text/event-stream", None).as_bytes())
        .await
        .is_err()
        || stream.write_all(first).await.is_err()
    {
        return;
    }
    while let Some(answer) = rx.recv().await {
        if write_event(stream, &answer).await.is_err() {
            return;
        }
    }
}

fn to_streams(streams: &Streams, answer: Answer) {
    let mut streams = streams.lock().unwrap_or_else(|e| e.into_inner());
    streams.retain(|stream| stream.send(answer.clone()).is_ok());
}

async fn serve_http(stream: TcpStream, kind: Kind, streams: Streams) {
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader).await {
        let stream = reader.get_mut();
        if request.line.starts_with("GET ") {
            match kind {
                Kind::LegacySse => {
                    run_stream(stream, b"event: endpoint\ndata: /message\n\n", &streams).await
                }
                Kind::HttpGetStream => run_stream(stream, b": open\n\n", &streams).await,
                _ => {
                    let _ = stream
                        .write_all(head("405 Method Not Allowed", "text/plain", Some(0)).as_bytes())
                        .await;
                    continue;
                }
            }
            return;
        }
        if !request.line.starts_with("POST ") {
            if stream
                .write_all(head("200 OK", "text/plain", Some(0)).as_bytes())
                .await
                .is_err()
            {
                return;
            }
            continue;
        }
        let message: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let answer = answer(&message);
        let on_stream = kind == Kind::LegacySse
            || (kind == Kind::HttpGetStream
                && message.get("method").and_then(Value::as_str) == Some("hostile/answer"));
        let written = match answer {
            None => {
                stream
                    .write_all(head("202 Accepted", "text/plain", Some(0)).as_bytes())
                    .await
            }
            Some(answer) if on_stream => {
                let accepted = stream
                    .write_all(head("202 Accepted", "text/plain", Some(0)).as_bytes())
                    .await;
                to_streams(&streams, answer);
                accepted
            }
            Some(answer) if kind == Kind::HttpSse => {
                let length = EVENT_HEAD.len() + answer.len() + EVENT_TAIL.len();
                match stream
                    .write_all(head("200 OK", "text/event-stream", Some(length)).as_bytes())
                    .await
                {
                    Ok(()) => write_event(stream, &answer).await,
                    Err(e) => Err(e),
                }
            }
            Some(answer) => {
                match stream
                    .write_all(head("200 OK", "application/json", Some(answer.len())).as_bytes())
                    .await
                {
                    Ok(()) => answer.write_to(stream).await,
                    Err(e) => Err(e),
                }
            }
        };
        if written.is_err() {
            return;
        }
    }
}
