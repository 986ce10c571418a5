//! Text from configs and servers never reaches the terminal raw (issue 12,
//! item 12): every string the human CLI prints from outside is escaped, so
//! an ESC sequence, a C1 control, a newline or a bidi override cannot
//! colour, retitle or clear the terminal, or print a fake row. `--json`
//! stays exact.
//!
//! One table of hostile strings, each fed through every field that shows
//! it: server names, commands, args, urls and diagnostics (through the
//! config), and tool names, descriptions, parameter descriptions,
//! `serverInfo`, error messages and stderr tails (through a small stdio
//! server script per row, run as the built binary would run any server).

#![allow(clippy::expect_used)]
#![cfg(unix)]

mod support;

use support::{Run, Tree};

/// A hostile string and how the CLI shows it.
struct Row {
    name: &'static str,
    text: &'static str,
    shown: &'static str,
}

const ROWS: &[Row] = &[
    Row {
        name: "csi",
        text: "\u{1b}[31mred",
        shown: r"\x1b[31mred",
    },
    Row {
        name: "osc",
        text: "\u{1b}]0;pwned\u{7}",
        shown: r"\x1b]0;pwned\x07",
    },
    Row {
        name: "c1",
        text: "\u{9b}2J",
        shown: r"\u{9b}2J",
    },
    Row {
        name: "newline",
        text: "a\nfake row",
        shown: r"a\nfake row",
    },
    Row {
        name: "return",
        text: "a\rfake row",
        shown: r"a\rfake row",
    },
    Row {
        name: "bidi",
        text: "\u{202e}txt.exe",
        shown: r"\u{202e}txt.exe",
    },
    Row {
        name: "isolate",
        text: "x\u{2066}y",
        shown: r"x\u{2066}y",
    },
    Row {
        name: "del",
        text: "x\u{7f}y",
        shown: r"x\x7fy",
    },
    Row {
        name: "tab",
        text: "x\ty",
        shown: r"x\ty",
    },
];

/// Answers `initialize`, `tools/list` (one tool named and described with
/// the row's text) and `tools/call` (an error carrying it); writes it on
/// stderr first; with `die` as its argument it exits at once instead.
fn script(text: &str) -> String {
    let json = |s: &str| serde_json::to_string(s).expect("json");
    let tools = serde_json::json!({
        "tools": [{
            "name": format!("t{text}"),
            "description": format!("first {text}\nsecond {text}"),
            "inputSchema": {"type": "object", "properties": {
                format!("p{text}"): {"type": "string", "description": format!("d {text}")}
            }}
        }]
    });
    let init = serde_json::json!({
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": format!("n{text}"), "version": format!("v{text}")}
    });
    let error = serde_json::json!({"code": -32000, "message": format!("boom {text}")});
    let quoted = |value: &serde_json::Value| {
        let text = value.to_string();
        assert!(!text.contains('\''), "{text}");
        text
    };
    let stderr = format!("stderr {text}").replace('\0', "");
    assert!(!stderr.contains('\''));
    let _ = json;
    format!(
        r#"#!/bin/sh
printf '%s\n' '{stderr}' >&2
if [ "$1" = die ]; then exit 3; fi
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  method=$(printf '%s\n' "$line" | sed -n 's/.*"method":"\([^"]*\)".*/\1/p')
  [ -z "$id" ] && continue
  case "$method" in
    initialize) printf '%s%s%s\n' '{{"jsonrpc":"2.0","id":' "$id" ',"result":{init}}}' ;;
    tools/list) printf '%s%s%s\n' '{{"jsonrpc":"2.0","id":' "$id" ',"result":{tools}}}' ;;
    tools/call) printf '%s%s%s\n' '{{"jsonrpc":"2.0","id":' "$id" ',"error":{error}}}' ;;
    *) printf '%s%s%s\n' '{{"jsonrpc":"2.0","id":' "$id" ',"result":{{}}}}' ;;
  esac
done
"#,
        init = quoted(&init),
        tools = quoted(&tools),
        error = quoted(&error),
    )
}

/// A tree with, per row, a stdio server `s-<row>` running the row's
/// script with hostile args, one that dies with a hostile stderr, and a
/// remote server with a hostile url.
fn tree() -> Tree {
    let tree = Tree::new("empty");
    let mut servers = serde_json::Map::new();
    for row in ROWS {
        let path = tree.path(&format!("servers/{}.sh", row.name));
        tree.write(&format!("servers/{}.sh", row.name), &script(row.text));
        make_executable(&path);
        servers.insert(
            format!("s-{}", row.name),
            serde_json::json!({"command": path, "args": [format!("arg {}", row.text)]}),
        );
        servers.insert(
            format!("die-{}", row.name),
            serde_json::json!({"command": path, "args": ["die"]}),
        );
        servers.insert(
            format!("url-{}", row.name),
            serde_json::json!({"type": "http", "url": format!("http://127.0.0.1:9/{}", row.text)}),
        );
    }
    tree.write(
        "project/.mcp.json",
        &serde_json::json!({ "mcpServers": servers }).to_string(),
    );
    tree.write(
        "home/.claude/settings.json",
        r#"{"enableAllProjectMcpServers": true}"#,
    );
    tree
}

