//! `headersHelper`: a command whose stdout is a JSON object of extra HTTP
//! headers for one remote server (tokens that expire, per-user headers).
//!
//! The command line is split into argv with shell-words and run directly,
//! never through a shell. It gets no stdin, ten seconds to finish, and the
//! environment variables `CLAUDE_CODE_MCP_SERVER_NAME` and
//! `CLAUDE_CODE_MCP_SERVER_URL` (the names Claude Code uses, so existing
//! helpers keep working). Its stdout must be one JSON object whose values are
//! all strings. Header values are secrets: no error and no log line ever
//! contains one. Failures are [`TransportError`]s with the `Helper*` kinds.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::Command;

use crate::error::{TransportError, TransportErrorKind};

/// How long a helper may run before it is killed.
pub const HEADERS_HELPER_TIMEOUT: Duration = Duration::from_secs(10);

/// Most bytes of stdout read from a helper; more is an error.
const MAX_OUTPUT: usize = 64 * 1024;

/// Runs `command` for `server` (whose url is `url`) with the default time
/// limit and returns the headers it printed.
pub async fn run_headers_helper(
    server: &str,
    url: &str,
    command: &str,
) -> Result<BTreeMap<String, String>, TransportError> {
    run_headers_helper_with_timeout(server, url, command, HEADERS_HELPER_TIMEOUT).await
}

