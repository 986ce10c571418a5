//! `call --timeout 2` ends in about two seconds with a timeout error
//! naming its limit, whatever a server does to look busy: progress that
//! never advances (or advances for ever), a task whose status message
//! changes on every poll at either task generation. And a server that
//! answers `input_required` where the method or revision does not allow
//! it receives the request once, not once per round. The server is
//! `mcp-relentless-server` from the test crate, as an ad-hoc stdio server;
//! it logs every request it receives.

#![allow(clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use support::{Tree, test_server};

/// Far past any run that works, so a call that does not end fails its row
/// instead of hanging the suite.
const GIVE_UP: Duration = Duration::from_secs(30);

/// Runs `args` against the relentless server with `server_args`, logging
/// its requests to `log` in the tree; answers what the CLI printed and how
/// long it took.
fn run(tree: &Tree, args: &[&str], server_args: &[&str]) -> (support::Run, Duration) {
    let server = test_server("mcp-relentless-server");
    let log = tree.path("requests.log");
    let mut all: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    all.push("--".to_owned());
    all.push(server.display().to_string());
    all.extend(server_args.iter().map(|arg| (*arg).to_owned()));
    all.push("--log".to_owned());
    all.push(log.display().to_string());
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let started = Instant::now();
    let run = tree.run_with(&all, |command| {
        command.timeout(GIVE_UP);
    });
    (run, started.elapsed())
}

/// How many requests of `method` the server logged.
fn received(tree: &Tree, method: &str) -> usize {
    tree.read("requests.log")
        .lines()
        .filter(|line| *line == method)
        .count()
}

/// One row: `call --timeout 2` against the server running `pattern` at
/// `revision` fails after 2 s (and well before 2 s more) on its total.
fn check(pattern: &str, revision: &str) {
    let tree = Tree::new("empty");
    let (run, took) = run(
        &tree,
        &["call", "mcp__adhoc__work", "--timeout", "2"],
        &["--pattern", pattern, "--revision", revision],
    );
    let row = format!("{pattern} at {revision}: {took:?}\n{}", run.stderr);
    assert_eq!(run.code, 1, "{row}");
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(4),
        "{row}"
    );
    assert!(
        run.stderr.contains("tools/call timed out after")
            && run.stderr.contains("(its total limit of 2s)"),
        "{row}"
    );
    assert_eq!(received(&tree, "tools/call"), 1, "{row}");
}

#[test]
fn a_call_ends_at_its_timeout_however_busy_the_server_looks() {
    for (pattern, revision) in [
        ("stalled-progress", "2025-06-18"),
        ("stalled-progress", "2026-07-28"),
        ("advancing-progress", "2025-06-18"),
        ("chatty-task", "2025-11-25"),
        ("chatty-task", "2026-07-28"),
    ] {
        check(pattern, revision);
    }
}

#[test]
fn input_required_is_not_followed_where_it_is_not_allowed() {
    let rows: [(&[&str], &str, &str, &str); 4] = [
        (
            &["tools"],
            "tools/list",
            "2026-07-28",
            "allows only on tools/call",
        ),
        (
            &["tools"],
            "tools/list",
            "2024-11-05",
            "does not exist at 2024-11-05",
        ),
        (
            &["call", "mcp__adhoc__work"],
            "tools/call",
            "2024-11-05",
            "does not exist at 2024-11-05",
        ),
        (
            &["call", "mcp__adhoc__work"],
            "tools/call",
            "2025-11-25",
            "does not exist at 2025-11-25",
        ),
    ];
    for (args, method, revision, why) in rows {
        let tree = Tree::new("empty");
        let (run, _) = run(
            &tree,
            args,
            &[
                "--pattern",
                "input-loop",
                "--at",
                method,
                "--revision",
                revision,
            ],
        );
        let row = format!("{method} at {revision}\n{}", run.stderr);
        assert_eq!(run.code, 1, "{row}");
        assert!(
            run.stderr
                .contains(&format!("{method} was answered with input_required"))
                && run.stderr.contains(why),
            "{row}"
        );
        assert_eq!(received(&tree, method), 1, "{row}");
    }
    // Allowed, it is followed for the session's eight rounds; asking for
    // more inputs in a round than the cap, it is not answered at all.
    for (pattern, sent, why) in [
        ("input-loop", 9, "still asked for input after 8 rounds"),
        ("input-flood=2000", 1, "asked for more than 64 inputs"),
    ] {
        let tree = Tree::new("empty");
        let (run, _) = run(
            &tree,
            &["call", "mcp__adhoc__work"],
            &[
                "--pattern",
                pattern,
                "--at",
                "tools/call",
                "--revision",
                "2026-07-28",
            ],
        );
        assert_eq!(run.code, 1, "{pattern}\n{}", run.stderr);
        assert!(run.stderr.contains(why), "{pattern}\n{}", run.stderr);
        assert_eq!(received(&tree, "tools/call"), sent, "{pattern}");
    }
}
