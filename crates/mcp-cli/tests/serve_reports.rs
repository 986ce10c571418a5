//! `serve` tells its host why a server's tools are missing: a server that
//! does not start is named on standard error, with the cause, while the
//! client still gets its (empty) list on standard output.

#![allow(clippy::expect_used)]

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::Stdio;

use support::Tree;

#[test]
fn a_server_that_does_not_start_is_named_on_stderr() {
    let tree = Tree::new("empty");
    let mut gateway = tree
        .std_command()
        .args(["serve", "--", "/bin/false"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcp-cli serve");
    let mut input = gateway.stdin.take().expect("stdin");
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
    ] {
        writeln!(input, "{line}").expect("write");
    }
    let mut answers = BufReader::new(gateway.stdout.take().expect("stdout")).lines();
    let listed = loop {
        let line = answers.next().expect("an answer").expect("read");
        let answer: serde_json::Value = serde_json::from_str(&line).expect("JSON");
        if answer["id"] == 2 {
            break answer;
        }
    };
    assert_eq!(listed["result"]["tools"], serde_json::json!([]), "{listed}");
    drop(input);
    let mut stderr = String::new();
    gateway
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read stderr");
    gateway.wait().expect("serve ends when its input does");
    let named: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains(r#"server "adhoc" is unavailable"#))
        .collect();
    assert!(!named.is_empty(), "{stderr}");
    assert!(named[0].contains("exit status: 1"), "{stderr}");
}
