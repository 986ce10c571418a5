//! A hostile server's listings through the built binary: invalid entries
//! are summarised in one warning however many there are, every entry
//! counts toward the item cap (one page or many, valid or not), and a
//! listing the server does not implement is a note while the rest of the
//! verb goes on; any other failure of a listing is an error for that
//! listing only. The server is `mcp-listing-server` (the integration test
//! crate's), scripted per row.

#![allow(clippy::expect_used)]

mod support;

use support::{Tree, test_server};

struct Row {
    name: &'static str,
    /// The arguments of `mcp-listing-server`.
    server: &'static [&'static str],
    /// The verb and its arguments (the server is named `s`).
    verb: &'static [&'static str],
    code: i32,
    stdout: &'static [&'static str],
    stderr: &'static [&'static str],
    /// Most lines stderr may hold.
    stderr_lines: usize,
}

const OVER: &str = "tools/list: more than 10000 items";

const ROWS: &[Row] = &[
    Row {
        name: "all invalid, one kind",
        server: &["--tools", "no-name*5000"],
        verb: &["tools"],
        code: 0,
        stdout: &["no tools"],
        stderr: &[
            "left out 5000 invalid tools/list entries: entry 0: missing field `name`",
            "; and 4997 more",
        ],
        stderr_lines: 3,
    },
    Row {
        name: "invalid of several kinds among valid tools",
        server: &[
            "--tools",
            "name-type+not-object+title-type*2000+no-name*2000+name-type*3998+valid*3",
        ],
        verb: &["tools"],
        code: 0,
        stdout: &["mcp__s__t0_0", "mcp__s__t0_2"],
        stderr: &[
            "left out 8000 invalid tools/list entries: entry 0: invalid type: integer `0`",
            r#"entry 1: invalid type: string "s0""#,
            "entry 2: invalid type: integer `0`",
            "; and 7997 more",
        ],
        stderr_lines: 3,
    },
    Row {
        name: "probe shows the same one warning",
        server: &["--tools", "valid*2+no-name*9000"],
        verb: &["probe"],
        code: 0,
        stdout: &["tools 2,"],
        stderr: &[
            "left out 9000 invalid tools/list entries",
            "; and 8997 more",
        ],
        stderr_lines: 2,
    },
    Row {
        name: "invalid entries over pages make one warning",
        server: &["--tools", "no-name*3000+valid/title-type*3000+valid"],
        verb: &["tools"],
        code: 0,
        stdout: &["mcp__s__t0_0", "mcp__s__t1_0"],
        stderr: &[
            "left out 6000 invalid tools/list entries",
            "; and 5997 more",
        ],
        stderr_lines: 3,
    },
    Row {
        name: "valid, one page far past the cap",
        server: &["--tools", "valid*150000"],
        verb: &["tools"],
        code: 1,
        stdout: &["no tools"],
        stderr: &[OVER],
        stderr_lines: 4,
    },
    Row {
        name: "invalid, one page past the cap",
        server: &["--tools", "no-name*100000"],
        verb: &["tools"],
        code: 1,
        stdout: &["no tools"],
        stderr: &[OVER],
        stderr_lines: 4,
    },
    Row {
        name: "mixed, one page past the cap",
        server: &["--tools", "valid*6000+not-object*4001"],
        verb: &["probe"],
        code: 1,
        stdout: &[OVER],
        stderr: &[],
        stderr_lines: 2,
    },
    Row {
        name: "pages adding up past the cap",
        server: &["--tools", "valid*4000/no-name*4000/valid*2001"],
        verb: &["tools"],
        code: 1,
        stdout: &["no tools"],
        stderr: &[OVER],
        stderr_lines: 4,
    },
    Row {
        name: "templates not implemented",
        server: &["--resources", "valid*2", "--templates", "error=-32601"],
        verb: &["resources", "s"],
        code: 0,
        stdout: &["file:///r0_0", "file:///r0_1"],
        stderr: &[
            r#"note: server "s": resources/templates/list is not implemented (resources/templates/list failed): nothing listed"#,
        ],
        stderr_lines: 1,
    },
    Row {
        name: "resources not implemented, templates listed",
        server: &["--resources", "error=-32601", "--templates", "valid*1"],
        verb: &["resources", "s"],
        code: 0,
        stdout: &["file:///t0_0/{x}"],
        stderr: &[r#"note: server "s": resources/list is not implemented"#],
        stderr_lines: 1,
    },
    Row {
        name: "neither implemented",
        server: &["--resources", "error=-32601", "--templates", "error=-32601"],
        verb: &["resources", "s"],
        code: 0,
        stdout: &["no resources"],
        stderr: &[
            r#"note: server "s": resources/list is not implemented"#,
            r#"note: server "s": resources/templates/list is not implemented"#,
        ],
        stderr_lines: 2,
    },
    Row {
        name: "prompts not implemented",
        server: &["--prompts", "error=-32601"],
        verb: &["prompts", "s"],
        code: 0,
        stdout: &["no prompts"],
        stderr: &[r#"note: server "s": prompts/list is not implemented"#],
        stderr_lines: 1,
    },
    Row {
        name: "templates fail inside the server",
        server: &["--resources", "valid*2", "--templates", "error=-32603"],
        verb: &["resources", "s"],
        code: 1,
        stdout: &["file:///r0_0", "file:///r0_1"],
        stderr: &[
            r#"error: server "s": resources/templates/list failed"#,
            "(code -32603)",
        ],
        stderr_lines: 1,
    },
    Row {
        name: "prompts refused",
        server: &["--prompts", "error=-32602"],
        verb: &["prompts", "s"],
        code: 1,
        stdout: &[],
        stderr: &[r#"error: server "s": prompts/list failed"#, "(code -32602)"],
        stderr_lines: 1,
    },
];

#[track_caller]
fn check(server: &std::path::Path, row: &Row) {
    let tree = Tree::new("empty");
    tree.write(
        "project/.mcp.json",
        &serde_json::json!({"mcpServers": {"s": {"command": server, "args": row.server}}})
            .to_string(),
    );
    tree.write(
        "home/.claude/settings.json",
        r#"{"enableAllProjectMcpServers": true}"#,
    );
    let run = tree.run(row.verb);
    let what = format!(
        "{}: `mcp-cli {}`\nstdout:\n{}\nstderr:\n{}",
        row.name,
        row.verb.join(" "),
        run.stdout,
        run.stderr
    );
    assert_eq!(run.code, row.code, "{what}");
    for expect in row.stdout {
        assert!(
            run.stdout.contains(expect),
            "{what}\nstdout should hold {expect:?}"
        );
    }
    for expect in row.stderr {
        assert!(
            run.stderr.contains(expect),
            "{what}\nstderr should hold {expect:?}"
        );
    }
    assert!(
        run.stderr.lines().count() <= row.stderr_lines,
        "{what}\nat most {} lines on stderr",
        row.stderr_lines
    );
}

#[test]
fn hostile_listings_are_bounded_summarised_and_optional_ones_are_notes() {
    let server = test_server("mcp-listing-server");
    for row in ROWS {
        check(&server, row);
    }
}
