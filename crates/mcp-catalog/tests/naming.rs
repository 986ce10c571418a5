//! Every naming vector of REFERENCE §3.2, through one `check` helper.

use mcp_catalog::NamingStyle;
use mcp_catalog::tools::{
    NameAllocator, ServerPrefix, is_valid_name, normalize_name_for_mcp,
    normalize_server_name_for_mcp, openclaw_fragment,
};
use mcp_catalog::{MaterializeOptions, ServerTools, materialize};
use mcp_config::Level;
use mcp_transport::Tool;
use serde_json::json;

fn tool(name: &str) -> Tool {
    Tool {
        name: name.to_owned(),
        title: None,
        description: Some(format!("does {name}")),
        input_schema: json!({"type": "object"}),
        output_schema: None,
        annotations: None,
        execution: None,
    }
}

fn server(name: &str, tools: &[&str]) -> ServerTools {
    ServerTools::new(
        name.to_owned(),
        tools.iter().map(|t| tool(t)).collect::<Vec<_>>(),
    )
}

/// Materialises `servers` in `style` with `reserved` native names and
/// compares the (server, raw tool) → name mapping with `expect`.
fn check(
    style: NamingStyle,
    reserved: &[&str],
    servers: &[(&str, &[&str])],
    expect: &[(&str, &str, &str)],
) {
    let listings: Vec<ServerTools> = servers.iter().map(|(s, t)| server(s, t)).collect();
    let options = MaterializeOptions::default()
        .with_style(style)
        .with_reserved_names(reserved.iter().copied());
    let catalog = materialize(&listings, &options);
    for (server, raw, name) in expect {
        let found = catalog
            .tools()
            .iter()
            .find(|t| {
                t.origin().server == *server
                    && matches!(&t.origin().target, mcp_catalog::ToolTarget::Tool { name } if name == raw)
            })
            .unwrap_or_else(|| panic!("no tool {raw:?} of {server:?} in {:#?}", catalog.report()));
        assert_eq!(found.name(), *name, "name of {server:?}/{raw:?}");
        assert!(
            is_valid_name(found.name()),
            "{:?} is not a valid name",
            found.name()
        );
    }
}

#[test]
fn openclaw_plain() {
    check(
        NamingStyle::OpenClaw,
        &[],
        &[("github", &["create_issue", "search-code"])],
        &[
            ("github", "create_issue", "github__create_issue"),
            ("github", "search-code", "github__search-code"),
        ],
    );
}

#[test]
fn openclaw_colliding_server_gets_suffix() {
    check(
        NamingStyle::OpenClaw,
        &[],
        &[("vigil-harbor", &["scan"]), ("vigil:harbor", &["scan"])],
        &[
            ("vigil-harbor", "scan", "vigil-harbor__scan"),
            ("vigil:harbor", "scan", "vigil-harbor-2__scan"),
        ],
    );
}

#[test]
fn openclaw_numeric_server_and_tool_get_prefixes() {
    check(
        NamingStyle::OpenClaw,
        &[],
        &[("12306", &["2024-query", "ok"])],
        &[
            ("12306", "2024-query", "mcp-12306__tool-2024-query"),
            ("12306", "ok", "mcp-12306__ok"),
        ],
    );
    // An empty fragment still becomes `tool`, but a tool with an empty
    // name is refused before naming (tests/hostile.rs).
    assert_eq!(openclaw_fragment("", "tool"), "tool");
    assert_eq!(openclaw_fragment("", "mcp"), "mcp");
}

#[test]
fn openclaw_empty_server_becomes_mcp() {
    check(
        NamingStyle::OpenClaw,
        &[],
        &[("", &["x"])],
        &[("", "x", "mcp__x")],
    );
}

#[test]
fn openclaw_reserved_name_gets_suffix() {
    check(
        NamingStyle::OpenClaw,
        &["memory__status"],
        &[("memory", &["status"])],
        &[("memory", "status", "memory__status-2")],
    );
}

#[test]
fn openclaw_reserved_is_case_insensitive() {
    check(
        NamingStyle::OpenClaw,
        &["Memory__Status"],
        &[("memory", &["status"])],
        &[("memory", "status", "memory__status-2")],
    );
}

#[test]
fn openclaw_case_insensitive_collision_between_tools() {
    check(
        NamingStyle::OpenClaw,
        &[],
        &[("s", &["Read", "read"])],
        &[("s", "Read", "s__Read"), ("s", "read", "s__read-2")],
    );
}

#[test]
fn openclaw_sanitises_with_dash() {
    check(
        NamingStyle::OpenClaw,
        &[],
        &[("my server", &["read file", "naïve.tool"])],
        &[
            ("my server", "read file", "my-server__read-file"),
            ("my server", "naïve.tool", "my-server__na-ve-tool"),
        ],
    );
}

