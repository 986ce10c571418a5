//! The managed policy through the loader: one world of servers from every
//! scope (user, project, local, plugin, managed), one table of policies,
//! one `check` helper that loads the world under a policy and compares
//! each server's verdict. Then each example of Claude Code's managed-MCP
//! page, as a fixture under `tests/fixtures/managed/`, loads and decides
//! as the page says.

#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};

use mcp_config::{Level, LoadOptions, LoadedConfig, ScopedServer, load};

/// The servers every case starts from.
const USER: &str = r#"{"mcpServers": {
  "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"},
  "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]},
  "tool": {"command": "node", "args": ["server.js"]},
  "staging": {"type": "http", "url": "https://staging.example.com/api"},
  "dangerous-server": {"type": "http", "url": "https://mcp.example.com/x"},
  "in-process": {"type": "sdk", "name": "host-server"}
}}"#;
const PROJECT: &str = r#"{"mcpServers": {
  "proj": {"command": "python", "args": ["/usr/local/bin/approved-server.py"]}
}}"#;
const LOCAL: &str = r#"{"mcpServers": {
  "local-bin": {"command": "${HOME_BIN}/srv", "args": []}
}}"#;
const PLUGIN: &str = r#"{"mcpServers": {
  "plug": {"type": "http", "url": "https://plugin.example.com/mcp"}
}}"#;

struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl World {
    /// The common servers, plus `files` (relative path, text) on top.
    fn new(files: &[(&str, &str)]) -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let world = World { _dir: dir, root };
        world.write("home/.claude.json", USER);
        world.write("project/.mcp.json", PROJECT);
        world.write("project/.claude/settings.local.json", LOCAL);
        world.write("plugin/.mcp.json", PLUGIN);
        fs::create_dir_all(world.root.join("managed")).unwrap();
        for (path, text) in files {
            world.write(path, text);
        }
        world
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.root.join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn options(&self) -> LoadOptions {
        LoadOptions::default()
            .with_home(self.root.join("home"))
            .with_project(self.root.join("project"))
            .with_plugin_roots([self.root.join("plugin")])
            .with_env([("HOME_BIN".to_owned(), "/opt/bin".to_owned())])
            .with_trust_project_servers(true)
    }

    fn load(&self) -> LoadedConfig {
        load(&self.options().with_managed_dir(self.root.join("managed")))
    }
}

/// `run`, `held` (not runnable for another reason), or `blocked KEY`.
fn verdict(server: &ScopedServer) -> String {
    match server.blocked() {
        Some(block) => format!("blocked {}", block.rule.key),
        None if server.is_runnable() => "run".to_owned(),
        None => "held".to_owned(),
    }
}

/// Loads the world with `files` added (`{HASH:name}` in a file stands for
/// the config hash of server `name` as the world defines it, `{PIN:name}`
/// for its part digests as `pinned` holds them) and expects every server's
/// verdict: `expect` lists each server that is not `run`. An expected
/// `blocked KEY | TEXT` also wants TEXT in the reason.
#[track_caller]
fn check(files: &[(&str, &str)], expect: &[(&str, &str)]) {
    let plain = World::new(&[]);
    let unpinned = load(&plain.options());
    let files: Vec<(&str, String)> = files
        .iter()
        .map(|(path, text)| {
            let mut text = (*text).to_owned();
            for server in &unpinned.servers {
                let name = &server.config.name;
                text = text
                    .replace(
                        &format!("{{HASH:{name}}}"),
                        &mcp_config::config_hash(&server.config),
                    )
                    .replace(
                        &format!("{{PIN:{name}}}"),
                        &serde_json::to_string(&mcp_config::policy::config_field_hashes(
                            &server.config,
                        ))
                        .unwrap(),
                    );
            }
            (*path, text)
        })
        .collect();
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    let world = World::new(&files);
    let config = world.load();
    let got: Vec<(String, String)> = config
        .servers
        .iter()
        .map(|s| {
            let name = s.config.name.clone();
            let mut got = verdict(s);
            let wanted = expect.iter().find(|(n, _)| *n == name);
            if let (Some((_, want)), Some(block)) = (wanted, s.blocked())
                && let Some((_, text)) = want.split_once(" | ")
            {
                got = match block.reason.contains(text) {
                    true => format!("{got} | {text}"),
                    false => format!("{got} | {}", block.reason),
                };
            }
            (name, got)
        })
        .filter(|(_, v)| v != "run")
        .collect();
    let want: Vec<(String, String)> = expect
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect();
    assert_eq!(
        got, want,
        "files: {files:?}\ndiagnostics: {:#?}",
        config.diagnostics
    );
    // A blocked server is never runnable, and says so in a diagnostic that
    // names it and points at the rule.
    for server in &config.servers {
        if let Some(block) = server.blocked() {
            assert!(!server.is_runnable());
            assert!(
                config
                    .runnable()
                    .all(|s| s.config.name != server.config.name)
            );
            assert!(config.diagnostics.iter().any(|d| {
                d.server.as_deref() == Some(server.config.name.as_str())
                    && d.file.as_ref() == Some(&block.rule.file)
                    && d.line == block.rule.line
            }));
        }
    }
}

