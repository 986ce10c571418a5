//! The merged result of the fixture tree, which exercises every layer and
//! precedence rule, tombstones, invalid overrides, approval, signature
//! dedupe and all three plugin formats.

// Test helpers outside `#[test]` functions unwrap too.
#![allow(clippy::unwrap_used)]

mod common;

use mcp_config::diagnostic_line;
use mcp_config::{Approval, Scope, TransportConfig, load};
use serde_json::json;

#[test]
fn fixture_tree_merges_as_documented() {
    let fixture = common::Fixture::new();
    let loaded = load(&fixture.options());
    let rendered = json!({
        "servers": loaded.servers.iter().map(|s| json!({
            "name": s.config.name,
            "scope": s.scope,
            "source": s.source,
            "plugin": s.plugin,
            "approval": s.approval,
            "config": s.config,
        })).collect::<Vec<_>>(),
        "settings": loaded.settings,
        "sessionIdleTtlMs": loaded.session_idle_ttl.as_millis() as u64,
        "plugins": loaded.plugins,
        "files": loaded.files,
        "diagnostics": loaded.diagnostics.iter().map(diagnostic_line).collect::<Vec<_>>(),
    });
    // Keys sorted, so the snapshot holds whether or not the build keeps
    // insertion order (serde_json's `preserve_order`, the host's choice).
    let text = fixture.redact(&serde_json::to_string_pretty(&sorted(rendered)).unwrap());
    insta::assert_snapshot!("fixture_tree", text);
}

#[test]
fn precedence_rules_hold_on_the_fixture_tree() {
    let fixture = common::Fixture::new();
    let loaded = load(&fixture.options());
    let command = |name: &str| match &loaded.server(name).map(|s| &s.config.transport) {
        Some(TransportConfig::Stdio(s)) => Some(s.command.clone()),
        _ => None,
    };
    // local (projects[path] in ~/.claude.json) beats project, user, openclaw
    assert_eq!(
        command("everywhere").as_deref(),
        Some("local-claude-json-wins")
    );
    // later file of a layer wins
    assert_eq!(
        command("user-replaced").as_deref(),
        Some("from-settings-json")
    );
    // configured beats plugin by name
    assert_eq!(
        command("over-plugin").as_deref(),
        Some("user-wins-over-plugin")
    );
    // tombstones and invalid overrides remove lower entries
    for gone in [
        "tombstoned",
        "user-only",
        "broken",
        "removed",
        "dup-of-docs",
        "same-endpoint",
        "escaper",
    ] {
        assert!(loaded.server(gone).is_none(), "{gone} must not be loaded");
    }
    // other projects' servers and disabled plugins are not read
    assert!(loaded.server("not-this-project").is_none());
    assert!(loaded.server("never-loaded").is_none());
    // approval: only user/local settings count
    let approval = |name: &str| loaded.server(name).map(|s| s.approval);
    assert_eq!(approval("approved"), Some(Approval::Approved));
    assert_eq!(approval("denied"), Some(Approval::Denied));
    assert_eq!(approval("pending"), Some(Approval::Pending));
    assert_eq!(
        loaded.server("disabled-full").map(|s| s.config.enabled),
        Some(false)
    );
    assert_eq!(
        loaded.server("installed-ws").map(|s| s.scope),
        Some(Scope::Plugin)
    );
    assert!(loaded.raw_entries["everywhere"]["command"] == "local-claude-json-wins");

    let mut trusted = fixture.options();
    trusted.trust_project_servers = true;
    let loaded = load(&trusted);
    assert_eq!(
        loaded.server("pending").map(|s| s.approval),
        Some(Approval::Approved)
    );
    assert_eq!(
        loaded.server("denied").map(|s| s.approval),
        Some(Approval::Denied)
    );
}

#[test]
fn malformed_file_does_not_stop_the_others() {
    let fixture = common::Fixture::new();
    std::fs::write(
        fixture.root.join("project/.mcp.json"),
        "{\"mcpServers\": {\"a\": ",
    )
    .unwrap();
    let loaded = load(&fixture.options());
    assert!(loaded.server("everywhere").is_some());
    assert!(loaded.server("docs").is_some());
    assert!(loaded.server("approved").is_none());
    let errors: Vec<_> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.file.as_deref() == Some(&fixture.root.join("project/.mcp.json")))
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].line.is_some());
}

