//! `mcp-cli call` exporting its spans and measurements over OTLP/HTTP to a
//! loopback collector, as the standard `OTEL_*` variables ask, decoded by
//! the official definitions (PyPI `opentelemetry-proto`, pinned in
//! `peers/requirements.txt`, run by `support/otlp_decode.py` in the peers'
//! venv); and exporting
//! nothing at all when no variable asks or `OTEL_SDK_DISABLED` says so.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use support::{Tree, test_server};

/// One POST the collector received.
#[derive(Debug, Clone)]
struct Posted {
    path: String,
    content_type: String,
    body: Vec<u8>,
}

/// A collector on 127.0.0.1 that records every POST and answers 200: its
/// base URL and what it received.
fn collector() -> (String, Arc<Mutex<Vec<Posted>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let posted = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&posted);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                let mut writer = stream.try_clone().unwrap();
                let mut reader = BufReader::new(stream);
                // One connection may carry several requests.
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let path = line.split(' ').nth(1).unwrap_or("").to_owned();
                    let (mut length, mut content_type) = (0, String::new());
                    loop {
                        let mut header = String::new();
                        reader.read_line(&mut header).unwrap();
                        let header = header.trim_end();
                        if header.is_empty() {
                            break;
                        }
                        let (name, value) = header.split_once(':').unwrap();
                        match name.to_ascii_lowercase().as_str() {
                            "content-length" => length = value.trim().parse().unwrap(),
                            "content-type" => content_type = value.trim().to_owned(),
                            _ => {}
                        }
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).unwrap();
                    log.lock().unwrap().push(Posted {
                        path,
                        content_type,
                        body,
                    });
                    let _ = writer.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
                }
            });
        }
    });
    (url, posted)
}

/// Runs `call mcp__adhoc__echo` against the example server with `env`.
fn call(tree: &Tree, env: &[(&str, &str)]) -> support::Run {
    let server = test_server("mcp-example-server");
    let server = server.display().to_string();
    let args = [
        "call",
        "mcp__adhoc__echo",
        "--args",
        r#"{"text":"hi"}"#,
        "--",
        server.as_str(),
    ];
    let run = tree.run_with(&args, |command| {
        for (name, value) in env {
            command.env(name, value);
        }
    });
    assert_eq!(run.code, 0, "{env:?}\n{}\n{}", run.stdout, run.stderr);
    run
}

