//! Table tests of every field mapping (one `check` helper), one realistic
//! file per host (snapshots), and hostile input.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;

fn cx() -> ImportContext<'static> {
    ImportContext {
        home: Some(Path::new("/home/u")),
        project: Some(Path::new("/work/proj")),
    }
}

/// What a translation gives, compactly: the entries by name, every
/// untranslated field as `server.field@line:col`, every diagnostic as
/// `line:col level message`, and the inputs asked for.
fn summary(imported: &Imported) -> Value {
    let servers: serde_json::Map<String, Value> = imported
        .servers
        .iter()
        .map(|s| (s.name.clone(), s.entry.clone()))
        .collect();
    let untranslated: Vec<String> = imported
        .servers
        .iter()
        .flat_map(|s| {
            s.untranslated
                .iter()
                .map(move |u| format!("{}.{}@{}:{}", s.name, u.field, u.line, u.column))
        })
        .collect();
    let diagnostics: Vec<String> = imported
        .diagnostics
        .iter()
        .map(|d| {
            format!(
                "{}:{} {:?} {}",
                d.line.unwrap_or(0),
                d.column.unwrap_or(0),
                d.level,
                d.message
            )
        })
        .collect();
    let inputs: Vec<String> = imported.inputs.iter().map(|i| i.id.clone()).collect();
    json!({"servers": servers, "untranslated": untranslated, "diagnostics": diagnostics, "inputs": inputs})
}

/// Translates `text` as `host`'s file and compares the parts `expect`
/// names (`servers`, `untranslated`, `diagnostics`, `inputs`); a part it
/// leaves out must be empty.
#[track_caller]
fn check(host: Host, text: &str, expect: Value) {
    let got = summary(&import_text(host, text, Path::new("f"), &cx()));
    for part in ["servers", "untranslated", "diagnostics", "inputs"] {
        let want = expect.get(part).cloned().unwrap_or_else(|| match part {
            "servers" => json!({}),
            _ => json!([]),
        });
        assert_eq!(
            got[part], want,
            "{part} of {host} file:\n{text}\ngot: {got:#}"
        );
    }
}

