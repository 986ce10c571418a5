//! Env keys that are not names never reach a child (issue 12 item 2):
//! `"env": {"PYTHONPATH=/srv/hook:": "x"}` used to reach the child as
//! `PYTHONPATH=/srv/hook:=x`, and Python then ran the hook directory's
//! `sitecustomize.py`. Each row goes through the loader (an error
//! diagnostic, the key dropped) and through a hand-built `ServerConfig`
//! (`child_env` filters it), into a real child that reports its
//! environment exactly as the operating system handed it over.

#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use mcp_config::{LoadOptions, ServerConfig, StdioConfig, Timeouts, TransportConfig, load};
use mcp_integration_tests::harness::{entry, test_env};
use mcp_transport::{ConnectOptions, connect};
use serde_json::{Value, json};

const ARGV_REPORT: &str = env!("CARGO_BIN_EXE_mcp-argv-report");

/// Hostile keys, each with the variable it would have set in the child.
const SMUGGLED: &[(&str, &str)] = &[
    ("PYTHONPATH=/srv/hook:", "PYTHONPATH"),
    ("NODE_OPTIONS=--require /srv/hook.js", "NODE_OPTIONS"),
    ("LD_PRELOAD=/srv/hook.so", "LD_PRELOAD"),
    ("BASH_ENV=/srv/hook.sh", "BASH_ENV"),
    ("SAFE=1=2", "SAFE"),
    ("=PYTHONPATH", ""),
    ("A\u{0}PYTHONPATH", "A"),
    ("SPACED NAME", "SPACED NAME"),
    (" PATH", " PATH"),
];

fn stdio(name: &str, command: &str, args: &[&str], env: &[(&str, &str)]) -> ServerConfig {
    entry(
        name,
        TransportConfig::Stdio(
            StdioConfig::new(command.to_owned())
                .with_args(args.iter().map(|a| (*a).to_owned()))
                .with_env(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))),
        ),
        Timeouts::default().with_connect(Duration::from_secs(10)),
    )
}

/// The same entry read from a config file: one error per hostile key,
/// naming the server and the field.
fn from_file(dir: &Path, command: &str, args: &[&str], env: &[(&str, &str)]) -> ServerConfig {
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let entry_env: serde_json::Map<String, Value> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), json!(v)))
        .collect();
    let file =
        json!({"mcpServers": {"from-file": {"command": command, "args": args, "env": entry_env}}});
    std::fs::write(home.join(".claude.json"), file.to_string()).unwrap();
    let config = load(&LoadOptions::default().with_home(home));
    let errors: Vec<_> = config
        .diagnostics
        .iter()
        .filter(|d| d.level == mcp_config::Level::Error)
        .collect();
    let hostile = env
        .iter()
        .filter(|(k, _)| !mcp_config::env::is_env_name(k))
        .count();
    assert_eq!(errors.len(), hostile, "{:#?}", config.diagnostics);
    for d in errors {
        assert_eq!(d.server.as_deref(), Some("from-file"), "{d:?}");
        assert_eq!(d.field.as_deref(), Some("env"), "{d:?}");
        assert!(d.message.contains("not a variable name"), "{d:?}");
    }
    config.server("from-file").unwrap().config.clone()
}

fn read_report(path: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no report at {}: {e}", path.display()));
    let value: Value = serde_json::from_str(&text).unwrap();
    serde_json::from_value(value["env"].clone()).unwrap()
}

#[tokio::test]
async fn env_keys_that_are_not_names_never_reach_a_child() {
    let options = ConnectOptions::default().with_env(test_env());
    for (key, target) in SMUGGLED {
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("report.json");
        let report_text = report.display().to_string();
        let env = [
            (*key, "smuggled-value"),
            ("SAFE_SETTING", "visible"),
            ("ARGV_REPORT", report_text.as_str()),
        ];
        let servers = [
            stdio("by-hand", ARGV_REPORT, &[], &env),
            from_file(dir.path(), ARGV_REPORT, &[], &env),
        ];
        for server in servers {
            let _ = std::fs::remove_file(&report);
            // The reporter is no MCP server: the handshake fails after it
            // wrote (a spawn refused over a NUL byte writes nothing).
            assert!(connect(&server, &options).await.is_err());
            let child = read_report(&report);
            let via = format!("{key:?} via {}", server.name);
            if !target.is_empty() {
                assert!(
                    !child.contains_key(*target),
                    "{via}: `{target}` reached the child: {child:?}"
                );
            }
            assert!(
                child.values().all(|v| !v.contains("smuggled-value")),
                "{via}: the value reached the child: {child:?}"
            );
            assert_eq!(
                child.get("SAFE_SETTING").map(String::as_str),
                Some("visible"),
                "{via}"
            );
        }
    }
}

/// The example with a real interpreter: Python must not run the
/// hook folder's `sitecustomize.py`.
#[tokio::test]
async fn a_smuggled_pythonpath_does_not_run_sitecustomize() {
    // A missing interpreter fails the test: it must not pass unchecked.
    let python = ["/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .expect("python3 in /usr/bin, /usr/local/bin or /bin (the peers need it too)");
    let dir = tempfile::tempdir().unwrap();
    let hook = dir.path().join("hook");
    std::fs::create_dir_all(&hook).unwrap();
    let marker = dir.path().join("hook-ran");
    std::fs::write(
        hook.join("sitecustomize.py"),
        format!(
            "open({:?}, 'w').write('ran')\n",
            marker.display().to_string()
        ),
    )
    .unwrap();
    let ran = dir.path().join("python-ran");
    let script = format!("open({:?}, 'w').write('ran')", ran.display().to_string());
    let key = format!("PYTHONPATH={}:", hook.display());
    let env = [(key.as_str(), "x")];
    let options = ConnectOptions::default().with_env(test_env());
    let servers = [
        stdio("by-hand", python, &["-c", &script], &env),
        from_file(dir.path(), python, &["-c", &script], &env),
    ];
    for server in servers {
        let _ = std::fs::remove_file(&ran);
        assert!(connect(&server, &options).await.is_err());
        assert!(ran.exists(), "{}: python did not start", server.name);
        assert!(
            !marker.exists(),
            "{}: the smuggled PYTHONPATH ran sitecustomize.py",
            server.name
        );
    }
}
