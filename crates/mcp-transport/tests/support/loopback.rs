//! The scripted HTTP/1.1 responder the transport's HTTP tests share: it
//! listens on 127.0.0.1, reads one request per connection, records it
//! ([`Seen`]) and writes the [`Answer`] its script picks, in parts with a
//! pause after each, then closes the connection.

#![allow(dead_code, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) headers: BTreeMap<String, String>,
    pub(crate) body: Value,
    pub(crate) at: Instant,
}

impl Seen {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    pub(crate) fn rpc_method(&self) -> &str {
        self.body["method"].as_str().unwrap_or("")
    }

    /// The `Mcp-Param-*` headers, by lowercase name.
    pub(crate) fn param_headers(&self) -> BTreeMap<String, String> {
        self.headers
            .iter()
            .filter(|(k, _)| k.starts_with("mcp-param-"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

/// A canned answer: status, headers, body parts written with `pause`
/// after each, then the connection closes.
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(&'static str, String)>,
    pub(crate) parts: Vec<String>,
    pub(crate) pause: Duration,
}

/// Picks the answer to a request; it also gets how many requests came
/// before.
pub(crate) type Script = Arc<dyn Fn(&Seen, usize) -> Answer + Send + Sync>;

/// The scripted server; the script also gets how many requests came before.
pub(crate) async fn server(script: Script) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://127.0.0.1:{}/mcp",
        listener.local_addr().unwrap().port()
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let script = Arc::clone(&script);
            let log = Arc::clone(&log);
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let head_end = loop {
                    let n = stream.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break at + 4;
                    }
                };
                let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
                let mut lines = head.split("\r\n");
                let mut request_line = lines.next().unwrap_or("").split(' ');
                let method = request_line.next().unwrap_or("").to_owned();
                let path = request_line.next().unwrap_or("").to_owned();
                let headers: BTreeMap<String, String> = lines
                    .filter_map(|l| l.split_once(':'))
                    .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
                    .collect();
                let length: usize = headers
                    .get("content-length")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                while buf.len() < head_end + length {
                    let n = stream.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                let body = serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null);
                let request = Seen {
                    method,
                    path,
                    headers,
                    body,
                    at: Instant::now(),
                };
                let answer = {
                    let mut log = log.lock().unwrap();
                    let answer = script(&request, log.len());
                    log.push(request);
                    answer
                };
                let mut head = format!("HTTP/1.1 {} X\r\nconnection: close\r\n", answer.status);
                for (k, v) in &answer.headers {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                if answer.parts.is_empty() {
                    head.push_str("content-length: 0\r\n");
                }
                head.push_str("\r\n");
                let _ = stream.write_all(head.as_bytes()).await;
                for part in &answer.parts {
                    let _ = stream.write_all(part.as_bytes()).await;
                    let _ = stream.flush().await;
                    tokio::time::sleep(answer.pause).await;
                }
                let _ = stream.shutdown().await;
            });
        }
    });
    (url, seen)
}