const MS: &str = "managed/managed-settings.json";
const MCP: &str = "managed/managed-mcp.json";
const REQ: &str = "managed/requirements.toml";
const USER_SETTINGS: &str = "home/.claude/settings.json";
const PROJECT_SETTINGS: &str = "project/.claude/settings.json";

#[test]
fn no_policy_runs_everything() {
    check(&[], &[]);
    check(&[(MS, "{}")], &[]);
    check(&[(MS, r#"{"deniedMcpServers": []}"#)], &[]);
}

#[test]
fn deny_matches_name_command_and_url_patterns() {
    let d0 = "blocked deniedMcpServers[0].serverName";
    check(
        &[(MS, r#"{"deniedMcpServers": [{"serverName": "tool"}]}"#)],
        &[("tool", d0)],
    );
    // A name matches exactly: no wildcard, no prefix.
    check(
        &[(
            MS,
            r#"{"deniedMcpServers": [{"serverName": "too*"}, {"serverName": "githu"}]}"#,
        )],
        &[],
    );
    check(
        &[(
            MS,
            r#"{"deniedMcpServers": [{"serverCommand": ["node", "server.js"]}]}"#,
        )],
        &[("tool", "blocked deniedMcpServers[0].serverCommand")],
    );
    // The whole argv, in order: a prefix, a reordering or an extra argument is another command.
    check(
        &[(
            MS,
            r#"{"deniedMcpServers": [{"serverCommand": ["node"]}, {"serverCommand": ["server.js", "node"]}, {"serverCommand": ["node", "server.js", "--x"]}]}"#,
        )],
        &[],
    );
    check(
        &[(
            MS,
            r#"{"deniedMcpServers": [{"serverUrl": "https://*.example.com/*"}]}"#,
        )],
        &[
            ("dangerous-server", "blocked deniedMcpServers[0].serverUrl"),
            ("plug", "blocked deniedMcpServers[0].serverUrl"),
            ("staging", "blocked deniedMcpServers[0].serverUrl"),
        ],
    );
    // `${VAR}` in a command entry expands before matching.
    check(
        &[(
            MS,
            r#"{"deniedMcpServers": [{"serverCommand": ["${HOME_BIN}/srv"]}]}"#,
        )],
        &[("local-bin", "blocked deniedMcpServers[0].serverCommand")],
    );
}

#[test]
fn deny_wins_over_allow() {
    check(
        &[(
            MS,
            r#"{"allowedMcpServers": [{"serverUrl": "https://*.example.com/*"}, {"serverCommand": ["node", "server.js"]}],
                "deniedMcpServers": [{"serverUrl": "https://staging.example.com/*"}, {"serverName": "tool"}]}"#,
        )],
        &[
            ("fs", "blocked allowedMcpServers"),
            ("github", "blocked allowedMcpServers"),
            ("local-bin", "blocked allowedMcpServers"),
            ("proj", "blocked allowedMcpServers"),
            ("staging", "blocked deniedMcpServers[0].serverUrl"),
            ("tool", "blocked deniedMcpServers[1].serverName"),
        ],
    );
}

#[test]
fn allow_list_kinds_decide_what_a_name_counts_for() {
    let allow = "blocked allowedMcpServers";
    // Url entries only: every remote server needs a url match, and a stdio
    // server has no name or command entry to match.
    check(
        &[(
            MS,
            r#"{"allowedMcpServers": [{"serverUrl": "https://mcp.example.com/*"}, {"serverName": "tool"}]}"#,
        )],
        &[
            ("fs", allow),
            ("github", allow),
            ("local-bin", allow),
            ("plug", allow),
            ("proj", allow),
            ("staging", allow),
        ],
    );
    // Command entries only: a remote server may pass by name.
    check(
        &[(
            MS,
            r#"{"allowedMcpServers": [{"serverCommand": ["node", "server.js"]}, {"serverName": "github"}, {"serverName": "fs"}]}"#,
        )],
        &[
            ("dangerous-server", allow),
            ("fs", allow),
            ("local-bin", allow),
            ("plug", allow),
            ("proj", allow),
            ("staging", allow),
        ],
    );
    // Names only: a name is enough for either kind.
    check(
        &[(
            MS,
            r#"{"allowedMcpServers": [{"serverName": "github"}, {"serverName": "tool"}, {"serverName": "plug"}]}"#,
        )],
        &[
            ("dangerous-server", allow),
            ("fs", allow),
            ("local-bin", allow),
            ("proj", allow),
            ("staging", allow),
        ],
    );
    // Set but empty: nothing is allowed.
    check(
        &[(MS, r#"{"allowedMcpServers": []}"#)],
        &[
            ("dangerous-server", allow),
            ("fs", allow),
            ("github", allow),
            ("local-bin", allow),
            ("plug", allow),
            ("proj", allow),
            ("staging", allow),
            ("tool", allow),
        ],
    );
}

#[test]
fn settings_lists_merge_unless_the_managed_list_is_the_only_one() {
    let allow = "blocked allowedMcpServers";
    let managed = r#"{"allowedMcpServers": [{"serverName": "github"}, {"serverName": "tool"}]}"#;
    let others = [
        ("dangerous-server", allow),
        ("fs", allow),
        ("local-bin", allow),
        ("plug", allow),
        ("proj", allow),
        ("staging", allow),
    ];
    check(&[(MS, managed)], &others);
    // The user's and the project's allow lists broaden a soft allow list.
    check(
        &[
            (MS, managed),
            (
                USER_SETTINGS,
                r#"{"allowedMcpServers": [{"serverName": "fs"}]}"#,
            ),
            (
                PROJECT_SETTINGS,
                r#"{"allowedMcpServers": [{"serverName": "proj"}]}"#,
            ),
        ],
        &[
            ("dangerous-server", allow),
            ("local-bin", allow),
            ("plug", allow),
            ("staging", allow),
        ],
    );
    // Not under allowManagedMcpServersOnly.
    check(
        &[
            (
                MS,
                r#"{"allowManagedMcpServersOnly": true, "allowedMcpServers": [{"serverName": "github"}, {"serverName": "tool"}]}"#,
            ),
            (
                USER_SETTINGS,
                r#"{"allowedMcpServers": [{"serverName": "fs"}]}"#,
            ),
        ],
        &others,
    );
    // The user's deny list always counts, also against managed servers.
    check(
        &[
            (
                MCP,
                r#"{"mcpServers": {"corp": {"command": "corp-server"}}}"#,
            ),
            (
                USER_SETTINGS,
                r#"{"deniedMcpServers": [{"serverName": "corp"}]}"#,
            ),
        ],
        &[
            ("corp", "blocked deniedMcpServers[0].serverName"),
            ("dangerous-server", "blocked mcpServers"),
            ("fs", "blocked mcpServers"),
            ("github", "blocked mcpServers"),
            ("local-bin", "blocked mcpServers"),
            ("plug", "blocked mcpServers"),
            ("proj", "blocked mcpServers"),
            ("staging", "blocked mcpServers"),
            ("tool", "blocked mcpServers"),
        ],
    );
}

#[test]
fn managed_mcp_json_has_exclusive_control() {
    let excl = "blocked mcpServers";
    let every_other = [
        ("dangerous-server", excl),
        ("fs", excl),
        ("github", excl),
        ("local-bin", excl),
        ("plug", excl),
        ("proj", excl),
        ("staging", excl),
        ("tool", excl),
    ];
    check(&[(MCP, r#"{"mcpServers": {}}"#)], &every_other);
    // The managed entry wins its name and runs; an allow list does not
    // apply to it, unless it reads the user's environment.
    check(
        &[
            (
                MCP,
                r#"{"mcpServers": {"tool": {"command": "corp-tool"}, "corp": {"type": "http", "url": "https://corp.example/mcp"}}}"#,
            ),
            (MS, r#"{"allowedMcpServers": []}"#),
        ],
        &[
            ("dangerous-server", excl),
            ("fs", excl),
            ("github", excl),
            ("local-bin", excl),
            ("plug", excl),
            ("proj", excl),
            ("staging", excl),
        ],
    );
    check(
        &[
            (
                MCP,
                r#"{"mcpServers": {"corp": {"command": "${HOME_BIN}/corp"}}}"#,
            ),
            (
                MS,
                r#"{"allowedMcpServers": [{"serverCommand": ["/opt/bin/other"]}]}"#,
            ),
        ],
        &[
            ("corp", "blocked allowedMcpServers"),
            ("dangerous-server", excl),
            ("fs", excl),
            ("github", excl),
            ("local-bin", excl),
            ("plug", excl),
            ("proj", excl),
            ("staging", excl),
            ("tool", excl),
        ],
    );
}

#[test]
fn strict_plugin_only_keeps_plugin_and_managed_servers() {
    let strict = "blocked strictPluginOnlyCustomization";
    let configured = [
        ("dangerous-server", strict),
        ("fs", strict),
        ("github", strict),
        ("local-bin", strict),
        ("proj", strict),
        ("staging", strict),
        ("tool", strict),
    ];
    check(
        &[(MS, r#"{"strictPluginOnlyCustomization": true}"#)],
        &configured,
    );
    check(
        &[(
            MS,
            r#"{"strictPluginOnlyCustomization": ["skills", "mcp"]}"#,
        )],
        &configured,
    );
    check(
        &[(
            MS,
            r#"{"strictPluginOnlyCustomization": ["skills", "hooks"]}"#,
        )],
        &[],
    );
    check(&[(MS, r#"{"strictPluginOnlyCustomization": false}"#)], &[]);
}

#[test]
fn a_pinned_hash_blocks_a_changed_server() {
    // The pin is the hash `get` prints: the same server runs.
    check(
        &[(
            MS,
            r#"{"allowedMcpServers": [{"serverName": "tool", "configHash": "{HASH:tool}"}, {"serverName": "fs", "configHash": "{HASH:fs}"}, {"serverUrl": "*"}, {"serverCommand": ["node", "server.js"]}, {"serverCommand": ["npx", "-y", "@modelcontextprotocol/server-filesystem", "."]}]}"#,
        )],
        &[
            ("local-bin", "blocked allowedMcpServers"),
            ("proj", "blocked allowedMcpServers"),
        ],
    );
    // Another server's hash: `tool` differs from its pin, though its
    // command is allowed; a pin applies to managed servers too.
    check(
        &[
            (
                MS,
                r#"{"allowedMcpServers": [{"serverName": "tool", "configHash": "{HASH:fs}"}, {"serverName": "corp", "configHash": "0000000000000000"}, {"serverCommand": ["node", "server.js"]}]}"#,
            ),
            (
                MCP,
                r#"{"mcpServers": {"corp": {"command": "corp-server"}}}"#,
            ),
        ],
        &[
            ("corp", "blocked allowedMcpServers[1].serverName"),
            ("dangerous-server", "blocked mcpServers"),
            ("fs", "blocked mcpServers"),
            ("github", "blocked mcpServers"),
            ("local-bin", "blocked mcpServers"),
            ("plug", "blocked mcpServers"),
            ("proj", "blocked mcpServers"),
            ("staging", "blocked mcpServers"),
            ("tool", "blocked mcpServers"),
        ],
    );
    check(
        &[(
            MS,
            r#"{"allowedMcpServers": [{"serverName": "tool", "configHash": "{HASH:fs}"}, {"serverCommand": ["node", "server.js"]}, {"serverUrl": "*"}, {"serverCommand": ["npx", "-y", "@modelcontextprotocol/server-filesystem", "."]}]}"#,
        )],
        &[
            ("local-bin", "blocked allowedMcpServers"),
            ("proj", "blocked allowedMcpServers"),
            ("tool", "blocked allowedMcpServers[0].serverName"),
        ],
    );
}

/// A pin with `pinned` names each part that changed; the hash alone
/// decides, and a pin of the hash alone still blocks any change.
#[test]
fn a_pin_names_the_parts_that_changed() {
    const PINS: &str = r#"{"allowedMcpServers": [
        {"serverName": "tool", "configHash": "{HASH:tool}", "pinned": {PIN:tool}},
        {"serverName": "github", "configHash": "{HASH:github}", "pinned": {PIN:github}},
        {"serverName": "fs", "configHash": "{HASH:fs}"},
        {"serverUrl": "*"},
        {"serverCommand": ["node", "server.js"]},
        {"serverCommand": ["npx", "-y", "@modelcontextprotocol/server-filesystem", "."]}
    ]}"#;
    const TOOL: &str = r#""tool": {"command": "node", "args": ["server.js"]}"#;
    const GITHUB: &str =
        r#""github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"}"#;
    const FS: &str = r#""fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]}"#;
    let unlisted = [
        ("local-bin", "blocked allowedMcpServers"),
        ("proj", "blocked allowedMcpServers"),
    ];
    let tool = "blocked allowedMcpServers[0].serverName | `tool`: its ";
    let github = "blocked allowedMcpServers[1].serverName | `github`: its ";
    for (was, now, want) in [
        // Unchanged: everything pinned runs.
        (TOOL, TOOL, vec![]),
        (
            TOOL,
            r#""tool": {"command": "/tmp/node", "args": ["server.js"]}"#,
            vec![("tool", format!("{tool}command changed since it was pinned"))],
        ),
        (
            TOOL,
            r#""tool": {"command": "node", "args": ["server.js", "--unsafe"]}"#,
            vec![("tool", format!("{tool}args changed since it was pinned"))],
        ),
        (
            TOOL,
            r#""tool": {"command": "node", "args": ["server.js"], "env": {"LOG_LEVEL": "debug"}}"#,
            vec![("tool", format!("{tool}env changed since it was pinned"))],
        ),
        (
            TOOL,
            r#""tool": {"command": "deno", "args": ["run", "server.js"]}"#,
            vec![("tool", format!("{tool}args and command changed"))],
        ),
        (
            TOOL,
            r#""tool": {"command": "deno", "args": ["server.js"], "env": {"A": "1"}}"#,
            vec![("tool", format!("{tool}command and env changed"))],
        ),
        (
            GITHUB,
            r#""github": {"type": "http", "url": "https://api.githubcopilot.example/mcp/"}"#,
            vec![("github", format!("{github}url changed since it was pinned"))],
        ),
        (
            GITHUB,
            r#""github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"X-Route": "proxy"}}"#,
            vec![("github", format!("{github}headers changed since it was pinned"))],
        ),
        (
            GITHUB,
            r#""github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headersHelper": "/tmp/helper"}"#,
            vec![("github", format!("{github}headersHelper changed since it was pinned"))],
        ),
        (
            GITHUB,
            r#""github": {"type": "sse", "url": "https://api.githubcopilot.com/mcp/"}"#,
            vec![("github", format!("{github}type changed since it was pinned"))],
        ),
        // A pin of the hash alone blocks any change, and says what the
        // hash covers.
        (
            FS,
            r#""fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/"]}"#,
            vec![(
                "fs",
                "blocked allowedMcpServers[2].serverName | the pin records only the hash, which covers type, command, args, env".to_owned(),
            )],
        ),
    ] {
        assert!(USER.contains(was), "{was}");
        let user = USER.replace(was, now);
        let mut expect: Vec<(&str, &str)> = unlisted.to_vec();
        expect.extend(want.iter().map(|(name, v)| (*name, v.as_str())));
        expect.sort();
        check(&[("home/.claude.json", &user), (MS, PINS)], &expect);
    }
    // The hash decides: parts that all match do not let a wrong hash by.
    check(
        &[(
            MS,
            r#"{"allowedMcpServers": [{"serverName": "tool", "configHash": "0000000000000000", "pinned": {PIN:tool}}, {"serverCommand": ["node", "server.js"]}]}"#,
        )],
        &[
            ("dangerous-server", "blocked allowedMcpServers"),
            ("fs", "blocked allowedMcpServers"),
            ("github", "blocked allowedMcpServers"),
            ("local-bin", "blocked allowedMcpServers"),
            ("plug", "blocked allowedMcpServers"),
            ("proj", "blocked allowedMcpServers"),
            ("staging", "blocked allowedMcpServers"),
            (
                "tool",
                "blocked allowedMcpServers[0].serverName | though every part in `pinned` matches",
            ),
        ],
    );
}

#[test]
fn codex_requirements_need_name_and_identity() {
    let req = "blocked mcp_servers";
    check(
        &[(
            REQ,
            r#"[mcp_servers.tool.identity]
command = "node"

[mcp_servers.github.identity]
url = "https://api.githubcopilot.com/mcp/"

[mcp_servers.fs.identity]
command = "uvx"
"#,
        )],
        &[
            ("dangerous-server", req),
            ("fs", "blocked mcp_servers.fs.identity"),
            ("local-bin", req),
            ("plug", req),
            ("proj", req),
            ("staging", req),
        ],
    );
}

#[test]
fn managed_settings_servers_are_remote_https_only() {
    check(
        &[(
            MS,
            r#"{"managedMcpServers": {
                "search": {"type": "http", "url": "https://search.example.com/mcp"},
                "plain": {"type": "http", "url": "http://search.example.com/mcp"},
                "prog": {"command": "corp"}
            }, "allowedMcpServers": []}"#,
        )],
        &[
            ("dangerous-server", "blocked allowedMcpServers"),
            ("fs", "blocked allowedMcpServers"),
            ("github", "blocked allowedMcpServers"),
            ("local-bin", "blocked allowedMcpServers"),
            ("plain", "blocked managedMcpServers.plain"),
            ("plug", "blocked allowedMcpServers"),
            ("prog", "blocked managedMcpServers.prog"),
            ("proj", "blocked allowedMcpServers"),
            ("staging", "blocked allowedMcpServers"),
            ("tool", "blocked allowedMcpServers"),
        ],
    );
}

#[test]
fn a_malformed_managed_file_fails_closed() {
    let every = |key: &'static str| -> Vec<(&'static str, &'static str)> {
        [
            "dangerous-server",
            "fs",
            "github",
            "local-bin",
            "plug",
            "proj",
            "staging",
            "tool",
        ]
        .into_iter()
        .map(|name| (name, key))
        .collect()
    };
    for (file, text, key) in [
        (
            MS,
            "{\"deniedMcpServers\": [\n  {\"serverName\": \"x\",}\n",
            "blocked ",
        ),
        (
            MS,
            r#"{"deniedMcpServers": {"serverName": "x"}}"#,
            "blocked deniedMcpServers",
        ),
        (
            MS,
            r#"{"deniedMcpServers": [{"serverName": "x", "serverUrl": "y"}]}"#,
            "blocked deniedMcpServers[0]",
        ),
        (
            MS,
            r#"{"allowedMcpServers": [{"serverNmae": "x"}]}"#,
            "blocked allowedMcpServers[0].serverNmae",
        ),
        (
            MS,
            r#"{"allowedMcpServers": [{"serverName": "x", "configHash": "abc"}]}"#,
            "blocked allowedMcpServers[0].configHash",
        ),
        (
            MS,
            r#"{"allowedMcpServers": [{"serverName": "x", "pinned": {"command": "0000000000000000"}}]}"#,
            "blocked allowedMcpServers[0].pinned",
        ),
        (
            MS,
            r#"{"allowedMcpServers": [{"serverName": "x", "configHash": "0000000000000000", "pinned": {"command": "abc"}}]}"#,
            "blocked allowedMcpServers[0].pinned",
        ),
        (
            MS,
            r#"{"allowManagedMcpServersOnly": "yes"}"#,
            "blocked allowManagedMcpServersOnly",
        ),
        (MCP, "{\"mcpServers\": {\n", "blocked "),
        (REQ, "[mcp_servers.x.identity\n", "blocked "),
        (
            REQ,
            "[mcp_servers.x.identity]\ncommand = \"a\"\nurl = \"b\"\n",
            "blocked mcp_servers.x.identity",
        ),
    ] {
        let world = World::new(&[(file, text)]);
        let config = world.load();
        // In-process servers are the host's own, outside every policy.
        assert!(config.policy.is_unreadable(), "{text}");
        let runnable: Vec<&str> = config.runnable().map(|s| s.config.name.as_str()).collect();
        assert_eq!(runnable, ["in-process"], "{text}");
        let error = config
            .diagnostics
            .iter()
            .find(|d| d.level == Level::Error && d.file == Some(world.root.join(file)))
            .unwrap_or_else(|| panic!("no error for {text}: {:#?}", config.diagnostics));
        assert!(error.line.is_some(), "{error:?}");
        let got: Vec<(String, String)> = config
            .servers
            .iter()
            .filter(|s| s.config.name != "in-process")
            .map(|s| (s.config.name.clone(), verdict(s)))
            .collect();
        for ((name, verdict), (want_name, want)) in got.iter().zip(every(key)) {
            assert_eq!(name, want_name);
            assert!(verdict.starts_with(want), "{text}: {name} is {verdict}");
        }
    }
}

#[test]
fn a_rule_is_named_by_its_file_and_line() {
    let world = World::new(&[(
        MS,
        "{\n  \"deniedMcpServers\": [\n    {\"serverName\": \"other\"},\n    {\"serverCommand\": [\"node\", \"server.js\"]}\n  ]\n}\n",
    )]);
    let config = world.load();
    let block = config.server("tool").unwrap().blocked().unwrap();
    assert_eq!(block.rule.file, world.root.join(MS));
    assert_eq!(block.rule.line, Some(4));
    assert_eq!(block.rule.key, "deniedMcpServers[1].serverCommand");
    assert_eq!(block.rule.pattern, "node server.js");
    assert!(config.has_diagnostics_at(Level::Warning));
}

/// Claude Code's managed-MCP page, example by example: the managed files
/// are the page's, the servers the ones each example's table lists.
#[test]
fn the_documented_examples_decide_as_documented() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/managed");
    // (fixture folder, the user's servers, whether each server runs)
    type Example = (&'static str, &'static str, &'static [(&'static str, bool)]);
    let cases: &[Example] = &[
        (
            "url-only",
            r#"{"mcpServers": {
                "a": {"type": "http", "url": "https://mcp.example.com/api"},
                "b": {"type": "http", "url": "https://api.internal.example.com/mcp"},
                "c": {"type": "http", "url": "https://external.example.com/mcp"},
                "d": {"command": "anything"}}}"#,
            &[("a", true), ("b", true), ("c", false), ("d", false)],
        ),
        (
            "command-only",
            r#"{"mcpServers": {
                "a": {"command": "npx", "args": ["-y", "approved-package"]},
                "b": {"command": "node", "args": ["server.js"]},
                "my-api": {"type": "http", "url": "https://my-api.example/mcp"}}}"#,
            &[("a", true), ("b", false), ("my-api", false)],
        ),
        (
            "mixed-name-command",
            r#"{"mcpServers": {
                "local-tool": {"command": "npx", "args": ["-y", "approved-package"]},
                "other-tool": {"command": "node", "args": ["server.js"]},
                "github": {"command": "node", "args": ["server.js"]},
                "other-api": {"type": "http", "url": "https://other.example/mcp"}}}"#,
            &[
                ("github", false),
                ("local-tool", true),
                ("other-api", false),
                ("other-tool", false),
            ],
        ),
        (
            "mixed-name-command",
            r#"{"mcpServers": {"github": {"type": "http", "url": "https://anything.example/mcp"}}}"#,
            &[("github", true)],
        ),
        (
            "name-only",
            r#"{"mcpServers": {
                "github": {"command": "anything"},
                "internal-tool": {"command": "whatever", "args": ["-x"]},
                "other": {"type": "http", "url": "https://other.example/mcp"}}}"#,
            &[("github", true), ("internal-tool", true), ("other", false)],
        ),
        (
            "deny-override",
            r#"{"mcpServers": {
                "a": {"type": "http", "url": "https://mcp.example.com/api"},
                "b": {"type": "http", "url": "https://staging.example.com/api"},
                "c": {"type": "http", "url": "https://other.com/mcp"}}}"#,
            &[("a", true), ("b", false), ("c", false)],
        ),
        (
            "hard-allowlist",
            r#"{"mcpServers": {
                "gh": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"},
                "github": {"type": "http", "url": "https://unlisted.example/mcp"},
                "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]},
                "py": {"command": "python", "args": ["/usr/local/bin/approved-server.py"]},
                "dangerous-server": {"type": "http", "url": "https://mcp.example.com/x"},
                "bad": {"command": "npx", "args": ["-y", "unapproved-package"]},
                "untrusted": {"type": "http", "url": "https://a.untrusted.example.com/mcp"},
                "internal": {"type": "http", "url": "https://wiki.internal.example.com/mcp"}}}"#,
            &[
                ("bad", false),
                ("dangerous-server", false),
                ("fs", true),
                ("gh", true),
                ("github", false),
                ("internal", true),
                ("py", true),
                ("untrusted", false),
            ],
        ),
        (
            "managed-only",
            r#"{"mcpServers": {
                "gh": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"},
                "mine": {"type": "http", "url": "https://mine.example/mcp"}}}"#,
            &[("gh", true), ("mine", false)],
        ),
        (
            "fixed-deployment",
            r#"{"mcpServers": {"mine": {"command": "my-server"}}}"#,
            &[
                ("company-internal", true),
                ("github", true),
                ("mine", false),
                ("sentry", true),
            ],
        ),
        (
            "disable-mcp",
            r#"{"mcpServers": {"mine": {"command": "my-server"}}}"#,
            &[("mine", false)],
        ),
        (
            "provided-servers",
            r#"{"mcpServers": {"mine": {"command": "my-server"}}}"#,
            &[("mine", true), ("records", true), ("search", true)],
        ),
    ];
    for (example, user, expect) in cases {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        fs::create_dir_all(&home).unwrap();
        fs::write(home.join(".claude.json"), user).unwrap();
        // The user's own allow list must not broaden the managed-only
        // example.
        if *example == "managed-only" {
            fs::create_dir_all(home.join(".claude")).unwrap();
            fs::write(
                home.join(".claude/settings.json"),
                r#"{"allowedMcpServers": [{"serverUrl": "https://mine.example/*"}]}"#,
            )
            .unwrap();
        }
        let config = load(
            &LoadOptions::default()
                .with_home(&home)
                .with_managed_dir(fixtures.join(example)),
        );
        assert!(
            !config.has_diagnostics_at(Level::Error),
            "{example}: {:#?}",
            config.diagnostics
        );
        let got: Vec<(&str, bool)> = config
            .servers
            .iter()
            .map(|s| (s.config.name.as_str(), s.is_runnable()))
            .collect();
        assert_eq!(got, *expect, "{example}");
    }
}

#[test]
fn the_default_managed_dir_is_the_platforms() {
    let dir = mcp_config::policy::default_managed_dir();
    if cfg!(target_os = "linux") {
        assert_eq!(dir, Path::new("/etc/claude-code"));
    }
    assert!(dir.is_absolute() || cfg!(windows));
}
