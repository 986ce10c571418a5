//! End-to-end tests of the verbs that connect (`probe`, `tools`, `call`),
//! run as the built binary against the workspace's example stdio server
//! (`mcp-example-server`, built on first use).

#![allow(clippy::expect_used)]

mod support;

use std::path::PathBuf;

use support::Tree;

/// `mcp-example-server`, built on first use.
fn example_server() -> PathBuf {
    support::test_server("mcp-example-server")
}

/// A project whose `.mcp.json` holds `servers` (name → entry JSON, with
/// `SERVER` standing for the example server's path), approved by the home's
/// settings.
fn project(servers: &[(&str, &str)]) -> Tree {
    let tree = Tree::new("empty");
    let server = example_server().display().to_string();
    let entries: Vec<String> = servers
        .iter()
        .map(|(name, entry)| format!("\"{name}\": {}", entry.replace("SERVER", &server)))
        .collect();
    tree.write(
        "project/.mcp.json",
        &format!("{{\"mcpServers\": {{{}}}}}", entries.join(", ")),
    );
    tree.write(
        "home/.claude/settings.json",
        r#"{"enableAllProjectMcpServers": true}"#,
    );
    tree
}

const EXAMPLE: &str = r#"{"command": "SERVER"}"#;

/// Replaces the parts of probe output that vary between runs.
fn stable(text: &str) -> String {
    let digits = |word: &str| !word.is_empty() && word.chars().all(|c| c.is_ascii_digit());
    let mut out = String::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split(' ').collect();
        let stable: Vec<String> = words
            .iter()
            .enumerate()
            .map(|(index, word)| match words.get(index + 1) {
                Some(&"ms") if digits(word) => "[MS]".to_owned(),
                Some(&"ms)") if word.strip_prefix('(').is_some_and(digits) => "([MS]".to_owned(),
                _ => (*word).to_owned(),
            })
            .collect();
        out.push_str(&stable.join(" "));
        out.push('\n');
    }
    without_pids(&out.replace(env!("CARGO_PKG_VERSION"), "[VERSION]"))
}