#[test]
fn field_mappings() {
    use Host::*;
    let rows: Vec<(Host, &str, Value)> = vec![
        // Claude Desktop: our own shape.
        (
            ClaudeDesktop,
            r#"{"mcpServers":{"fs":{"command":"npx","args":["-y","pkg"],"env":{"K":"v"}}}}"#,
            json!({"servers":{"fs":{"type":"stdio","command":"npx","args":["-y","pkg"],"env":{"K":"v"}}}}),
        ),
        // Numbers and booleans in args and env are passed as text.
        (
            ClaudeDesktop,
            r#"{"mcpServers":{"a":{"command":"x","args":[1,true],"env":{"N":2}}}}"#,
            json!({"servers":{"a":{"type":"stdio","command":"x","args":["1","true"],"env":{"N":"2"}}}}),
        ),
        // Cursor: url is streamable HTTP; ${env:VAR} is ours ${VAR}.
        (
            Cursor,
            r#"{"mcpServers":{"r":{"url":"https://h/mcp","headers":{"Authorization":"Bearer ${env:TOK}"}}}}"#,
            json!({"servers":{"r":{"type":"http","url":"https://h/mcp","headers":{"Authorization":"Bearer ${TOK}"}}}}),
        ),
        (
            Cursor,
            r#"{"mcpServers":{"s":{"command":"node","args":["${workspaceFolder}/srv.js","${userHome}/x"]}}}"#,
            json!({"servers":{"s":{"type":"stdio","command":"node","args":["/work/proj/srv.js","/home/u/x"]}}}),
        ),
        (
            Cursor,
            r#"{"mcpServers":{"s":{"type":"sse","url":"https://h/sse"}}}"#,
            json!({"servers":{"s":{"type":"sse","url":"https://h/sse"}}}),
        ),
        (
            Cursor,
            "{\"mcpServers\":{\"s\":{\"command\":\"x\",\"envFile\":\".env\"}}}",
            json!({"servers":{"s":{"type":"stdio","command":"x"}},"untranslated":["s.envFile@1:35"]}),
        ),
        // VS Code: servers, type, inputs, variables.
        (
            VsCode,
            r#"{"inputs":[{"type":"promptString","id":"key","description":"API key","password":true}],
                    "servers":{"gh":{"type":"http","url":"https://api/mcp","headers":{"Authorization":"Bearer ${input:key}"}}}}"#,
            json!({"servers":{"gh":{"type":"http","url":"https://api/mcp","headers":{"Authorization":"Bearer ${input:key}"}}},"inputs":["key"]}),
        ),
        (
            VsCode,
            r#"{"servers":{"p":{"type":"stdio","command":"python","args":["${workspaceFolder}/m.py"],"env":{"T":"${env:T}"},"cwd":"${workspaceFolder}"}}}"#,
            json!({"servers":{"p":{"type":"stdio","command":"python","args":["/work/proj/m.py"],"env":{"T":"${T}"},"cwd":"/work/proj"}}}),
        ),
        (
            VsCode,
            r#"{"servers":{"p":{"command":"x","args":["${command:pick}"],"dev":{"watch":"*.js"}}}}"#,
            json!({"servers":{"p":{"type":"stdio","command":"x","args":["${command:pick}"]}},
                "untranslated":["p.args.0@1:40","p.dev@1:59"]}),
        ),
        // Codex: every documented field.
        (
            Codex,
            "[mcp_servers.docs]\ncommand = \"docs-server\"\nargs = [\"--port\", \"4000\"]\nenv = { API_KEY = \"k\" }\nenv_vars = [\"HTTPS_PROXY\", \"TEAM\"]\ncwd = \"/srv\"\n",
            json!({"servers":{"docs":{"type":"stdio","command":"docs-server","args":["--port","4000"],"env":{"API_KEY":"k"},"cwd":"/srv","envPassthrough":["HTTPS_PROXY","TEAM"]}}}),
        ),
        (
            Codex,
            "[mcp_servers.figma]\nurl = \"https://mcp.figma.com/mcp\"\nbearer_token_env_var = \"FIGMA_TOKEN\"\nhttp_headers = { \"X-Region\" = \"eu\" }\nenv_http_headers = { \"X-Key\" = \"FIGMA_KEY\" }\n",
            json!({"servers":{"figma":{"type":"http","url":"https://mcp.figma.com/mcp","headers":{"X-Region":"eu","X-Key":"${FIGMA_KEY}","Authorization":"Bearer ${FIGMA_TOKEN}"}}}}),
        ),
        (
            Codex,
            "[mcp_servers.t]\ncommand = \"t\"\nenabled = false\nenabled_tools = [\"a\"]\ndisabled_tools = [\"b\"]\nstartup_timeout_sec = 20\ntool_timeout_sec = 45.5\n",
            json!({"servers":{"t":{"type":"stdio","command":"t","enabled":false,"toolFilter":{"include":["a"],"exclude":["b"]},"connectionTimeoutMs":20000,"toolCallTimeoutMs":45500}}}),
        ),
        (
            Codex,
            "[mcp_servers.t]\ncommand = \"t\"\nstartup_timeout_ms = 1500\n",
            json!({"servers":{"t":{"type":"stdio","command":"t","connectionTimeoutMs":1500}}}),
        ),
        (
            Codex,
            "[mcp_servers.t]\ncommand = \"t\"\nexperimental = 1\n",
            json!({"servers":{"t":{"type":"stdio","command":"t"}},"untranslated":["t.experimental@3:1"]}),
        ),
        // Gemini CLI: url is SSE, httpUrl streamable HTTP, timeout in ms.
        (
            Gemini,
            r#"{"mcpServers":{"a":{"url":"https://h/sse"},"b":{"httpUrl":"https://h/mcp","headers":{"K":"$TOKEN"}},"c":{"url":"https://h/m","type":"http"}}}"#,
            json!({"servers":{"a":{"type":"sse","url":"https://h/sse"},"b":{"type":"http","url":"https://h/mcp","headers":{"K":"${TOKEN}"}},"c":{"type":"http","url":"https://h/m"}}}),
        ),
        (
            Gemini,
            r#"{"mcpServers":{"g":{"command":"x","cwd":"./s","timeout":30000,"includeTools":["a"],"excludeTools":["b"],"trust":true}}}"#,
            json!({"servers":{"g":{"type":"stdio","command":"x","cwd":"./s","requestTimeoutMs":30000,"toolFilter":{"include":["a"],"exclude":["b"]}}},
                "untranslated":["g.trust@1:105"]}),
        ),
        (
            Gemini,
            r#"{"mcpServers":{"a":{"command":"a"},"b":{"command":"b"}},"mcp":{"excluded":["b"]}}"#,
            json!({"servers":{"a":{"type":"stdio","command":"a"},"b":{"type":"stdio","command":"b","enabled":false}}}),
        ),
        (
            Gemini,
            r#"{"mcpServers":{"a":{"command":"a"},"b":{"command":"b"}},"mcp":{"allowed":["a"]}}"#,
            json!({"servers":{"a":{"type":"stdio","command":"a"},"b":{"type":"stdio","command":"b","enabled":false}}}),
        ),
        // Windsurf: serverUrl, disabled, disabledTools.
        (
            Windsurf,
            r#"{"mcpServers":{"w":{"serverUrl":"https://h/mcp","headers":{"A":"${env:A}"},"disabled":true,"disabledTools":["x"]}}}"#,
            json!({"servers":{"w":{"type":"http","url":"https://h/mcp","headers":{"A":"${A}"},"enabled":false,"toolFilter":{"exclude":["x"]}}}}),
        ),
        // Zed: both command shapes, url, enabled; JSONC.
        (
            Zed,
            "{ // settings\n \"context_servers\": {\n  \"a\": {\"source\":\"custom\",\"command\":\"x\",\"args\":[\"1\"],\"env\":{\"K\":\"v\"}},\n  \"b\": {\"command\":{\"path\":\"y\",\"args\":[],\"env\":null}, \"settings\":{}},\n  \"c\": {\"url\":\"https://h/mcp\",\"headers\":{\"H\":\"v\"},\"enabled\":false},\n },\n}",
            json!({"servers":{"a":{"type":"stdio","command":"x","args":["1"],"env":{"K":"v"}},"b":{"type":"stdio","command":"y","args":[]},"c":{"type":"http","url":"https://h/mcp","headers":{"H":"v"},"enabled":false}}}),
        ),
        (
            Zed,
            r#"{"context_servers":{"e":{"source":"extension","settings":{}}}}"#,
            json!({"diagnostics":["1:21 Warning server `e`: provided by a Zed extension, whose command only Zed knows; not imported"]}),
        ),
        // Goose: stdio, sse, streamable_http, built-ins.
        (
            Goose,
            "extensions:\n  gh:\n    type: stdio\n    cmd: npx\n    args: [-y, pkg]\n    envs: {T: v}\n    enabled: true\n    timeout: 300\n",
            json!({"servers":{"gh":{"type":"stdio","command":"npx","args":["-y","pkg"],"env":{"T":"v"},"enabled":true,"requestTimeoutMs":300000,"toolCallTimeoutMs":300000}}}),
        ),
        (
            Goose,
            "extensions:\n  r:\n    type: streamable_http\n    uri: https://h/mcp\n    headers: {A: b}\n  s:\n    type: sse\n    uri: https://h/sse\n",
            json!({"servers":{"r":{"type":"http","url":"https://h/mcp","headers":{"A":"b"}},"s":{"type":"sse","url":"https://h/sse"}}}),
        ),
        (
            Goose,
            "extensions:\n  developer:\n    type: builtin\n    name: developer\n",
            json!({"diagnostics":["2:3 Warning server `developer`: a Goose `builtin` extension runs inside Goose, not as an MCP server; not imported"]}),
        ),
    ];
    for (host, text, expect) in rows {
        check(host, text, expect);
    }
}