#[test]
fn openclaw_long_names_stay_within_limits() {
    let long_tool = "t".repeat(200);
    let long_server = "s".repeat(50);
    let expected = format!("{}__{}", "s".repeat(30), "t".repeat(32));
    check(
        NamingStyle::OpenClaw,
        &[],
        &[(long_server.as_str(), &[long_tool.as_str()])],
        &[(long_server.as_str(), long_tool.as_str(), expected.as_str())],
    );
}

#[test]
fn openclaw_long_collision_trims_base_to_fit_suffix() {
    let a = format!("{}a", "t".repeat(100));
    let b = format!("{}b", "t".repeat(100));
    let first = format!("s__{}", "t".repeat(61));
    let second = format!("s__{}-2", "t".repeat(59));
    check(
        NamingStyle::OpenClaw,
        &[],
        &[("s", &[a.as_str(), b.as_str()])],
        &[
            ("s", a.as_str(), first.as_str()),
            ("s", b.as_str(), second.as_str()),
        ],
    );
}

#[test]
fn claw_normalize_vectors() {
    for (input, expect) in [
        ("github.com", "github_com"),
        ("tool name!", "tool_name_"),
        ("ok-name_1", "ok-name_1"),
    ] {
        assert_eq!(normalize_name_for_mcp(input), expect, "{input:?}");
    }
    for (input, expect) in [
        ("claude.ai Example   Server!!", "claude_ai_Example_Server"),
        ("github.com", "github_com"),
        // the collapse applies only to claude.ai connectors
        ("a  b", "a__b"),
    ] {
        assert_eq!(normalize_server_name_for_mcp(input), expect, "{input:?}");
    }
}

#[test]
fn claw_full_names() {
    check(
        NamingStyle::Claw,
        &[],
        &[
            ("claude.ai Example Server", &["weather tool"]),
            ("github.com", &["tool name!"]),
        ],
        &[
            (
                "claude.ai Example Server",
                "weather tool",
                "mcp__claude_ai_Example_Server__weather_tool",
            ),
            ("github.com", "tool name!", "mcp__github_com__tool_name_"),
        ],
    );
}

#[test]
fn claw_long_name_gets_stable_hash_suffix() {
    let long_tool = "x".repeat(200);
    let listings = vec![server("srv", &[long_tool.as_str()])];
    let options = MaterializeOptions::default().with_style(NamingStyle::Claw);
    let first = materialize(&listings, &options);
    let second = materialize(&listings, &options);
    let name = first.tools()[0].name();
    assert_eq!(name.len(), 64);
    assert!(name.starts_with("mcp__srv__xxx"));
    assert!(is_valid_name(name));
    let suffix = &name[55..];
    assert!(
        suffix.starts_with('_') && suffix[1..].chars().all(|c| c.is_ascii_hexdigit()),
        "{name}"
    );
    assert_eq!(name, second.tools()[0].name(), "the suffix is stable");
}

#[test]
fn claw_prefix_collision_is_an_error_not_an_overwrite() {
    let listings = vec![server("my.server", &["a"]), server("my server", &["b"])];
    let options = MaterializeOptions::default().with_style(NamingStyle::Claw);
    let catalog = materialize(&listings, &options);
    // "my server" sorts first and keeps the prefix
    let names: Vec<&str> = catalog.tools().iter().map(|t| t.name()).collect();
    assert_eq!(names, ["mcp__my_server__b"]);
    let error = catalog
        .diagnostics()
        .iter()
        .find(|d| d.level == Level::Error)
        .expect("an error diagnostic");
    assert_eq!(error.server, "my.server");
    assert!(error.message.contains("my server"), "{}", error.message);
}

#[test]
fn claw_tool_collision_within_a_server_is_renamed_and_reported() {
    let listings = vec![server("s", &["a b", "a_b"])];
    let options = MaterializeOptions::default().with_style(NamingStyle::Claw);
    let catalog = materialize(&listings, &options);
    let names: Vec<&str> = catalog.tools().iter().map(|t| t.name()).collect();
    assert_eq!(names.len(), 2);
    assert!(names.contains(&"mcp__s__a_b"));
    assert!(names.iter().all(|n| is_valid_name(n)));
    assert!(
        catalog
            .diagnostics()
            .iter()
            .any(|d| d.level == Level::Warning && d.message.contains("already taken"))
    );
}

#[test]
fn claw_prefix_allocator_reports_owner() {
    let mut allocator = NameAllocator::new(NamingStyle::Claw, []);
    assert_eq!(
        allocator.server_prefix("a.b"),
        ServerPrefix::Assigned("mcp__a_b__".into())
    );
    assert_eq!(
        allocator.server_prefix("a b"),
        ServerPrefix::Conflict {
            prefix: "mcp__a_b__".into(),
            taken_by: "a.b".into()
        }
    );
}

#[test]
fn style_names_parse() {
    assert_eq!(NamingStyle::parse("openclaw"), Some(NamingStyle::OpenClaw));
    assert_eq!(NamingStyle::parse("claw"), Some(NamingStyle::Claw));
    assert_eq!(NamingStyle::parse("CLAW"), None);
}