/// What the official definitions read in `posted`.
fn decode(dir: &Path, posted: &[Posted]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/otlp_decode.py");
    let mut args = vec![script.display().to_string()];
    for (i, post) in posted.iter().enumerate() {
        let kind = match post.path.as_str() {
            path if path.ends_with("traces") => "traces",
            path if path.ends_with("metrics") => "metrics",
            other => panic!("a post to {other}"),
        };
        let format = match post.content_type.as_str() {
            "application/x-protobuf" => "protobuf",
            "application/json" => "json",
            other => panic!("a post of {other}"),
        };
        let file = dir.join(format!("post-{i}"));
        std::fs::write(&file, &post.body).unwrap();
        args.extend([
            kind.to_owned(),
            format.to_owned(),
            file.display().to_string(),
        ]);
    }
    let out = std::process::Command::new(mcp_test_peers::python("venv"))
        .args(&args)
        .output()
        .expect("the venv's python runs");
    assert!(
        out.status.success(),
        "decoding failed (the official definitions: pip install opentelemetry-proto==1.45.2):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// One row: the variables (with `{url}` for the collector), the paths and
/// content type the posts must have.
fn check(vars: &[(&str, &str)], paths: &[&str], content_type: &str) {
    let tree = Tree::new("empty");
    let (url, posted) = collector();
    let vars: Vec<(&str, String)> = vars
        .iter()
        .map(|(name, value)| (*name, value.replace("{url}", &url)))
        .collect();
    let env: Vec<(&str, &str)> = vars.iter().map(|(n, v)| (*n, v.as_str())).collect();
    call(&tree, &env);
    // The CLI flushed before it exited: everything is here already.
    let posted = posted.lock().unwrap().clone();
    let mut seen: Vec<&str> = posted.iter().map(|post| post.path.as_str()).collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen, paths, "{env:?}");
    assert!(
        posted.iter().all(|post| post.content_type == content_type),
        "{env:?}: {posted:?}"
    );
    let summary = decode(tree.root(), &posted);
    let label = format!("{env:?}: {summary}");
    assert!(
        summary["services"]
            .as_array()
            .unwrap()
            .iter()
            .all(|name| name == "mcp-cli"),
        "{label}"
    );
    if paths.iter().any(|path| path.ends_with("traces")) {
        let spans = summary["spans"].as_array().unwrap();
        let call = spans
            .iter()
            .find(|span| span["name"] == "tools/call echo")
            .unwrap_or_else(|| panic!("no tools/call span: {label}"));
        // SPAN_KIND_CLIENT
        assert_eq!(call["kind"], 3, "{label}");
        assert_eq!(call["scope"], "mcp-transport", "{label}");
        let attributes = &call["attributes"];
        for (key, expect) in [
            ("mcp.method.name", "tools/call"),
            ("gen_ai.tool.name", "echo"),
            ("gen_ai.operation.name", "execute_tool"),
            ("network.transport", "pipe"),
        ] {
            assert_eq!(attributes[key], expect, "{key}: {label}");
        }
        assert!(attributes["jsonrpc.request.id"].is_string(), "{label}");
        assert!(attributes["mcp.protocol.version"].is_string(), "{label}");
        // nothing the host did not opt into
        assert!(
            attributes.get("gen_ai.tool.call.arguments").is_none(),
            "{label}"
        );
        assert!(
            spans
                .iter()
                .any(|span| span["name"] == "initialize" || span["name"] == "server/discover"),
            "{label}"
        );
        // One trace per run: the run's INTERNAL span, and every other span
        // in its trace; under the caller's trace when TRACEPARENT names one.
        let run = spans
            .iter()
            .find(|span| span["name"] == "mcp-cli call")
            .unwrap_or_else(|| panic!("no run span: {label}"));
        assert_eq!(run["kind"], 1, "{label}");
        assert!(
            spans.iter().all(|span| span["trace_id"] == run["trace_id"]),
            "{label}"
        );
        match env.iter().find(|(name, _)| *name == "TRACEPARENT") {
            Some((_, parent)) => {
                assert_eq!(run["trace_id"], parent[3..35], "{label}");
                assert_eq!(run["parent_span_id"], parent[36..52], "{label}");
            }
            None => assert_eq!(run["parent_span_id"], "", "{label}"),
        }
    }
    if paths.iter().any(|path| path.ends_with("/v1/metrics")) {
        let metrics = summary["metrics"].as_array().unwrap();
        for name in [
            "mcp.client.operation.duration",
            "mcp.client.session.duration",
        ] {
            let metric = metrics
                .iter()
                .find(|metric| metric["name"] == name)
                .unwrap_or_else(|| panic!("no {name}: {label}"));
            assert_eq!(metric["unit"], "s", "{label}");
            assert!(metric["count"].as_u64().unwrap() >= 1, "{label}");
        }
    }
}

const ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
const PROTOCOL: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
const PROTOBUF: &str = "application/x-protobuf";

#[test]
#[ignore = "needs cargo xtask peers"]
fn the_general_endpoint_exports_traces_and_metrics_as_protobuf_by_default() {
    let both = ["/v1/metrics", "/v1/traces"];
    check(&[(ENDPOINT, "{url}")], &both, PROTOBUF);
    check(
        &[(ENDPOINT, "{url}/"), (PROTOCOL, "http/protobuf")],
        &both,
        PROTOBUF,
    );
    check(
        &[(ENDPOINT, "{url}"), ("OTEL_SDK_DISABLED", "false")],
        &both,
        PROTOBUF,
    );
    // A caller's trace, carried in the environment.
    check(
        &[
            (ENDPOINT, "{url}"),
            (
                "TRACEPARENT",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            ),
        ],
        &both,
        PROTOBUF,
    );
}

#[test]
#[ignore = "needs cargo xtask peers"]
fn http_json_is_decoded_too() {
    let both = ["/v1/metrics", "/v1/traces"];
    check(
        &[(ENDPOINT, "{url}"), (PROTOCOL, "http/json")],
        &both,
        "application/json",
    );
    check(
        &[
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "{url}/custom/traces"),
            (PROTOCOL, "http/json"),
        ],
        &["/custom/traces"],
        "application/json",
    );
}

#[test]
#[ignore = "needs cargo xtask peers"]
fn a_signal_endpoint_exports_that_signal_alone() {
    check(
        &[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "{url}/v1/traces")],
        &["/v1/traces"],
        PROTOBUF,
    );
    check(
        &[("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "{url}/v1/metrics")],
        &["/v1/metrics"],
        PROTOBUF,
    );
}

/// No variable, a protocol alone, or `OTEL_SDK_DISABLED=true`: the
/// collector hears nothing, and the command prints the same.
#[test]
fn nothing_is_exported_unless_a_variable_asks() {
    let tree = Tree::new("empty");
    let (url, posted) = collector();
    let quiet = call(&tree, &[]);
    for env in [
        vec![(PROTOCOL, "http/json")],
        vec![(ENDPOINT, url.as_str()), ("OTEL_SDK_DISABLED", "true")],
        vec![(ENDPOINT, url.as_str()), ("OTEL_SDK_DISABLED", "TRUE")],
        vec![
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", url.as_str()),
            ("OTEL_SDK_DISABLED", "true"),
        ],
    ] {
        let run = call(&tree, &env);
        assert_eq!(run.stdout, quiet.stdout, "{env:?}");
        assert_eq!(run.stderr, quiet.stderr, "{env:?}");
    }
    assert!(posted.lock().unwrap().is_empty());
}
