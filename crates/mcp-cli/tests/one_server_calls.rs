//! `call` connects only the server that owns the tool: with six servers
//! configured and five of them hanging in `initialize`, a call of the
//! sixth's tool starts none of the five (each writes its pid file as its
//! first act, so a started one leaves a file behind), cold and again warm.
//! Also a bare tool name with `--server`, an ad-hoc server from the
//! command line, `tools SERVER`, and a name no server owns refused before
//! anything starts.

#![allow(clippy::expect_used)]

mod support;

use std::path::Path;

use support::{Tree, check, test_server};

const HANGING: [&str; 5] = ["fetch", "git", "memory", "thinking", "time"];

/// Six approved servers: `fs` is the example server, the other five hang
/// at `initialize` after writing `<name>.pid` into `pids/`, with connect
/// timeouts far longer than any test runs.
fn six_servers() -> Tree {
    let tree = Tree::new("empty");
    let example = test_server("mcp-example-server");
    let hanging = test_server("mcp-misbehaving-server");
    let mut entries = vec![format!(
        "\"fs\": {{\"command\": {:?}, \"args\": []}}",
        example.display().to_string()
    )];
    for name in HANGING {
        let pid = tree.path(&format!("pids/{name}.pid"));
        entries.push(format!(
            "\"{name}\": {{\"command\": {:?}, \"args\": [\"--fault\", \"hang\", \"--at\", \"initialize\", \"--pid-file\", {:?}], \"connectionTimeoutMs\": 600000}}",
            hanging.display().to_string(),
            pid.display().to_string()
        ));
    }
    tree.write(
        "project/.mcp.json",
        &format!("{{\"mcpServers\": {{{}}}}}", entries.join(", ")),
    );
    tree.write(
        "home/.claude/settings.json",
        r#"{"enableAllProjectMcpServers": true}"#,
    );
    std::fs::create_dir_all(tree.path("pids")).expect("mkdir pids");
    tree
}

fn started(tree: &Tree) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(tree.path("pids"))
        .expect("read pids")
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_call_starts_only_the_server_that_owns_the_tool() {
    let tree = six_servers();
    for round in ["cold", "warm"] {
        let run = check(&tree, &["call", "mcp__fs__echo", "--arg", "text=hello"], 0);
        assert_eq!(run.stdout, "hello\n", "{round}: {}", run.stderr);
        assert_eq!(started(&tree), Vec::<String>::new(), "{round}");
    }
    // openclaw naming routes the same way.
    let run = check(
        &tree,
        &[
            "call", "fs__echo", "--naming", "openclaw", "--arg", "text=hi",
        ],
        0,
    );
    assert_eq!(run.stdout, "hi\n", "{}", run.stderr);
    assert_eq!(started(&tree), Vec::<String>::new());
}

#[test]
fn a_name_no_server_owns_is_refused_before_anything_starts() {
    let tree = six_servers();
    let run = check(&tree, &["call", "mcp__nowhere__echo"], 2);
    assert!(
        run.stderr
            .contains("no tool named `mcp__nowhere__echo`: catalog names are mcp__SERVER__TOOL"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("fetch, fs, git"), "{}", run.stderr);
    assert_eq!(started(&tree), Vec::<String>::new());
    // A name an owner does not have is refused after connecting only it.
    let run = check(&tree, &["call", "mcp__fs__ech"], 2);
    assert!(
        run.stderr.contains("did you mean mcp__fs__echo"),
        "{}",
        run.stderr
    );
    assert_eq!(started(&tree), Vec::<String>::new());
}

#[test]
fn server_narrows_the_catalog_and_takes_bare_tool_names() {
    let tree = six_servers();
    let run = check(&tree, &["tools", "fs", "--json"], 0);
    let names: Vec<String> = run
        .json()
        .as_array()
        .expect("a tool list")
        .iter()
        .map(|tool| tool["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(names.contains(&"mcp__fs__echo".to_owned()), "{names:?}");
    assert!(
        names.iter().all(|name| name.starts_with("mcp__fs__")),
        "{names:?}"
    );
    let run = check(
        &tree,
        &["call", "echo", "--server", "fs", "--arg", "text=bare"],
        0,
    );
    assert_eq!(run.stdout, "bare\n", "{}", run.stderr);
    assert_eq!(started(&tree), Vec::<String>::new());
    let run = check(&tree, &["tools", "--server", "nope"], 2);
    assert!(
        run.stderr.contains("no server named `nope`"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_adhoc_server_needs_no_config() {
    let tree = Tree::new("empty");
    let example = test_server("mcp-example-server");
    let example = example.to_str().expect("utf-8 path");
    let run = check(
        &tree,
        &["call", "echo", "--arg", "text=adhoc", "--", example],
        0,
    );
    assert_eq!(run.stdout, "adhoc\n", "{}", run.stderr);
    let run = check(
        &tree,
        &["tools", "--name", "demo", "--json", "--", example],
        0,
    );
    let first = run.json()[0]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(first.starts_with("mcp__demo__"), "{first}");
    let run = check(&tree, &["probe", "--json", "--", example], 0);
    assert_eq!(run.json()["servers"][0]["name"], "adhoc", "{}", run.stdout);
    // The ad-hoc entry goes through the loader's checks.
    let run = check(
        &tree,
        &["tools", "--env", "LD_PRELOAD=/tmp/x.so", "--", example],
        2,
    );
    assert!(run.stderr.contains("LD_PRELOAD"), "{}", run.stderr);
    assert!(!Path::new(&tree.path("project/.mcp.json")).exists());
}