fn make_executable(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// What must never reach a terminal raw.
fn is_dangerous(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Checks both streams of a run: nothing dangerous, no line that starts
/// like an injected row, and each of `expect` (escaped text) shown.
#[track_caller]
fn check(what: &str, run: &Run, expect: &[String]) {
    let both = format!("{}{}", run.stdout, run.stderr);
    let bad: Vec<(usize, char)> = both
        .char_indices()
        .filter(|(_, c)| is_dangerous(*c))
        .collect();
    assert!(
        bad.is_empty(),
        "{what}: raw control or bidi characters {bad:?} in\nstdout:\n{}\nstderr:\n{}",
        run.stdout.escape_debug(),
        run.stderr.escape_debug()
    );
    for line in both.lines() {
        assert!(
            !line.starts_with("fake row"),
            "{what}: a hostile newline printed a line of its own:\n{both}"
        );
    }
    for shown in expect {
        assert!(
            both.contains(shown.as_str()),
            "{what}: {shown:?} is not shown\nstdout:\n{}\nstderr:\n{}",
            run.stdout,
            run.stderr
        );
    }
}

#[test]
fn config_text_is_escaped_in_list_get_and_check_config() {
    let tree = tree();
    let run = tree.run(&["list"]);
    check("list", &run, &[]);
    let run = tree.run(&["check-config"]);
    check("check-config", &run, &[]);
    for row in ROWS {
        let run = tree.run(&["get", &format!("s-{}", row.name)]);
        check(
            &format!("get s-{} (command args)", row.name),
            &run,
            &[row.shown.to_owned()],
        );
        let run = tree.run(&["get", &format!("url-{}", row.name)]);
        check(
            &format!("get url-{} (url)", row.name),
            &run,
            &[row.shown.to_owned()],
        );
    }
    // A hostile server name, wherever the loader leaves it: listed, or
    // named in a diagnostic.
    let tree = Tree::new("empty");
    let names: serde_json::Map<String, serde_json::Value> = ROWS
        .iter()
        .map(|row| {
            (
                format!("n{}", row.text),
                serde_json::json!({"command": "/bin/true"}),
            )
        })
        .collect();
    tree.write(
        "home/.claude.json",
        &serde_json::json!({ "mcpServers": names }).to_string(),
    );
    for verb in [&["list"][..], &["check-config"], &["get", "n\u{1b}[31mred"]] {
        let run = tree.run(verb);
        check(&format!("{verb:?} with hostile names"), &run, &[]);
    }
    // JSON stays exact.
    let run = tree.run(&["--json", "list"]);
    let json = run.json();
    let listed: Vec<&str> = json["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    let diagnostics = json["diagnostics"].to_string();
    for row in ROWS {
        let name = format!("n{}", row.text);
        let spelled = serde_json::to_string(&name).expect("json");
        let spelled = spelled.trim_matches('"');
        assert!(
            listed.contains(&name.as_str()) || diagnostics.contains(spelled),
            "--json list lost {name:?}: {json}"
        );
    }
}

#[test]
fn server_text_is_escaped_in_probe_tools_and_call() {
    let tree = tree();
    let run = tree.run(&["probe"]);
    let mut expect = Vec::new();
    for row in ROWS {
        expect.push(format!("n{}", row.shown));
        if !row.text.contains('\n') && !row.text.contains('\r') {
            expect.push(format!("stderr {}", row.shown));
        }
    }
    check("probe", &run, &expect);

    let run = tree.run(&["tools"]);
    let mut expect = Vec::new();
    for row in ROWS {
        expect.push(format!("t{}", row.shown));
        if row.text.contains('\n') {
            // A description spans lines: each is indented under its tool.
            expect.push("\n    fake row\n".to_owned());
        } else {
            expect.push(format!("first {}", row.shown));
        }
        expect.push(format!("p{}: string", row.shown));
        if row.text.contains('\n') {
            // A parameter shows the first line of its description.
            expect.push("— d a\n".to_owned());
        } else {
            expect.push(format!("d {}", row.shown));
        }
    }
    check("tools", &run, &expect);

    let run = tree.run(&["--json", "tools"]);
    let raw = run.json().to_string();
    for row in ROWS {
        let spelled = serde_json::to_string(&format!("first {}", row.text)).expect("json");
        assert!(
            raw.contains(&spelled[..spelled.len() - 1]),
            "--json tools is not exact for {}: {raw}",
            row.name
        );
    }

    for row in ROWS {
        let tools = tree.run(&["--json", "tools"]).json();
        let tool = tools
            .as_array()
            .expect("tools")
            .iter()
            .filter_map(|t| t["name"].as_str())
            .find(|name| name.starts_with(&format!("mcp__s-{}__", row.name)))
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("no tool of s-{}", row.name));
        let run = tree.run(&["call", &tool, "--arg", "x=1"]);
        check(
            &format!("call {} (error message)", row.name),
            &run,
            &[format!("boom {}", row.shown)],
        );
        assert_eq!(run.code, 1, "{}", run.stderr);
    }
}