/// `(pid 1234)` → `(pid [PID])`.
fn without_pids(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("(pid ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 5..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(')') {
            out.push_str("(pid [PID])");
            rest = &after[digits + 1..];
        } else {
            out.push_str("(pid ");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn probe_reports_each_server() {
    let tree = project(&[
        ("example", EXAMPLE),
        (
            "broken",
            r#"{"command": "SERVER", "args": ["--exit-during-initialize"]}"#,
        ),
        ("missing", r#"{"command": "/nonexistent/mcp-server"}"#),
        ("off", r#"{"command": "SERVER", "enabled": false}"#),
    ]);
    let run = tree.run(&["probe"]);
    assert_eq!(
        run.code, 1,
        "a failing server fails the probe\n{}{}",
        run.stdout, run.stderr
    );
    insta::assert_snapshot!(stable(&run.stdout));

    let run = tree.run(&["probe", "example", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut json = run.json();
    assert!(json["servers"][0]["connectMs"].is_u64());
    json["servers"][0]["connectMs"] = serde_json::json!("[MS]");
    json["servers"][0]["serverInfo"]["version"] = serde_json::json!("[VERSION]");
    insta::assert_json_snapshot!(json);

    let run = tree.run(&["probe", "broken", "--json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let mut json = run.json();
    json["servers"][0]["connectMs"] = serde_json::json!("[MS]");
    let tail = json["servers"][0]["stderrTail"].as_str().map(without_pids);
    json["servers"][0]["stderrTail"] = serde_json::json!(tail);
    insta::assert_json_snapshot!(json);
}

#[test]
fn probe_of_an_unknown_server_fails() {
    let tree = project(&[("example", EXAMPLE)]);
    let run = tree.run(&["probe", "nope"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "error: no server named `nope` (configured: example)\n"
    );
}

#[test]
fn tools_prints_the_catalog_in_every_profile() {
    let tree = project(&[("example", EXAMPLE)]);
    let run = tree.run(&["tools"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout);
    let run = tree.run(&["--json", "tools"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_json_snapshot!(run.json());
    let run = tree.run(&[
        "--json",
        "tools",
        "--naming",
        "openclaw",
        "--provider",
        "openai-strict",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let tools = run.json();
    let echo = tools
        .as_array()
        .expect("a list")
        .iter()
        .find(|tool| tool["name"] == "example__echo")
        .cloned()
        .expect("example__echo");
    insta::assert_json_snapshot!(echo);
    for provider in ["anthropic", "gemini"] {
        let run = tree.run(&["--json", "tools", "--provider", provider]);
        assert_eq!(run.code, 0, "{provider}: {}", run.stderr);
        assert!(run.json().as_array().is_some_and(|tools| !tools.is_empty()));
    }
}

#[test]
fn call_validates_calls_and_converts() {
    let tree = project(&[("example", EXAMPLE)]);
    let run = tree.run(&["call", "mcp__example__echo", "--arg", "text=hello there"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "hello there\n"),
        "{}",
        run.stderr
    );

    let run = tree.run(&[
        "call",
        "mcp__example__add",
        "--arg",
        "a=2",
        "--arg",
        "b:=40",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout);

    let run = tree.run(&[
        "--json",
        "call",
        "mcp__example__echo",
        "--args",
        r#"{"text":"hi"}"#,
        "--raw",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_json_snapshot!(run.json());

    let run = tree.run(&[
        "call",
        "example__echo",
        "--naming",
        "openclaw",
        "--arg",
        "text=x",
    ]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "x\n"),
        "{}",
        run.stderr
    );
}

#[test]
fn call_refusals_and_tool_errors() {
    let tree = project(&[("example", EXAMPLE)]);
    let run = tree.run(&["call", "mcp__example__echo", "--args", r#"{"text": 5}"#]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("invalid arguments for tool \"mcp__example__echo\" at /text"),
        "{}",
        run.stderr
    );

    let run = tree.run(&["call", "mcp__example__echo", "--args", "[1]"]);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (2, "error: --args must be a JSON object\n")
    );

    let run = tree.run(&["call", "mcp__example__nope"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .starts_with("error: no tool named `mcp__example__nope`"),
        "{}",
        run.stderr
    );

    let run = tree.run(&["call", "mcp__example__fail"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr
            .ends_with("error: tool `mcp__example__fail` reported an error\n"),
        "{}",
        run.stderr
    );
}

#[test]
fn call_shows_progress_and_honours_the_timeout() {
    let tree = project(&[("example", EXAMPLE)]);
    let run = tree.run(&[
        "call",
        "mcp__example__slow",
        "--arg",
        "steps=3",
        "--arg",
        "step_ms=50",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("progress 1/3"),
        "no progress lines:\n{}",
        run.stderr
    );

    let run = tree.run(&[
        "call",
        "mcp__example__slow",
        "--arg",
        "steps=1",
        "--arg",
        "step_ms=5000",
        "--timeout",
        "0.3",
    ]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("timed out"), "{}", run.stderr);
}

/// One call path: each tool (utility tools too) called through the binary
/// prints, byte for byte, the model output the catalog's `SessionRuntime`
/// gives a host for the same call.
#[test]
fn call_prints_the_model_output_of_the_session_runtime() {
    use std::sync::Arc;

    use mcp_catalog::{
        MaterializeOptions, McpConnector, NamingStyle, RuntimeOptions, ServerSet, SessionRuntime,
    };
    use mcp_config::{ServerConfig, StdioConfig, TransportConfig};
    use serde_json::json;

    let calls = [
        ("mcp__example__echo", json!({"text": "hello there"})),
        ("mcp__example__add", json!({"a": 2, "b": 40})),
        ("mcp__example__fail", json!({})),
        ("mcp__example__resources_list", json!({})),
        (
            "mcp__example__resources_read",
            json!({"uri": "example://greeting"}),
        ),
        ("mcp__example__prompts_list", json!({})),
        (
            "mcp__example__prompts_get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        ),
    ];
    let server = ServerConfig::new(
        "example",
        TransportConfig::Stdio(StdioConfig::new(example_server().display().to_string())),
    );
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let expected: Vec<String> = runtime.block_on(async {
        // The CLI's defaults: `claw` names, the generic profile.
        let options = RuntimeOptions::default()
            .with_materialize(MaterializeOptions::default().with_style(NamingStyle::Claw));
        let session_runtime = SessionRuntime::builder(
            "test",
            ServerSet::all([server]),
            Arc::new(McpConnector::default()),
        )
        .with_options(options)
        .build();
        let mut outputs = Vec::new();
        for (tool, arguments) in &calls {
            let output = session_runtime
                .call(tool, arguments.clone())
                .await
                .unwrap_or_else(|error| panic!("{tool}: {error}"));
            outputs.push(serde_json::to_string(&output).expect("JSON"));
        }
        session_runtime.shutdown().await;
        outputs
    });

    let tree = project(&[("example", EXAMPLE)]);
    for ((tool, arguments), expected) in calls.iter().zip(expected) {
        let run = tree.run(&["--json", "call", tool, "--args", &arguments.to_string()]);
        let printed = serde_json::to_string(&run.json()["result"]).expect("JSON");
        assert_eq!(printed, expected, "{tool}: {}", run.stderr);
    }
}

#[test]
fn tools_summarises_its_diagnostics_and_shows_info_notes_with_v() {
    let tree = project(&[
        ("example", EXAMPLE),
        (
            "hollow",
            r#"{"command": "SERVER", "args": ["--empty-lists"], "toolFilter": {"exclude": ["add", "slow"]}}"#,
        ),
    ]);
    let run = tree.run(&["tools"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // a server announcing resources and prompts but listing none gets no
    // utility tools; the other keeps them
    assert!(
        run.stdout.contains("mcp__example__prompts_get"),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains("mcp__hollow__prompts"),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains("mcp__hollow__resources"),
        "{}",
        run.stdout
    );
    let tools = run
        .stdout
        .lines()
        .filter(|line| line.starts_with("mcp__"))
        .count();
    let expected = format!(
        "2 servers, {tools} tools (2 filtered by toolFilter); 3 info notes (-v shows them)\n"
    );
    assert_eq!(run.stderr, expected);

    let run = tree.run(&["-v", "tools"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let notes: Vec<&str> = run
        .stderr
        .lines()
        .filter(|line| line.starts_with("info: "))
        .collect();
    assert_eq!(
        notes,
        [
            "info: server \"hollow\" announces prompts but lists none; it gets no prompts_list/prompts_get tools",
            "info: server \"hollow\" announces resources but lists none; it gets no resources_list/resources_read tools",
            "info: server `hollow`: toolFilter hid 2 tool(s)",
        ],
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!(
            "2 servers, {tools} tools (2 filtered by toolFilter); 3 info notes\n"
        )),
        "{}",
        run.stderr
    );
}

#[test]
fn call_warns_on_an_argument_the_schema_does_not_name() {
    let tree = project(&[("example", EXAMPLE)]);
    let run = tree.run(&[
        "call",
        "mcp__example__echo",
        "--args",
        r#"{"text": "hi", "loud": true}"#,
    ]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "hi\n"),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.stderr,
        "warning: argument `loud` is not in the schema of tool `mcp__example__echo`; it takes: text\n"
    );
}

#[test]
fn a_description_limit_cuts_with_a_note_and_says_so_with_v() {
    let tree = project(&[(
        "example",
        r#"{"command": "SERVER", "descriptionLimit": 10}"#,
    )]);
    let run = tree.run(&["--json", "tools"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let tools = run.json();
    let echo = tools
        .as_array()
        .expect("a list")
        .iter()
        .find(|tool| tool["name"] == "mcp__example__echo")
        .cloned()
        .expect("mcp__example__echo");
    assert_eq!(echo["description"], "Echoes th…");
    assert!(run.stderr.contains("descriptions cut"), "{}", run.stderr);
    let run = tree.run(&["-v", "tools"]);
    assert!(
        run.stderr.contains(
            "info: server \"example\", tool \"echo\": description cut from 20 to 9 characters (limit 10)"
        ),
        "{}",
        run.stderr
    );
}