#[test]
fn hostile_input() {
    use Host::*;
    let deep_json = format!(
        "{{\"mcpServers\":{}{}}}",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let deep_flow_yaml = format!("extensions: {}{}", "[".repeat(5000), "]".repeat(5000));
    let deep_yaml: String = (0..300)
        .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
        .collect();
    let deep_toml = format!("x = {}{}", "[".repeat(5000), "]".repeat(5000));
    let long = "n".repeat(500);
    let long_name = format!("{{\"mcpServers\":{{\"{long}\":{{\"command\":\"x\"}}}}}}");
    let cases: Vec<(Host, String, &str)> = vec![
        (
            Codex,
            "[mcp_servers.a]\ncommand = \n".into(),
            "2:11 Error invalid TOML",
        ),
        (
            Goose,
            "extensions:\n  a: [1, 2\n".into(),
            "Error invalid YAML",
        ),
        (
            Cursor,
            "{\"mcpServers\": {\"a\": }".into(),
            "1:22 Error invalid JSON",
        ),
        (
            ClaudeDesktop,
            deep_json,
            "Error invalid JSON: arrays and objects are nested deeper than 128",
        ),
        (
            Goose,
            deep_yaml,
            "Error invalid YAML: mappings and sequences are nested deeper than 128",
        ),
        (
            Goose,
            deep_flow_yaml,
            "Error invalid YAML: recursion limit exceeded",
        ),
        (Codex, deep_toml, "Error invalid TOML"),
        (Cursor, long_name, "Error server `nnnn"),
        (
            Cursor,
            r#"{"mcpServers":{"a\u001b[31m":{"command":"x"}}}"#.into(),
            "must not hold control",
        ),
        (
            Cursor,
            r#"{"mcpServers":{"a":{"command":["x"]}}}"#.into(),
            "1:21 Error server `a`: `command` is not a string; not imported",
        ),
        (
            Cursor,
            r#"{"mcpServers":{"a":{"command":"x","args":[{}]}}}"#.into(),
            "Error server `a`: `args` element 0 is not a string",
        ),
        (
            Cursor,
            r#"{"mcpServers":{"a":{"command":"x","env":{"LD_PRELOAD":"/e.so"}}}}"#.into(),
            "Error invalid entry for server `a`",
        ),
        (
            Cursor,
            r#"{"mcpServers":[]}"#.into(),
            "Error `mcpServers` is not an object of servers",
        ),
        (Goose, "a: &a [*a]\n".into(), "unknown alias"),
        (
            Goose,
            "extensions:\n  ? [a]\n  : 1\n".into(),
            "a mapping key must be a scalar",
        ),
    ];
    for (host, text, want) in cases {
        let imported = import_text(host, &text, Path::new("f"), &cx());
        let got = summary(&imported)["diagnostics"].to_string();
        assert!(got.contains(want), "{host}: want {want:?} in {got}");
        assert!(imported.servers.is_empty(), "{host}: {got}");
        assert!(got.len() < 2000, "messages stay short: {got}");
    }
    // A file past the loader's cap is refused before parsing.
    let huge = " ".repeat(crate::file::MAX_CONFIG_FILE_BYTES + 1);
    let got = summary(&import_text(Cursor, &huge, Path::new("f"), &cx()));
    assert!(
        got["diagnostics"][0]
            .as_str()
            .unwrap_or("")
            .contains("larger than 8 MiB"),
        "{got}"
    );
}

#[test]
fn billion_laughs_stops_at_the_node_budget() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let prev = format!("*a{}", i - 1);
        text.push_str(&format!("a{i}: &a{i} [{}]\n", vec![prev; 10].join(", ")));
    }
    let got = summary(&import_text(Host::Goose, &text, Path::new("f"), &cx()));
    assert!(
        got["diagnostics"]
            .to_string()
            .contains("expands to more than"),
        "{got}"
    );
}

