//! What the CLI answers when a server asks something of it, run as the
//! built binary: roots, elicitation declined without a terminal and
//! answered on one (a pseudo-terminal stands in for the user), and the
//! sampling refusal. Against the workspace's example server in both
//! protocol generations (2025-11-25 server→client requests, 2026-07-28
//! `input_required` rounds), `@modelcontextprotocol/server-everything`, and
//! the TypeScript SDK 2.x server's input requests.
//!
//! The peer tests are ignored by a plain `cargo test` (they need
//! `cargo xtask peers`); run with `-- --include-ignored`, a missing peer
//! fails them with the command that installs it.

#![allow(clippy::expect_used)]

mod support;

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use support::{Run, Tree, test_server};

use mcp_test_peers as peers;

/// A project with one approved stdio server `name` started as
/// `command args`.
fn project(name: &str, command: &Path, args: &[&str]) -> Tree {
    let tree = Tree::new("empty");
    let entry = serde_json::json!({"command": command, "args": args});
    tree.write(
        "project/.mcp.json",
        &serde_json::json!({"mcpServers": {name: entry}}).to_string(),
    );
    tree.write(
        "home/.claude/settings.json",
        r#"{"enableAllProjectMcpServers": true}"#,
    );
    tree
}

fn example() -> Tree {
    project("ex", &test_server("mcp-example-server"), &[])
}

/// Runs `args` with an empty stdin (not a terminal), expecting status 0.
#[track_caller]
fn ok(tree: &Tree, args: &[&str]) -> Run {
    let run = tree.run_with(args, |command| {
        command.write_stdin("");
    });
    assert_eq!(
        run.code,
        0,
        "`mcp-cli {}`\nstdout:\n{}\nstderr:\n{}",
        args.join(" "),
        run.stdout,
        run.stderr
    );
    run
}

/// Both generations of the example server: the 2025-11-25 request and the
/// 2026-07-28 input request reach the same answers.
const REVISIONS: [&[&str]; 2] = [&["--protocol", "2025-11-25"], &[]];