/// A project file that is a FIFO, a link to an endless device or simply
/// huge is refused with one error naming it; loading neither blocks nor
/// reads without bound, and every other source still loads.
#[cfg(unix)]
#[test]
fn hostile_project_files_are_refused_without_blocking_or_unbounded_reads() {
    let check = |make: &dyn Fn(&std::path::Path), expected: &str| {
        let fixture = common::Fixture::new();
        let path = fixture.root.join("project/.mcp.json");
        std::fs::remove_file(&path).unwrap();
        make(&path);
        let loaded = load(&fixture.options());
        assert!(loaded.server("everywhere").is_some(), "{expected}");
        assert!(loaded.server("docs").is_some(), "{expected}");
        let errors: Vec<_> = loaded
            .diagnostics
            .iter()
            .filter(|d| d.file.as_deref() == Some(path.as_path()))
            .collect();
        assert_eq!(errors.len(), 1, "{expected}: {errors:?}");
        assert!(errors[0].message.contains(expected), "{errors:?}");
    };
    check(
        &|path| {
            let made = std::process::Command::new("mkfifo")
                .arg(path)
                .status()
                .unwrap();
            assert!(made.success());
        },
        "not a regular file",
    );
    check(
        &|path| std::os::unix::fs::symlink("/dev/zero", path).unwrap(),
        "not a regular file",
    );
    check(
        &|path| {
            let file = std::fs::File::create(path).unwrap();
            file.set_len(mcp_config::limits::MAX_CONFIG_FILE_BYTES as u64 + 1)
                .unwrap();
        },
        "file is larger than 8 MiB",
    );
}

#[cfg(unix)]
#[test]
fn symlinks_leaving_the_plugin_root_are_refused() {
    let fixture = common::Fixture::new();
    let plugin = fixture.root.join("plugins/linked");
    std::fs::create_dir_all(&plugin).unwrap();
    std::fs::write(fixture.root.join("outside.sh"), "").unwrap();
    std::os::unix::fs::symlink(fixture.root.join("outside.sh"), plugin.join("run.sh")).unwrap();
    std::fs::write(
        plugin.join(".mcp.json"),
        r#"{"mcpServers": {"linked": {"command": "./run.sh"}, "fine": {"command": "node"}}}"#,
    )
    .unwrap();
    let mut options = fixture.options();
    options.plugin_roots = vec![plugin];
    let loaded = load(&options);
    assert!(loaded.server("linked").is_none());
    assert!(loaded.server("fine").is_some());
    assert!(
        loaded
            .diagnostics
            .iter()
            .any(|d| d.server.as_deref() == Some("linked")
                && d.message.contains("leaves the plugin root")),
        "{:#?}",
        loaded.diagnostics
    );
}

#[cfg(unix)]
#[test]
fn plugin_files_that_are_symlinks_out_of_the_root_are_refused() {
    let fixture = common::Fixture::new();
    let outside = fixture.root.join("outside");
    std::fs::create_dir_all(outside.join(".claude-plugin")).unwrap();
    std::fs::write(
        outside.join("mcp.json"),
        r#"{"mcpServers": {"stolen": {"command": "x"}}}"#,
    )
    .unwrap();
    std::fs::write(
        outside.join(".claude-plugin/plugin.json"),
        r#"{"mcpServers": {"stolen-too": {"command": "y"}}}"#,
    )
    .unwrap();
    let plugin = fixture.root.join("plugins/sneaky");
    std::fs::create_dir_all(&plugin).unwrap();
    std::os::unix::fs::symlink(outside.join("mcp.json"), plugin.join(".mcp.json")).unwrap();
    std::os::unix::fs::symlink(
        outside.join(".claude-plugin"),
        plugin.join(".claude-plugin"),
    )
    .unwrap();
    let mut options = fixture.options();
    options.plugin_roots = vec![plugin];
    let loaded = load(&options);
    assert!(loaded.server("stolen").is_none());
    assert!(loaded.server("stolen-too").is_none());
    let refused = loaded
        .diagnostics
        .iter()
        .filter(|d| {
            d.level == mcp_config::Level::Error && d.message.contains("leaves the plugin root")
        })
        .count();
    assert_eq!(refused, 2, "{:#?}", loaded.diagnostics);
}