/// [`run_headers_helper`] with an explicit time limit.
pub async fn run_headers_helper_with_timeout(
    server: &str,
    url: &str,
    command: &str,
    timeout: Duration,
) -> Result<BTreeMap<String, String>, TransportError> {
    let argv = shell_words::split(command).map_err(|e| {
        TransportError::new(
            server,
            TransportErrorKind::HelperCommandInvalid {
                message: e.to_string(),
            },
        )
        .with_source(e)
    })?;
    let Some((program, args)) = argv.split_first() else {
        return Err(TransportError::new(
            server,
            TransportErrorKind::HelperCommandInvalid {
                message: "the command is empty".to_owned(),
            },
        ));
    };
    let spawn_error = |e: std::io::Error| {
        TransportError::new(
            server,
            TransportErrorKind::HelperSpawn {
                program: program.clone(),
                message: e.to_string(),
            },
        )
        .with_source(e)
    };
    let mut command = Command::new(program);
    command
        .args(args)
        .env("CLAUDE_CODE_MCP_SERVER_NAME", server)
        .env("CLAUDE_CODE_MCP_SERVER_URL", url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Its own process group, so a helper that starts processes of its own
    // (a script) is killed whole at the limit.
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command.spawn().map_err(spawn_error)?;
    let mut group = mcp_oauth::GroupGuard::new(child.id());
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let run = async {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let read_out = async {
            if let Some(s) = stdout.as_mut() {
                let _ = s.take(MAX_OUTPUT as u64 + 1).read_to_end(&mut out).await;
            }
        };
        let read_err = async {
            if let Some(s) = stderr.as_mut() {
                let _ = s.take(4096).read_to_end(&mut err).await;
            }
        };
        tokio::join!(read_out, read_err);
        let status = child.wait().await;
        (status, out, err)
    };
    let (status, out, err) = match tokio::time::timeout(timeout, run).await {
        Ok(done) => done,
        Err(_) => {
            return Err(TransportError::new(
                server,
                TransportErrorKind::HelperTimeout {
                    program: program.clone(),
                    after: timeout,
                },
            ));
        }
    };
    // The helper finished in time: whatever it left running is its own.
    group.disarm();
    let status = status.map_err(spawn_error)?;
    if !status.success() {
        // stderr is the helper's own diagnostic; it is not header output.
        let stderr = String::from_utf8_lossy(&err);
        let stderr = stderr.trim();
        return Err(TransportError::new(
            server,
            TransportErrorKind::HelperFailed {
                program: program.clone(),
                status: status.to_string(),
                stderr: stderr.to_owned(),
            },
        ));
    }
    parse_helper_output(&out).map_err(|message| {
        TransportError::new(
            server,
            TransportErrorKind::HelperBadOutput {
                program: program.clone(),
                message,
            },
        )
    })
}

/// Checks the helper's stdout. Messages name keys and types, never values.
fn parse_helper_output(out: &[u8]) -> Result<BTreeMap<String, String>, String> {
    if out.len() > MAX_OUTPUT {
        return Err(format!("more than {MAX_OUTPUT} bytes"));
    }
    let value: serde_json::Value = serde_json::from_slice(out)
        .map_err(|e| format!("not JSON (line {}, column {})", e.line(), e.column()))?;
    let serde_json::Value::Object(map) = value else {
        return Err(format!("expected an object, found {}", json_type(&value)));
    };
    let mut headers = BTreeMap::new();
    for (key, value) in map {
        let serde_json::Value::String(text) = value else {
            return Err(format!(
                "value of `{key}` is {}, expected a string",
                json_type(&value)
            ));
        };
        if reqwest::header::HeaderName::from_bytes(key.as_bytes()).is_err() {
            return Err(format!("`{key}` is not a valid header name"));
        }
        if reqwest::header::HeaderValue::from_str(&text).is_err() {
            return Err(format!("value of `{key}` is not a valid header value"));
        }
        headers.insert(key, text);
    }
    Ok(headers)
}

fn json_type(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(stdout: &str, expect: Result<&[(&str, &str)], &str>) {
        let got = parse_helper_output(stdout.as_bytes());
        match (got, expect) {
            (Ok(map), Ok(pairs)) => {
                let want: BTreeMap<String, String> = pairs
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect();
                assert_eq!(map, want, "stdout {stdout:?}");
            }
            (Err(msg), Err(want)) => assert_eq!(msg, want, "stdout {stdout:?}"),
            (got, want) => panic!("stdout {stdout:?}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn output_must_be_an_object_of_strings() {
        check(
            r#"{"Authorization":"Bearer s3cret","X-Team":"a"}"#,
            Ok(&[("Authorization", "Bearer s3cret"), ("X-Team", "a")]),
        );
        check("{}\n", Ok(&[]));
        check("[]", Err("expected an object, found an array"));
        check(
            r#"{"X-N": 5}"#,
            Err("value of `X-N` is a number, expected a string"),
        );
        check(
            r#"{"bad name": "v"}"#,
            Err("`bad name` is not a valid header name"),
        );
        check(
            "{\"X\": \"a\\nb\"}",
            Err("value of `X` is not a valid header value"),
        );
        check("Bearer abc", Err("not JSON (line 1, column 1)"));
    }

    #[test]
    fn errors_never_contain_values() {
        let err = parse_helper_output(br#"{"X-Key": 12345678}"#).unwrap_err();
        assert!(!err.contains("12345678"));
        let err = parse_helper_output(b"{\"X-Key\": \"top\\nsecret\"}").unwrap_err();
        assert!(!err.contains("secret"));
    }

    #[tokio::test]
    async fn runs_without_a_shell_and_names_the_server() {
        // `$HOME` stays literal: no shell expands it.
        let got = run_headers_helper(
            "files",
            "http://127.0.0.1/mcp",
            r#"printf '{"X-Literal":"$HOME"}'"#,
        )
        .await
        .unwrap();
        assert_eq!(got.get("X-Literal").map(String::as_str), Some("$HOME"));

        let got = run_headers_helper(
            "files",
            "http://127.0.0.1:9/mcp",
            r#"sh -c 'printf "{\"X-Server\":\"%s\",\"X-Url\":\"%s\"}" "$CLAUDE_CODE_MCP_SERVER_NAME" "$CLAUDE_CODE_MCP_SERVER_URL"'"#,
        )
        .await
        .unwrap();
        assert_eq!(got.get("X-Server").map(String::as_str), Some("files"));
        assert_eq!(
            got.get("X-Url").map(String::as_str),
            Some("http://127.0.0.1:9/mcp")
        );

        let err = run_headers_helper("files", "u", "false")
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("files: headersHelper `false` exited with"),
            "{err}"
        );
        let err = run_headers_helper("files", "u", "/nonexistent/helper")
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("files: headersHelper `/nonexistent/helper` could not start"),
            "{err}"
        );
        let err = run_headers_helper("files", "u", "echo 'unterminated")
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("files: headersHelper command line is invalid"),
            "{err}"
        );
        let err = run_headers_helper("files", "u", "  ")
            .await
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "files: headersHelper command line is invalid: the command is empty"
        );
    }

    #[tokio::test]
    async fn a_slow_helper_is_killed() {
        let err =
            run_headers_helper_with_timeout("slow", "u", "sleep 5", Duration::from_millis(200))
                .await
                .unwrap_err()
                .to_string();
        assert_eq!(
            err,
            "slow: headersHelper `sleep` did not finish within 200 ms"
        );
    }
}