#[test]
fn servers_get_the_project_folder_or_the_root_flags_as_roots() {
    let tree = example();
    for revision in REVISIONS {
        let run = ok(&tree, &[revision, &["call", "mcp__ex__ask_roots"]].concat());
        let answer: serde_json::Value =
            serde_json::from_str(run.stdout.trim()).expect("roots JSON");
        assert_eq!(
            answer,
            serde_json::json!({"roots": [{"uri": "file://[ROOT]/project", "name": "project"}]}),
            "{revision:?}"
        );
    }

    tree.write("spaced dir/x", "");
    tree.write("other/x", "");
    let spaced = tree.path("spaced dir").display().to_string();
    // A path with `..` is given canonical.
    let other = tree.path("project/../other").display().to_string();
    for revision in REVISIONS {
        let args = [
            revision,
            &[
                "--root",
                &spaced,
                "--root",
                &other,
                "call",
                "mcp__ex__ask_roots",
            ],
        ]
        .concat();
        let run = ok(&tree, &args);
        let answer: serde_json::Value =
            serde_json::from_str(run.stdout.trim()).expect("roots JSON");
        assert_eq!(
            answer,
            serde_json::json!({"roots": [
                {"uri": "file://[ROOT]/spaced%20dir", "name": "spaced dir"},
                {"uri": "file://[ROOT]/other", "name": "other"},
            ]}),
            "{revision:?}"
        );
    }

    let run = tree.run(&["--root", "no/such/dir", "call", "mcp__ex__ask_roots"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("--root no/such/dir"), "{}", run.stderr);
}

#[test]
fn without_a_terminal_an_elicitation_is_declined_with_a_note() {
    let tree = example();
    for revision in REVISIONS {
        let run = ok(&tree, &[revision, &["call", "mcp__ex__elicit"]].concat());
        assert!(
            run.stdout.ends_with("\nelicitation decline\n"),
            "{revision:?}: {}",
            run.stdout
        );
        assert!(
            run.stderr.contains(
                "note: server \"ex\" asked for input (a form: \"What is your name? (question 1 of 1)\"); \
                 declined: stdin and stderr are not a terminal to ask on"
            ),
            "{revision:?}: {}",
            run.stderr
        );
    }
}

#[test]
fn on_a_terminal_the_form_is_asked_field_by_field() {
    let tree = example();
    for revision in REVISIONS {
        // Two rounds: the second question comes after the first answer.
        let args = [revision, &["call", "mcp__ex__elicit", "--arg", "rounds:=2"]].concat();
        let run = on_terminal(
            &tree,
            &args,
            &[
                (
                    "Server \"ex\" asks for input:\n  What is your name? (question 1 of 2)",
                    None,
                ),
                ("Name (required)\n  text> ", Some("")),
                ("an answer is required\n  text> ", Some("Ada")),
                ("Send it? [Y/n] (n asks again) ", Some("y")),
                ("question 2 of 2", None),
                ("text> ", Some("Grace")),
                ("Send it?", Some("")),
            ],
        );
        assert!(
            run.stdout.ends_with("\nhello Grace\n"),
            "{revision:?}: {run:?}"
        );

        // One round: the example server asks its next question whatever
        // the answer to the last was.
        let args = [revision, &["call", "mcp__ex__elicit"]].concat();
        let run = on_terminal(&tree, &args, &[("text> ", Some(":decline"))]);
        assert!(
            run.stdout.ends_with("\nelicitation decline\n"),
            "{revision:?}: {run:?}"
        );
        let run = on_terminal(&tree, &args, &[("text> ", Some(":cancel"))]);
        assert!(
            run.stdout.ends_with("\nelicitation cancel\n"),
            "{revision:?}: {run:?}"
        );
    }
}

/// Runs the binary with stdin and stderr on a pseudo-terminal (stdout a
/// pipe): each time the terminal has shown `expect` (after what the
/// previous step matched), `answer`, if any, is typed with Enter.
#[track_caller]
fn on_terminal(tree: &Tree, args: &[&str], steps: &[(&str, Option<&str>)]) -> Run {
    on_terminal_with(tree, args, steps, &[])
}

#[track_caller]
fn on_terminal_with(
    tree: &Tree,
    args: &[&str],
    steps: &[(&str, Option<&str>)],
    env: &[(&str, String)],
) -> Run {
    let pty = nix::pty::openpty(None, None).expect("openpty");
    let mut command = tree.std_command();
    command.envs(env.iter().map(|(key, value)| (key, value)));
    command
        .args(args)
        .stdin(pty.slave.try_clone().expect("dup"))
        .stderr(pty.slave.try_clone().expect("dup"))
        .stdout(std::process::Stdio::piped());
    let mut child = command.spawn().expect("run mcp-cli");
    drop(command);
    drop(pty.slave);
    let mut master = std::fs::File::from(pty.master);
    let shown = Arc::new(Mutex::new(String::new()));
    let reader = {
        let mut master = master.try_clone().expect("dup");
        let shown = Arc::clone(&shown);
        std::thread::spawn(move || {
            let mut buffer = [0_u8; 4096];
            // Ends with EIO once the child has closed the terminal.
            while let Ok(n @ 1..) = master.read(&mut buffer) {
                let text = String::from_utf8_lossy(&buffer[..n]).replace('\r', "");
                shown
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push_str(&text);
            }
        })
    };
    let mut seen = 0;
    for (expect, answer) in steps {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let text = shown.lock().unwrap_or_else(|e| e.into_inner()).clone();
            if let Some(at) = text[seen..].find(expect) {
                seen += at + expect.len();
                break;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("the terminal never showed {expect:?}; it showed:\n{text}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Some(answer) = answer {
            master
                .write_all(format!("{answer}\n").as_bytes())
                .expect("type");
        }
    }
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut stdout)
        .expect("read stdout");
    let status = child.wait().expect("wait");
    drop(master);
    let _ = reader.join();
    let stderr = shown.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Run {
        code: status.code().unwrap_or(-1),
        stdout: stdout.replace(&tree.root().display().to_string(), "[ROOT]"),
        stderr,
    }
}

fn everything() -> Tree {
    let (node, script) = (peers::node22(), peers::everything_script());
    project(
        "everything",
        &node,
        &[&script.display().to_string(), "stdio"],
    )
}

#[test]
#[ignore = "needs cargo xtask peers"]
fn server_everything_gets_roots_and_elicitation_but_no_sampling() {
    let tree = everything();
    let run = ok(&tree, &["--json", "tools"]);
    let names: Vec<String> = run
        .json()
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect();
    for offered in [
        "mcp__everything__get-roots-list",
        "mcp__everything__trigger-elicitation-request",
        "mcp__everything__trigger-url-elicitation",
    ] {
        assert!(
            names.contains(&offered.to_owned()),
            "{offered} not in {names:?}"
        );
    }
    // The client declares no sampling, so the server offers no tool that
    // needs it (see `host.rs`: a clearer answer than a tool that always fails).
    assert!(
        !names.iter().any(|name| name.contains("sampling")),
        "{names:?}"
    );

    let run = ok(&tree, &["call", "mcp__everything__get-roots-list"]);
    assert!(
        run.stdout
            .contains("1. project\n   URI: file://[ROOT]/project"),
        "{}",
        run.stdout
    );

    let run = ok(
        &tree,
        &["call", "mcp__everything__trigger-elicitation-request"],
    );
    assert!(run.stdout.contains("User declined"), "{}", run.stdout);
    assert!(
        run.stderr.contains("note: server \"everything\" asked for input (a form: \"Please provide inputs for the following fields:\"); declined"),
        "{}",
        run.stderr
    );

    let run = ok(
        &tree,
        &[
            "call",
            "mcp__everything__trigger-url-elicitation",
            "--arg",
            "url=https://example.com/connect",
        ],
    );
    assert!(
        run.stdout.contains("User declined to open the URL"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr
            .contains("note: server \"everything\" asked for input (open a url: "),
        "{}",
        run.stderr
    );
}

#[test]
#[ignore = "needs cargo xtask peers"]
fn server_everything_url_elicitation_opens_the_browser_after_consent() {
    let tree = everything();
    let report = tree.path("browser.json");
    let run = on_terminal_with(
        &tree,
        &[
            "call",
            "mcp__everything__trigger-url-elicitation",
            "--arg",
            "url=https://example.com/connect?x=1",
        ],
        &[
            (
                "url:  https://example.com/connect?x=1\n  host: example.com",
                None,
            ),
            (
                "Open it in your browser? [y/N] (:cancel cancels) ",
                Some("y"),
            ),
            ("(opened in your browser)", None),
        ],
        &[
            (
                "BROWSER",
                test_server("mcp-argv-report").display().to_string(),
            ),
            ("ARGV_REPORT", report.display().to_string()),
        ],
    );
    assert!(
        run.stdout
            .contains("User completed the URL elicitation flow"),
        "{run:?}"
    );
    let opened: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("the browser ran"))
            .expect("report");
    assert_eq!(
        opened["args"],
        serde_json::json!(["https://example.com/connect?x=1"])
    );
}

#[test]
#[ignore = "needs cargo xtask peers"]
fn the_typescript_sdk_s_input_requests_are_answered_by_the_same_handler() {
    let script = peers::ts_server_script();
    let tree = project(
        "ts",
        &peers::node22(),
        &[&script.display().to_string(), "stdio"],
    );
    // 2026-07-28: an input_required result; before, elicitation/create.
    for revision in REVISIONS {
        let run = ok(&tree, &[revision, &["call", "mcp__ts__confirm"]].concat());
        assert_eq!(run.stdout, "declined\n", "{revision:?}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("server \"ts\" asked for input (a form: \"Confirm?\")"),
            "{}",
            run.stderr
        );

        let args = [revision, &["call", "mcp__ts__confirm"]].concat();
        let run = on_terminal(
            &tree,
            &args,
            &[
                ("confirm (required): Go ahead?", None),
                ("y/n> ", Some("maybe")),
                ("answer y or n; try again\n  y/n> ", Some("yes")),
                ("Send it?", Some("y")),
            ],
        );
        assert_eq!(
            run.stdout, "confirmed: true\n",
            "{revision:?}: {}",
            run.stderr
        );
    }
}