#[test]
fn enabled_plugin_names_never_leave_the_plugins_folder() {
    let fixture = common::Fixture::new();
    // A folder next to the plugins folder that looks like a plugin.
    let outside = fixture.root.join("home/.claude/outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(
        outside.join(".mcp.json"),
        r#"{"mcpServers": {"smuggled": {"command": "x"}}}"#,
    )
    .unwrap();
    std::fs::write(
        fixture.root.join("project/.claude/settings.json"),
        r#"{"enabledPlugins": {"../outside": true, "..": true, "/tmp": true, "installed@m": true}}"#,
    )
    .unwrap();
    let mut options = fixture.options();
    options.plugin_roots.clear();
    let loaded = load(&options);
    assert!(loaded.server("smuggled").is_none());
    let plugins = fixture
        .root
        .join("home/.claude/plugins")
        .canonicalize()
        .unwrap();
    for plugin in &loaded.plugins {
        assert_eq!(plugin.root.parent(), Some(plugins.as_path()), "{plugin:?}");
    }
    assert!(loaded.plugins.iter().any(|p| p.name == "installed"));
    let refused: Vec<_> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.message.contains("leaves the plugins folder"))
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(refused.len(), 3, "{refused:?}");
}

#[test]
fn plugin_root_is_not_expanded_in_urls_or_headers() {
    let fixture = common::Fixture::new();
    let plugin = fixture.root.join("plugins/remote");
    std::fs::create_dir_all(&plugin).unwrap();
    std::fs::write(
        plugin.join(".mcp.json"),
        r#"{"mcpServers": {"r": {"type": "http", "url": "https://x.example/${CLAUDE_PLUGIN_ROOT}", "headers": {"X": "${PLUGIN_ROOT}"}}}}"#,
    )
    .unwrap();
    let mut options = fixture.options();
    options.plugin_roots = vec![plugin];
    let loaded = load(&options);
    let Some(TransportConfig::Http(remote)) = loaded.server("r").map(|s| &s.config.transport)
    else {
        panic!("server r must load: {:#?}", loaded.diagnostics);
    };
    assert_eq!(remote.url, "https://x.example/${CLAUDE_PLUGIN_ROOT}");
    assert_eq!(remote.headers["X"], "${PLUGIN_ROOT}");
    let fields: Vec<_> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.server.as_deref() == Some("r") && d.level == mcp_config::Level::Warning)
        .filter_map(|d| d.field.as_deref())
        .collect();
    assert_eq!(fields, ["url", "headers"]);
}

#[test]
fn openclaw_session_ttl_defaults_and_is_validated() {
    let fixture = common::Fixture::new();
    assert_eq!(
        load(&fixture.options()).session_idle_ttl,
        std::time::Duration::ZERO
    );
    let mut options = fixture.options();
    options.openclaw_home = None;
    assert_eq!(
        load(&options).session_idle_ttl,
        mcp_config::limits::DEFAULT_SESSION_IDLE_TTL
    );
    std::fs::write(
        fixture.root.join("openclaw/openclaw.json"),
        r#"{"mcp": {"sessionIdleTtlMs": "soon", "servers": {}}}"#,
    )
    .unwrap();
    let loaded = load(&fixture.options());
    assert_eq!(
        loaded.session_idle_ttl,
        mcp_config::limits::DEFAULT_SESSION_IDLE_TTL
    );
    assert!(
        loaded
            .diagnostics
            .iter()
            .any(|d| d.field.as_deref() == Some("sessionIdleTtlMs") && d.line == Some(1))
    );
}

/// `value` with every object's keys in sorted order.
fn sorted(value: serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => {
            let mut members: Vec<_> = map.into_iter().collect();
            members.sort_by(|a, b| a.0.cmp(&b.0));
            members.into_iter().map(|(k, v)| (k, sorted(v))).collect()
        }
        serde_json::Value::Array(items) => items.into_iter().map(sorted).collect(),
        other => other,
    }
}