#[test]
fn secrets_never_reach_messages() {
    let text = r#"{"mcpServers":{"a":{"command":"x","env":{"T":"SECRET1","B":{"x":"SECRET2"}},"args":[null]},
        "b":{"url":"https://h","headers":{"H":"SECRET3","J":["SECRET4"]}}}}"#;
    let imported = import_text(Host::Cursor, text, Path::new("f"), &cx());
    let shown = format!(
        "{:?}{:?}",
        imported.diagnostics,
        imported
            .servers
            .iter()
            .map(|s| &s.untranslated)
            .collect::<Vec<_>>()
    );
    for secret in ["SECRET1", "SECRET2", "SECRET3", "SECRET4"] {
        assert!(!shown.contains(secret), "{shown}");
    }
    // The values themselves are copied into the entry.
    assert_eq!(imported.servers[0].entry["headers"]["H"], "SECRET3");
}

#[test]
fn inputs_are_filled() {
    let mut entry = json!({"headers": {"A": "Bearer ${input:tok}", "B": "${input:other}"}, "x": ["${input:tok"]});
    let values = [("tok".to_owned(), "t0k".to_owned())].into_iter().collect();
    let missing = fill_inputs(&mut entry, &values);
    assert_eq!(missing, ["other"]);
    assert_eq!(
        entry,
        json!({"headers": {"A": "Bearer t0k", "B": "${input:other}"}, "x": ["${input:tok"]})
    );
}

