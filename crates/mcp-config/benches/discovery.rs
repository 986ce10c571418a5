//! Discovery + merge of a large tree: user, project and local scopes plus
//! 200 plugins of 5 servers each (target: under 20 ms per load), next to a
//! baseline that only reads and parses the same files.

// Benchmark set-up unwraps: a broken fixture should stop the run loudly.
#![allow(clippy::unwrap_used, missing_docs)]

use std::fmt::Write as _;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_config::{LoadOptions, load};

const PLUGINS: usize = 200;
const SERVERS_PER_PLUGIN: usize = 5;

fn servers(prefix: &str, count: usize) -> String {
    let mut out = String::from("{");
    for i in 0..count {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(
            out,
            r#""{prefix}-{i}": {{"command": "./bin/{prefix}", "args": ["--n", "{i}", "${{CLAUDE_PLUGIN_ROOT}}/data"], "env": {{"TOKEN": "${{TOKEN:-x}}"}}}}"#
        );
    }
    out.push('}');
    out
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn tree(root: &Path) -> LoadOptions {
    let home = root.join("home");
    let project = root.join("project");
    let user = r#"{"mcpServers": {"docs": {"type": "http", "url": "https://docs.example/mcp"}, "fs": {"command": "npx", "args": ["-y", "fs"]}}}"#;
    write(&home.join(".claude.json"), user);
    write(
        &home.join(".claude/settings.json"),
        r#"{"theme": "dark", "mcpServers": {"linear": {"type": "sse", "url": "https://l.example/sse"}}}"#,
    );
    write(
        &project.join(".mcp.json"),
        r#"{"mcpServers": {"example": {"command": "cargo", "args": ["run"]}, "fs": {"command": "npx", "args": ["-y", "fs", "."]}}}"#,
    );
    write(
        &project.join(".claude/settings.local.json"),
        r#"{"enabledMcpjsonServers": ["example"], "mcpServers": {"linear": {"enabled": false}}}"#,
    );
    let mut plugin_roots = Vec::new();
    for p in 0..PLUGINS {
        let plugin = root.join(format!("plugins/p{p}"));
        let name = format!("p{p}");
        if p % 2 == 0 {
            write(
                &plugin.join(".mcp.json"),
                &format!(
                    r#"{{"mcpServers": {}}}"#,
                    servers(&name, SERVERS_PER_PLUGIN)
                ),
            );
        } else {
            let manifest = format!(
                r#"{{"name": "{name}", "mcpServers": {}}}"#,
                servers(&name, SERVERS_PER_PLUGIN)
            );
            write(&plugin.join(".claude-plugin/plugin.json"), &manifest);
        }
        plugin_roots.push(plugin);
    }
    LoadOptions::default()
        .with_home(home)
        .with_project(project)
        .with_plugin_roots(plugin_roots)
}

fn discovery_and_merge(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let options = tree(dir.path());
    let loaded = load(&options);
    assert_eq!(
        loaded.servers.len(),
        PLUGINS * SERVERS_PER_PLUGIN + 3,
        "{:#?}",
        loaded.diagnostics
    );
    c.bench_function("load 3 scopes + 200 plugins x 5 servers", |b| {
        b.iter(|| load(&options))
    });
    // Baseline for a ratio measured in the same run (the machine is shared
    // and noisy): only reading and parsing the same files with serde_json.
    let files = loaded.files.clone();
    c.bench_function("baseline: read + serde_json parse of the same files", |b| {
        b.iter(|| {
            files
                .iter()
                .map(|f| {
                    let text = std::fs::read_to_string(f).unwrap();
                    serde_json::from_str::<serde_json::Value>(&text).unwrap()
                })
                .count()
        })
    });
}

criterion_group!(benches, discovery_and_merge);
criterion_main!(benches);
