//! `toolFilter` rules of REFERENCE §3.3.

use mcp_catalog::filter::{passes, pattern_matches};
use mcp_catalog::{MaterializeOptions, ServerTools, materialize};
use mcp_config::ToolFilter;
use mcp_transport::Tool;
use serde_json::json;

fn check(include: &[&str], exclude: &[&str], name: &str, expect: bool) {
    let filter = ToolFilter::default()
        .with_include(include.iter().map(|s| s.to_string()))
        .with_exclude(exclude.iter().map(|s| s.to_string()));
    assert_eq!(
        passes(&filter, name),
        expect,
        "include {include:?} exclude {exclude:?} name {name:?}"
    );
}

#[test]
fn filter_vectors() {
    check(&[], &[], "anything", true);
    check(&["read_*"], &[], "read_file", true);
    check(&["read_*"], &[], "write_file", false);
    check(&["read_file"], &[], "read_file", true);
    // without `*` a pattern is exact
    check(&["read"], &[], "read_file", false);
    // case-sensitive
    check(&["Read_*"], &[], "read_file", false);
    // any exclude match hides, also when included
    check(&["*"], &["*_file"], "read_file", false);
    check(&[], &["delete*"], "delete_all", false);
    check(&[], &["delete*"], "undelete", true);
    // `*` in the middle and several stars
    check(&["a*z"], &[], "abcz", true);
    check(&["a*z"], &[], "az", true);
    check(&["a*z"], &[], "abc", false);
    check(&["*b*d*"], &[], "abcde", true);
    check(&["*b*d*"], &[], "adcb", false);
    // `?` and `[` are literal
    check(&["a?c"], &[], "abc", false);
    check(&["a?c"], &[], "a?c", true);
    check(&["[x]"], &[], "[x]", true);
}

#[test]
fn overlapping_prefix_and_suffix_do_not_double_count() {
    assert!(!pattern_matches("ab*ba", "aba"));
    assert!(pattern_matches("ab*ba", "abba"));
    assert!(pattern_matches("", ""));
    assert!(!pattern_matches("", "x"));
    assert!(pattern_matches("*", ""));
}

#[test]
fn filtered_count_is_reported() {
    let tools: Vec<Tool> = ["read_a", "read_b", "write_a", "delete_a"]
        .into_iter()
        .map(|name| Tool {
            name: name.into(),
            title: None,
            description: None,
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: None,
            execution: None,
        })
        .collect();
    let listing = ServerTools::new("fs", tools).with_filter(
        ToolFilter::default()
            .with_include(vec!["read_*", "write_*"])
            .with_exclude(vec!["*_b"]),
    );
    let catalog = materialize(&[listing], &openclaw());
    let names: Vec<&str> = catalog.tools().iter().map(|t| t.name()).collect();
    assert_eq!(names, ["fs__read_a", "fs__write_a"]);
    assert_eq!(catalog.filtered().get("fs"), Some(&2));
    assert!(
        catalog
            .diagnostics()
            .iter()
            .any(|d| d.message == "toolFilter hid 2 tool(s)")
    );
}

#[test]
fn a_rebuild_reuses_the_schemas_of_unchanged_servers() {
    use mcp_catalog::{SchemaCache, materialize_cached};
    let listing = |server: &str, tool: &str| {
        ServerTools::new(
            server,
            vec![Tool {
                name: tool.into(),
                title: None,
                description: None,
                input_schema: json!({"type": "object", "properties": {"a": {"type": "string", "format": "uri"}}}),
                output_schema: None,
                annotations: None,
                execution: None,
            }],
        )
    };
    let a = listing("a", "t");
    let b = listing("b", "t");
    let mut cache = SchemaCache::default();
    let options = openclaw();
    let first = materialize_cached(&[a.clone(), b.clone()], &options, &mut cache);
    let changed_b = listing("b", "t");
    let second = materialize_cached(&[a.clone(), changed_b], &options, &mut cache);
    let schema_ptr = |catalog: &mcp_catalog::Catalog, name: &str| {
        catalog.get(name).unwrap().input_schema() as *const serde_json::Value
    };
    assert_eq!(
        schema_ptr(&first, "a__t"),
        schema_ptr(&second, "a__t"),
        "a is reused"
    );
    // b's new listing sends a's schema: prepared once for both, by
    // content, rather than again for b
    assert_eq!(
        schema_ptr(&second, "b__t"),
        schema_ptr(&second, "a__t"),
        "b shares a's prepared schema"
    );
    // the same bytes as without a cache
    assert_eq!(
        serde_json::to_string(&second).unwrap(),
        serde_json::to_string(&materialize(&[a, b], &options)).unwrap()
    );
}

/// These tests predate the `claw` default and are about other things
/// than naming: they keep the `server__tool` names they were written for.
fn openclaw() -> MaterializeOptions {
    MaterializeOptions::default().with_style(mcp_catalog::NamingStyle::OpenClaw)
}