/// Imports a VS Code file whose `inputs` declare `tok` as a password and
/// `region` as plain text, stores the password inputs under their
/// suggested names and fills the rest: `Ok` with each server's entry, or
/// the first refusal's message.
fn secret_import(servers: Value) -> Result<Value, String> {
    let text = json!({
        "inputs": [
            {"type": "promptString", "id": "tok", "description": "API token", "password": true},
            {"type": "promptString", "id": "region", "description": "Region"}
        ],
        "servers": servers
    })
    .to_string();
    let imported = import_text(Host::VsCode, &text, Path::new("mcp.json"), &cx());
    let secret_ids: BTreeMap<String, crate::secret::SecretName> = imported
        .inputs
        .iter()
        .filter(|p| p.password)
        .map(|p| (p.id.clone(), input_secret_name(&p.id).expect("name")))
        .collect();
    let values: BTreeMap<String, String> = [("region".to_owned(), "eu-1".to_owned())].into();
    let mut out = serde_json::Map::new();
    for server in &imported.servers {
        let mut entry = server.entry.clone();
        let before = entry.clone();
        if let Err(e) = fill_secret_inputs(&server.name, &mut entry, &secret_ids) {
            assert_eq!(entry, before, "a refused entry is unchanged");
            return Err(e.to_string());
        }
        assert_eq!(fill_inputs(&mut entry, &values), Vec::<String>::new());
        // What is written must be an entry the editor accepts.
        let checked = crate::edit::validate_entry(
            &server.name,
            entry.clone(),
            &Default::default(),
            &Default::default(),
            crate::Scope::User,
        );
        assert!(checked.is_ok(), "{}: {:?}", server.name, checked.err());
        out.insert(server.name.clone(), entry);
    }
    Ok(Value::Object(out))
}

