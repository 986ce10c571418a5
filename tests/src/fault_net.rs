//! A loopback HTTP server that misbehaves on purpose, for the fault
//! injection suite.
//!
//! It speaks just enough streamable HTTP to be a real MCP server (JSON
//! answers to `initialize`, `tools/list` with one `echo` tool, `tools/call`,
//! 202 for notifications, 405 for the GET stream) until the scripted
//! request arrives; from then on, every request gets the [`HttpFault`]
//! (a stuck server stays stuck). It is written on raw TCP, not on an HTTP
//! library, so it can do what no well-behaved library would: never finish
//! its headers, trickle a body one byte at a time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// What the server does to a request once the fault fired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpFault {
    /// Slow-loris: the status line, then one header byte every 200 ms,
    /// never finishing the headers.
    SlowHeaders,
    /// Slow-loris: complete headers announcing a body, then one body byte
    /// every 200 ms, never finishing it.
    SlowBody,
    /// `200 OK` with an HTML page (a login wall, a captive portal).
    Html,
    /// This status with a short plain-text body.
    Status(u16),
    /// `307 Temporary Redirect` to the same path on another origin (another
    /// loopback port), which records what reaches it.
    RedirectToOtherOrigin,
    /// A JSON answer with a text result of this many bytes.
    HugeJson(usize),
    /// An SSE answer whose one event carries a text result of this many
    /// bytes.
    HugeEvent(usize),
}

/// Which requests get the fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// Every request, from the first.
    Always,
    /// From the first request whose JSON-RPC method is this one.
    Method(String),
}

/// One request as the server read it.
#[derive(Debug, Clone)]
pub struct SeenRequest {
    /// `POST /mcp`, ...
    pub request_line: String,
    /// Header lines, lowercase names, as received.
    pub headers: Vec<(String, String)>,
}

/// A running faulty server; dropping it stops it and every connection.
#[derive(Debug)]
pub struct FaultyHttp {
    /// The MCP endpoint.
    pub url: String,
    /// For [`HttpFault::RedirectToOtherOrigin`]: every request that reached
    /// the other origin.
    pub other_origin: Arc<Mutex<Vec<SeenRequest>>>,
    stop: watch::Sender<bool>,
}

impl Drop for FaultyHttp {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

struct Script {
    fault: Option<HttpFault>,
    trigger: Trigger,
    fired: AtomicBool,
    /// Where a redirect points.
    redirect_to: Option<String>,
    /// Requests seen (only kept by the other origin).
    seen: Option<Arc<Mutex<Vec<SeenRequest>>>>,
}

/// Starts a faulty server at `http://127.0.0.1:<port>/mcp`.
pub async fn serve_faulty_http(fault: HttpFault, trigger: Trigger) -> FaultyHttp {
    let (stop, stopped) = watch::channel(false);
    let other_origin = Arc::new(Mutex::new(Vec::new()));
    let redirect_to = if fault == HttpFault::RedirectToOtherOrigin {
        // A well-behaved MCP server on another port that records visitors.
        let (listener, port) = bind().await;
        let script = Arc::new(Script {
            fault: None,
            trigger: Trigger::Always,
            fired: AtomicBool::new(false),
            redirect_to: None,
            seen: Some(Arc::clone(&other_origin)),
        });
        accept(listener, script, stopped.clone());
        Some(format!("http://127.0.0.1:{port}/mcp"))
    } else {
        None
    };
    let (listener, port) = bind().await;
    let script = Arc::new(Script {
        fault: Some(fault),
        trigger,
        fired: AtomicBool::new(false),
        redirect_to,
        seen: None,
    });
    accept(listener, script, stopped);
    FaultyHttp {
        url: format!("http://127.0.0.1:{port}/mcp"),
        other_origin,
        stop,
    }
}

async fn bind() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a loopback port");
    let port = listener.local_addr().expect("local address").port();
    (listener, port)
}

fn accept(listener: TcpListener, script: Arc<Script>, mut stop: watch::Receiver<bool>) {
    tokio::spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    connections.spawn(serve_connection(stream, Arc::clone(&script)));
                }
                _ = stop.wait_for(|stopped| *stopped) => break,
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
        connections.abort_all();
    });
}

struct HttpRequest {
    seen: SeenRequest,
    body: Vec<u8>,
}

/// Reads one request (head and `Content-Length` body); `None` at the end of
/// the connection or on anything unreadable.
async fn read_request(reader: &mut BufReader<TcpStream>) -> Option<HttpRequest> {
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).await.ok()? == 0 {
        return None;
    }
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        let name = name.trim().to_ascii_lowercase();
        let value = value.trim().to_owned();
        if name == "content-length" {
            length = value.parse().ok()?;
        }
        headers.push((name, value));
        if headers.len() > 100 {
            return None;
        }
    }
    let mut body = vec![0; length.min(1 << 20)];
    reader.read_exact(&mut body).await.ok()?;
    Some(HttpRequest {
        seen: SeenRequest {
            request_line: request_line.trim_end().to_owned(),
            headers,
        },
        body,
    })
}

