//! `mcp-hostile-text-server`: a stdio MCP server whose every piece of text
//! is the one `--text` it is given, for the CLI's terminal-safety table.
//!
//! The text is `--text`, or `--text-json` (a JSON string, so it may hold
//! NUL), repeated `--repeat N` times when given after it.
//!
//! It writes the text on stderr first, refuses `server/discover` with
//! the text as the error's message, and offers one tool, `echo`,
//! described with the text. A call of `echo` first sends, in this order
//! and without waiting in between: a line that is not JSON and one that
//! is not a valid message, both quoting the text (the client logs them),
//! `--elicit N` form-mode `elicitation/create` requests whose message is
//! the text, and, with `--url-bytes N`, one url-mode request whose url is
//! N bytes long and ends in the text. Once every request is answered, the
//! call's own answer follows: a result whose text block, structured
//! content and `_meta` hold the text, or, with `--fail`, a JSON-RPC error
//! whose message is the text.

use std::io::{BufRead, Write};

use serde_json::{Value, json};

/// What one run sends.
#[derive(Debug, Default)]
struct Options {
    text: String,
    elicit: usize,
    url_bytes: usize,
    fail: bool,
}

fn options() -> Result<Options, String> {
    let mut options = Options::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--text" => options.text = value()?,
            // Any string, NUL included, which an argument cannot hold.
            "--text-json" => {
                options.text = serde_json::from_str(&value()?).map_err(|e| format!("{e}"))?;
            }
            // Longer than one argument may be.
            "--repeat" => {
                let times: usize = value()?.parse().map_err(|e| format!("{e}"))?;
                options.text = options.text.repeat(times);
            }
            "--elicit" => options.elicit = value()?.parse().map_err(|e| format!("{e}"))?,
            "--url-bytes" => options.url_bytes = value()?.parse().map_err(|e| format!("{e}"))?,
            "--fail" => options.fail = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(options)
}

fn main() -> std::process::ExitCode {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "mcp-hostile-text-server: {message}");
            return std::process::ExitCode::from(2);
        }
    };
    // The client keeps a tail of this and logs it at trace level.
    let _ = writeln!(std::io::stderr(), "{}", options.text);
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    // The id of the `echo` call waiting for its elicitations' answers.
    let mut call: Option<Value> = None;
    let mut unanswered = 0_usize;
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let mut frames = Vec::new();
        match message.get("method").and_then(Value::as_str) {
            None => {
                // An answer to one of our requests.
                unanswered = unanswered.saturating_sub(1);
            }
            Some("tools/call") => {
                call = Some(message["id"].clone());
                frames.push(format!("not json {}", options.text));
                frames.push(invalid_line(&options.text));
                for n in 0..options.elicit {
                    frames.push(
                        json!({"jsonrpc": "2.0", "id": format!("form-{n}"), "method": "elicitation/create", "params": {
                            "message": options.text,
                            "requestedSchema": {"type": "object", "properties": {"x": {"type": "string"}}}
                        }})
                        .to_string(),
                    );
                    unanswered += 1;
                }
                if options.url_bytes > 0 {
                    let head = "https://example.com/?q=";
                    let filler = options
                        .url_bytes
                        .saturating_sub(head.len() + options.text.len());
                    let url = format!("{head}{}{}", "a".repeat(filler), options.text);
                    frames.push(
                        json!({"jsonrpc": "2.0", "id": "url", "method": "elicitation/create", "params": {
                            "mode": "url", "elicitationId": "e1", "message": options.text, "url": url
                        }})
                        .to_string(),
                    );
                    unanswered += 1;
                }
            }
            Some("server/discover") => {
                // Refused, quoting the text: the client logs why and
                // falls back to `initialize`.
                frames.push(
                    json!({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32000, "message": options.text}})
                        .to_string(),
                );
            }
            Some(method) => {
                if let Some(id) = message.get("id") {
                    frames.push(answer(method, id, &options.text).to_string());
                }
            }
        }
        if unanswered == 0
            && let Some(id) = call.take()
        {
            frames.push(call_answer(&id, &options).to_string());
        }
        for frame in frames {
            if writeln!(stdout, "{frame}")
                .and_then(|()| stdout.flush())
                .is_err()
            {
                return std::process::ExitCode::SUCCESS;
            }
        }
    }
    std::process::ExitCode::SUCCESS
}

/// A message the client cannot use, whose reason quotes the text: an
/// answer with an id nobody asked for and an unknown `jsonrpc` version.
fn invalid_line(text: &str) -> String {
    json!({"jsonrpc": format!("2.0{text}"), "id": format!("never-{text}"), "result": {}})
        .to_string()
}

fn answer(method: &str, id: &Value, text: &str) -> Value {
    let result = match method {
        "initialize" => json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile-text", "version": "1"},
            "instructions": text,
        }),
        "tools/list" => json!({"tools": [{
            "name": "echo",
            "description": text,
            "inputSchema": {"type": "object", "properties": {}},
        }]}),
        _ => json!({}),
    };
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn call_answer(id: &Value, options: &Options) -> Value {
    if options.fail {
        return json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": options.text}});
    }
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "content": [{"type": "text", "text": options.text}],
        "structuredContent": {"text": options.text},
        "_meta": {"note": options.text},
    }})
}