#[test]
fn password_inputs_become_secret_references() {
    let refused = |server: &str, field: &str| {
        Err(format!(
            "invalid entry for server `{server}`: password input `tok` is used in `{field}`, where no secret reference is read (only `env` and `headers` values); not imported, so the password is not written in clear"
        ))
    };
    for (servers, expect) in [
        // In `env`: a reference; a plain input beside it is filled.
        (
            json!({"s": {"command": "x", "env": {"TOKEN": "${input:tok}", "REGION": "${input:region}"}}}),
            Ok(
                json!({"s": {"type": "stdio", "command": "x", "env": {"TOKEN": "${secret:vscode.tok}", "REGION": "eu-1"}}}),
            ),
        ),
        // In `headers`, inside a longer value.
        (
            json!({"h": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${input:tok}"}}}),
            Ok(
                json!({"h": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${secret:vscode.tok}"}}}),
            ),
        ),
        // Non-password inputs are filled as before, anywhere.
        (
            json!({"p": {"command": "x", "args": ["--region", "${input:region}"]}}),
            Ok(json!({"p": {"type": "stdio", "command": "x", "args": ["--region", "eu-1"]}})),
        ),
        // Anywhere else a password would be written in clear: refused.
        (
            json!({"a": {"command": "x", "args": ["--token", "${input:tok}"]}}),
            refused("a", "args.1"),
        ),
        (
            json!({"u": {"type": "http", "url": "https://api.example.com/mcp?key=${input:tok}"}}),
            refused("u", "url"),
        ),
        (
            json!({"c": {"command": "${input:tok}"}}),
            refused("c", "command"),
        ),
    ] {
        assert_eq!(secret_import(servers.clone()), expect, "{servers}");
    }
}

#[test]
fn suggested_secret_names_follow_the_rule_and_never_collide() {
    for (id, expect) in [
        ("tok", "vscode.tok"),
        ("api-key_2.v", "vscode.api-key_2.v"),
        ("a b", "vscode.a_b-"),
        ("a_b c", "vscode.a_b_c-"),
        ("ключ", "vscode.____-"),
        ("", "vscode."),
    ] {
        let name = input_secret_name(id).expect("a name").to_string();
        if expect.ends_with('-') {
            // Changed to follow the rule: the id's hash keeps it apart.
            assert!(
                name.starts_with(expect) && name.len() == expect.len() + 16,
                "{id:?}: {name}"
            );
        } else {
            assert_eq!(name, expect, "{id:?}");
        }
        assert_eq!(
            input_secret_name(id).expect("a name").to_string(),
            name,
            "deterministic"
        );
    }
    let long = "x ".repeat(200);
    let name = input_secret_name(&long).expect("a long id is cut");
    assert!(name.as_str().len() <= crate::secret::MAX_SECRET_NAME);
    assert_ne!(
        input_secret_name("a b").expect("name"),
        input_secret_name("a_b").expect("name")
    );
    assert_ne!(
        input_secret_name("a b").expect("name"),
        input_secret_name("a/b").expect("name")
    );
}

#[test]
fn files_and_found_files() {
    let home = tempfile::tempdir().expect("tempdir");
    let project = tempfile::tempdir().expect("tempdir");
    let dirs = ImportDirs {
        home: home.path().to_path_buf(),
        project: Some(project.path().to_path_buf()),
        config_dir: None,
    };
    let write = |path: PathBuf, text: &str| {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write(
        home.path().join(".cursor/mcp.json"),
        r#"{"mcpServers":{"a":{"command":"x"},"b":{"url":"https://h"},"c":{"command":"y"}}}"#,
    );
    write(
        project.path().join(".gemini/settings.json"),
        r#"{"mcpServers":{"g":{"httpUrl":"https://h"}}}"#,
    );
    write(home.path().join(".codex/config.toml"), "model = \"o3\"\n");
    let found: Vec<String> = found_files(&dirs)
        .iter()
        .map(|f| {
            format!(
                "{} {} {:?} {}",
                f.host,
                f.path
                    .strip_prefix(home.path())
                    .or_else(|_| f.path.strip_prefix(project.path()))
                    .unwrap_or(&f.path)
                    .display(),
                f.reach,
                f.servers
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            "cursor .cursor/mcp.json User 3",
            "gemini .gemini/settings.json Project 1"
        ]
    );
    let files: Vec<String> = Host::Zed
        .files(&ImportDirs {
            config_dir: Some("/xdg".into()),
            ..dirs.clone()
        })
        .iter()
        .map(|f| format!("{:?} {}", f.reach, f.path.display()))
        .collect();
    assert_eq!(files[0], "User /xdg/zed/settings.json");
}

/// Files as the hosts write them (from their documentation), imported whole.
#[test]
fn realistic_files() {
    let files: [(Host, &str); 8] = [
        (
            Host::ClaudeDesktop,
            include_str!("testdata/claude_desktop_config.json"),
        ),
        (Host::Cursor, include_str!("testdata/cursor_mcp.json")),
        (Host::VsCode, include_str!("testdata/vscode_mcp.json")),
        (Host::Codex, include_str!("testdata/codex_config.toml")),
        (Host::Gemini, include_str!("testdata/gemini_settings.json")),
        (
            Host::Windsurf,
            include_str!("testdata/windsurf_mcp_config.json"),
        ),
        (Host::Zed, include_str!("testdata/zed_settings.json")),
        (Host::Goose, include_str!("testdata/goose_config.yaml")),
    ];
    for (host, text) in files {
        let imported = import_text(host, text, Path::new("f"), &cx());
        // Keys sorted, so the snapshot holds whether or not the build keeps
        // insertion order (serde_json's `preserve_order`, the host's choice).
        insta::with_settings!({sort_maps => true}, {
            insta::assert_json_snapshot!(format!("realistic_{}", host.id()), summary(&imported));
        });
    }
}

proptest::proptest! {
    // Arbitrary text, and text shaped like each format, never panics and
    // every entry that comes out passes the loader's own check.
    #[test]
    fn any_text_translates_without_panicking(
        text in "[\\[\\]{}:,\"'#=\\-a-z0-9 \\n\\\\&*!|>.$]{0,200}",
        host in proptest::sample::select(Host::ALL.to_vec()),
    ) {
        let imported = import_text(host, &text, Path::new("f"), &cx());
        for server in &imported.servers {
            let mut entry = server.entry.clone();
            let stand_ins = server.inputs.iter().map(|id| (id.clone(), "x".to_owned())).collect();
            fill_inputs(&mut entry, &stand_ins);
            proptest::prop_assert!(crate::edit::validate_entry(&server.name, entry, &Default::default(), &Default::default(), crate::Scope::User).is_ok());
        }
    }
}

/// How one format writes a file of two servers: `big` with `args` (the
/// list given, written on one line) and `env` (the map given, on one
/// line), and `ok`, a plain one.
fn long_line_file(host: Host, args: &[&str], env: &[(String, &str)]) -> String {
    match host {
        Host::Codex => {
            let env: Vec<String> = env.iter().map(|(k, v)| format!("{k} = {v}")).collect();
            format!(
                "[mcp_servers.big]\ncommand = \"x\"\nargs = [{}]\nenv = {{{}}}\n[mcp_servers.ok]\ncommand = \"y\"\n",
                args.join(","),
                env.join(",")
            )
        }
        Host::Goose => {
            let env: Vec<String> = env.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            format!(
                "extensions:\n  big:\n    type: stdio\n    cmd: x\n    args: [{}]\n    envs: {{{}}}\n  ok:\n    type: stdio\n    cmd: y\n",
                args.join(","),
                env.join(",")
            )
        }
        _ => {
            let map = match host {
                Host::VsCode => "servers",
                Host::Zed => "context_servers",
                _ => "mcpServers",
            };
            let env: Vec<String> = env.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
            format!(
                "{{\"{map}\":{{\n\"big\":{{\"command\":\"x\",\n\"args\":[{}],\n\"env\":{{{}}}}},\n\"ok\":{{\"command\":\"y\"}}}}}}\n",
                args.join(","),
                env.join(",")
            )
        }
    }
}

/// 1-based line and column (in characters) of the last `needle` in
/// `text`, counted from the start of the text.
fn position_of_last(text: &str, needle: &str) -> (u32, u32) {
    let offset = text.rfind(needle).unwrap();
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[start..].chars().count() + 1;
    (line as u32, column as u32)
}

/// Files with 400,000 values on one line (and 200,000 keys on one line)
/// import in `hosts`' format, with diagnostics positioned at the end of
/// the line: every reader computes a position from one index per file,
/// whatever the length of the line (the `import` bench measures the
/// time). A file past the size cap, all on one line, is refused at once.
#[track_caller]
fn check_long_lines(hosts: &[Host]) {
    const ITEMS: usize = 400_000;
    const KEYS: usize = 200_000;
    let quoted = "\"é\"";
    for &host in hosts {
        let table = match host {
            Host::Codex => "{t = 1}",
            Host::Goose => "{t: 1}",
            _ => "{\"t\":1}",
        };
        // The last argument is a table: the entry is refused there.
        let mut args = vec![quoted; ITEMS - 1];
        args.push(table);
        let text = long_line_file(host, &args, &[]);
        let (line, column) = position_of_last(&text, table);
        let got = summary(&import_text(host, &text, Path::new("f"), &cx()));
        let want = format!(
            "{line}:{column} Error server `big`: `args` element {} is not a string; not imported",
            ITEMS - 1
        );
        assert_eq!(got["diagnostics"], json!([want]), "{host}");
        assert_eq!(got["servers"]["ok"]["command"], "y", "{host}");

        let huge = format!("{}\n", "x".repeat(10 << 20));
        let got = summary(&import_text(host, &huge, Path::new("f"), &cx()));
        assert_eq!(
            got["diagnostics"],
            json!(["1:1 Error file is larger than 8 MiB"]),
            "{host}"
        );
    }
    // The same reader serves every JSON host: the rest once per reader.
    let host = hosts[0];
    let table = match host {
        Host::Codex => "{t = 1}",
        Host::Goose => "{t: 1}",
        _ => "{\"t\":1}",
    };
    let args = vec![quoted; ITEMS];
    let text = long_line_file(host, &args, &[]);
    let imported = import_text(host, &text, Path::new("f"), &cx());
    assert!(imported.diagnostics.is_empty(), "{host}");
    let big = imported.servers.iter().find(|s| s.name == "big").unwrap();
    assert_eq!(
        big.entry["args"].as_array().map(Vec::len),
        Some(ITEMS),
        "{host}"
    );

    // 200,000 keys on one line, the last one's value not a string: it
    // alone is left out, reported where it is.
    let mut env: Vec<(String, &str)> = (0..KEYS).map(|i| (format!("K{i}"), quoted)).collect();
    env.push(("LAST".to_owned(), table));
    let text = long_line_file(host, &[], &env);
    let needle = match host {
        Host::Codex | Host::Goose => "LAST",
        _ => "\"LAST\"",
    };
    let (line, column) = position_of_last(&text, needle);
    let imported = import_text(host, &text, Path::new("f"), &cx());
    assert!(imported.diagnostics.is_empty(), "{host}");
    let big = imported.servers.iter().find(|s| s.name == "big").unwrap();
    let untranslated: Vec<String> = big
        .untranslated
        .iter()
        .map(|u| format!("{}@{}:{}", u.field, u.line, u.column))
        .collect();
    let field = if host == Host::Goose { "envs" } else { "env" };
    assert_eq!(
        untranslated,
        [format!("{field}.LAST@{line}:{column}")],
        "{host}"
    );
    assert_eq!(
        big.entry["env"].as_object().map(|e| e.len()),
        Some(KEYS),
        "{host}"
    );
}

#[test]
fn long_lines_of_toml_import_with_their_positions() {
    check_long_lines(&[Host::Codex]);
}

#[test]
fn long_lines_of_yaml_import_with_their_positions() {
    check_long_lines(&[Host::Goose]);
}

#[test]
fn long_lines_of_json_import_with_their_positions() {
    // One host per server map's place; the others read the same way.
    check_long_lines(&[Host::VsCode, Host::ClaudeDesktop, Host::Zed]);
}

/// A YAML error the parser marks past the text (found by the
/// `import_readers` fuzz target) is positioned at the end of the text.
#[test]
fn yaml_errors_are_positioned_inside_the_text() {
    let raw =
        include_bytes!("../../../../fuzz/seeds/import_readers/regression-yaml-error-past-the-text");
    let text = String::from_utf8_lossy(&raw[3..]).replace('\0', "");
    let imported = import_text(Host::Goose, &text, Path::new("f"), &cx());
    let lines: Vec<&str> = text.split('\n').collect();
    assert!(!imported.diagnostics.is_empty());
    for d in &imported.diagnostics {
        let line = d.line.unwrap() as usize;
        assert!(line >= 1 && line <= lines.len(), "{d:?}");
        let width = lines[line - 1].chars().count() as u32;
        assert!(d.column.unwrap() <= width + 1, "{d:?}");
    }
}