fn response(status: &str, content_type: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

async fn serve_connection(stream: TcpStream, script: Arc<Script>) {
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader).await {
        if let Some(seen) = &script.seen {
            seen.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(request.seen.clone());
        }
        let message: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let method = message.get("method").and_then(Value::as_str);
        let fires = match &script.trigger {
            Trigger::Always => true,
            Trigger::Method(at) => method == Some(at.as_str()),
        };
        if fires {
            script.fired.store(true, Ordering::SeqCst);
        }
        let fault = script
            .fault
            .as_ref()
            .filter(|_| script.fired.load(Ordering::SeqCst));
        let stream = reader.get_mut();
        let written = match fault {
            Some(HttpFault::SlowHeaders) => {
                trickle(
                    stream,
                    b"HTTP/1.1 200 OK\r\n",
                    b"x-slow: aaaaaaaaaaaaaaaaaaaaaaaa",
                )
                .await;
                return;
            }
            Some(HttpFault::SlowBody) => {
                trickle(
                    stream,
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n",
                    b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"pad\":\"",
                )
                .await;
                return;
            }
            Some(HttpFault::Html) => {
                let page = "<!doctype html>\n<html><head><title>Sign in</title></head>\
                            <body><h1>Please sign in</h1></body></html>\n";
                stream
                    .write_all(&response("200 OK", "text/html; charset=utf-8", page))
                    .await
            }
            Some(HttpFault::Status(code)) => {
                let status = format!("{code} Scripted Failure");
                stream
                    .write_all(&response(&status, "text/plain", "upstream exploded\n"))
                    .await
            }
            Some(HttpFault::RedirectToOtherOrigin) => {
                let location = script.redirect_to.clone().unwrap_or_default();
                let head = format!(
                    "HTTP/1.1 307 Temporary Redirect\r\nlocation: {location}\r\ncontent-length: 0\r\n\r\n"
                );
                stream.write_all(head.as_bytes()).await
            }
            Some(HttpFault::HugeJson(bytes)) => write_huge(stream, &message, *bytes, false).await,
            Some(HttpFault::HugeEvent(bytes)) => write_huge(stream, &message, *bytes, true).await,
            None => stream.write_all(&answer(&request.seen, &message)).await,
        };
        if written.is_err() {
            return;
        }
    }
}

/// Answers `message` with a text result of `bytes` bytes, as JSON or as one
/// SSE event, written a mebibyte at a time.
async fn write_huge(
    stream: &mut TcpStream,
    message: &Value,
    bytes: usize,
    sse: bool,
) -> std::io::Result<()> {
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let mut head =
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#);
    let mut tail = r#""}]}}"#.to_owned();
    if sse {
        head.insert_str(0, "event: message\ndata: ");
        tail.push_str("\n\n");
    }
    let content_type = if sse {
        "text/event-stream"
    } else {
        "application/json"
    };
    let length = head.len() + bytes + tail.len();
    let response_head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {length}\r\n\r\n"
    );
    stream.write_all(response_head.as_bytes()).await?;
    stream.write_all(head.as_bytes()).await?;
    let chunk = vec![b'x'; 1 << 20];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len());
        stream.write_all(&chunk[..n]).await?;
        left -= n;
    }
    stream.write_all(tail.as_bytes()).await
}

/// Writes `head`, then one byte of `drip` every 200 ms (cycling), until the
/// client goes away.
async fn trickle(stream: &mut TcpStream, head: &[u8], drip: &[u8]) {
    if stream.write_all(head).await.is_err() {
        return;
    }
    for byte in drip.iter().cycle() {
        tokio::time::sleep(Duration::from_millis(200)).await;
        if stream.write_all(&[*byte]).await.is_err() {
            return;
        }
    }
}

/// A well-behaved answer.
fn answer(seen: &SeenRequest, message: &Value) -> Vec<u8> {
    if !seen.request_line.starts_with("POST ") {
        // No GET stream here; DELETE ends nothing.
        return if seen.request_line.starts_with("DELETE ") {
            response("200 OK", "text/plain", "")
        } else {
            response("405 Method Not Allowed", "text/plain", "")
        };
    }
    let (Some(id), Some(method)) = (
        message.get("id"),
        message.get("method").and_then(Value::as_str),
    ) else {
        return response("202 Accepted", "text/plain", "");
    };
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let outcome = match method {
        "initialize" => json!({"result": {
            "protocolVersion": params.get("protocolVersion").cloned().unwrap_or(json!("2025-06-18")),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "faulty-http", "version": "0.1.0"},
        }}),
        "ping" => json!({"result": {}}),
        "tools/list" => json!({"result": {"tools": [
            {"name": "echo", "description": "Echoes the text back",
             "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}
        ]}}),
        "tools/call" => {
            let text = params
                .pointer("/arguments/text")
                .cloned()
                .unwrap_or(json!(""));
            json!({"result": {"content": [{"type": "text", "text": text}]}})
        }
        other => {
            json!({"error": {"code": -32601, "message": format!("method not found: {other}")}})
        }
    };
    let mut body = json!({"jsonrpc": "2.0", "id": id});
    if let (Some(body), Some(outcome)) = (body.as_object_mut(), outcome.as_object()) {
        body.extend(outcome.clone());
    }
    response("200 OK", "application/json", &body.to_string())
}
