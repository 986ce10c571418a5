//! `raw-http`: the floor for the streamable HTTP rows, the way `raw` is
//! the floor over stdio. It sends pre-built POSTs (the request bytes an MCP
//! client sends for one `echo` call, head and body, built once before the
//! timed loop) over keep-alive TCP connections to a server that answers each
//! with one `application/json` response (the minimal server's `--http` mode),
//! and reads each answer's head and `content-length` bytes of body without
//! parsing the JSON.
//!
//! `BENCH_WIRE` picks the generation of the request bytes. At `2025-11-25`
//! (the default) each connection first posts `initialize` and
//! `notifications/initialized` and every call carries the session id and
//! `mcp-protocol-version`. At `2026-07-28` there is no handshake: every
//! call carries the modern `_meta` (protocol version, client info and
//! capabilities) in its body and `mcp-protocol-version`, `mcp-method` and
//! `mcp-name` in its head, and no session id.
//!
//! With `n` in flight the driver holds `n` connections and keeps one request
//! in flight on each: it writes one POST to every connection, then reads
//! the `n` answers. HTTP/1.1 clients (hyper under reqwest, undici under
//! Node) do not pipeline; each request in flight needs a connection of its
//! own, so that is the shape of the floor too. (The minimal server would
//! answer pipelined requests, but no client measured sends them, and a
//! pipelined floor would measure a transport nobody uses.)

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::{latency_summary, nanos, warmup_calls};

/// The body of one echo call at 2025-11-25, as our client writes it.
const BODY_2025: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}"#;

/// The body of one echo call at 2026-07-28: the same call with the modern
/// `_meta` every request carries, byte for byte as our client writes it.
const BODY_2026: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"mcp-client-toolkit","version":"0.1.0"},"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}"#;

/// The request line of one echo call over stdio at 2026-07-28 (for `raw`).
pub(crate) const STDIO_LINE_2026: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"message\":\"hello\"},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcp-client-toolkit\",\"version\":\"0.1.0\"},\"io.modelcontextprotocol/clientCapabilities\":{\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}}}}\n";

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// `http://host:port/path`, split.
struct Endpoint {
    authority: String,
    path: String,
}

fn endpoint(url: &str) -> Result<Endpoint> {
    let rest = url
        .strip_prefix("http://")
        .context("the raw HTTP driver speaks plain http:// only")?;
    let (authority, path) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    Ok(Endpoint {
        authority: authority.to_owned(),
        path: path.to_owned(),
    })
}

/// One POST, head and body, with the headers our client sends, in its
/// order.
fn post(endpoint: &Endpoint, extra_headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut request = format!(
        "POST {} HTTP/1.1\r\naccept: application/json, text/event-stream\r\ncontent-type: application/json\r\n",
        endpoint.path
    );
    for (name, value) in extra_headers {
        request.push_str(name);
        request.push_str(": ");
        request.push_str(value);
        request.push_str("\r\n");
    }
    request.push_str(&format!(
        "host: {}\r\ncontent-length: {}\r\n\r\n{body}",
        endpoint.authority,
        body.len()
    ));
    request.into_bytes()
}

/// A keep-alive connection with its pre-built call.
struct Connection {
    writer: TcpStream,
    reader: BufReader<TcpStream>,
    call: Vec<u8>,
    line: String,
    body: Vec<u8>,
}

impl Connection {
    fn open(endpoint: &Endpoint, modern: bool) -> Result<Connection> {
        let stream = TcpStream::connect(&endpoint.authority)
            .with_context(|| format!("connecting to {}", endpoint.authority))?;
        stream.set_nodelay(true)?;
        let mut connection = Connection {
            reader: BufReader::with_capacity(64 * 1024, stream.try_clone()?),
            writer: stream,
            call: Vec::new(),
            line: String::new(),
            body: Vec::with_capacity(4096),
        };
        connection.call = if modern {
            post(
                endpoint,
                &[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", "echo"),
                ],
                BODY_2026,
            )
        } else {
            connection
                .writer
                .write_all(&post(endpoint, &[], INITIALIZE))?;
            let session = connection
                .read_answer()?
                .context("initialize was answered without an mcp-session-id")?;
            let headers = [
                ("mcp-protocol-version", "2025-11-25"),
                ("mcp-session-id", session.as_str()),
            ];
            connection
                .writer
                .write_all(&post(endpoint, &headers, INITIALIZED))?;
            connection.read_answer()?;
            post(endpoint, &headers, BODY_2025)
        };
        Ok(connection)
    }

    /// Reads one answer (head, then `content-length` bytes of body);
    /// returns its `mcp-session-id`, if any.
    fn read_answer(&mut self) -> Result<Option<String>> {
        let mut length = 0;
        let mut session = None;
        let mut first = true;
        loop {
            self.line.clear();
            if self.reader.read_line(&mut self.line)? == 0 {
                bail!("the server closed the connection");
            }
            let line = self.line.trim_end();
            if first {
                first = false;
                if !(line.starts_with("HTTP/1.1 2") || line.starts_with("HTTP/1.0 2")) {
                    bail!("the server answered `{line}`");
                }
                continue;
            }
            if line.is_empty() {
                break;
            }
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().context("a bad content-length")?;
            } else if name.eq_ignore_ascii_case("mcp-session-id") {
                session = Some(value.trim().to_owned());
            }
        }
        self.body.resize(length, 0);
        self.reader.read_exact(&mut self.body)?;
        Ok(session)
    }
}

/// Writes one call to each connection, then reads every answer.
fn round(connections: &mut [Connection]) -> Result<()> {
    for connection in connections.iter_mut() {
        connection.writer.write_all(&connection.call)?;
    }
    for connection in connections.iter_mut() {
        connection.read_answer()?;
    }
    Ok(())
}

pub(crate) fn raw_http(scenario: &str, n: usize, calls: usize, url: &str) -> Result<Value> {
    let modern = std::env::var("BENCH_WIRE").as_deref() == Ok("2026-07-28");
    let endpoint = endpoint(url)?;
    let n = n.max(1);
    let mut connections = (0..n)
        .map(|_| Connection::open(&endpoint, modern))
        .collect::<Result<Vec<_>>>()?;
    match scenario {
        "seq" => {
            let connection = std::slice::from_mut(&mut connections[0]);
            for _ in 0..warmup_calls(calls) {
                round(connection)?;
            }
            let mut samples = Vec::with_capacity(calls);
            for _ in 0..calls {
                let started = Instant::now();
                round(connection)?;
                samples.push(nanos(started.elapsed()));
            }
            Ok(latency_summary(samples))
        }
        "tput" => {
            for _ in 0..warmup_calls(calls) / n + 1 {
                round(&mut connections)?;
            }
            let rounds = (calls / n).max(1);
            let started = Instant::now();
            for _ in 0..rounds {
                round(&mut connections)?;
            }
            let elapsed = started.elapsed();
            Ok(json!({"calls_per_s": (rounds * n) as f64 / elapsed.as_secs_f64()}))
        }
        other => bail!("the raw HTTP driver has no scenario `{other}`"),
    }
}
