//! The security pass (SECURITY.md): each defence proved against real
//! processes and loopback servers, never against a mock that agrees with us.
//!
//! - env safety: refused keys and the host's own variables never reach a
//!   child (read back from the child itself, and from server-everything's
//!   `get-env` when the peers are installed);
//! - no shell: metacharacters in a command, its arguments or a
//!   `headersHelper` are passed literally;
//! - plugin paths never leave their root;
//! - a legacy SSE `endpoint` on another origin is refused;
//! - a redirect to another origin is refused, so no header or body travels
//!   there (streamable HTTP, legacy SSE, OAuth metadata and token requests);
//! - secrets never reach a log line (TRACE), an error or a `Debug`;
//! - token files are 0600 in a 0700 folder;
//! - a `headersHelper` is killed with everything it started at its limit;
//! - project servers and their `headersHelper`s do not run until approved.

#![allow(clippy::unwrap_used, clippy::print_stderr)]

use mcp_test_peers as peers;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use mcp_catalog::{McpConnector, ServerSet, SessionRuntime};
use mcp_config::{
    LoadOptions, RemoteConfig, ServerConfig, StdioConfig, Timeouts, TransportConfig, load,
};
use mcp_integration_tests::harness::{entry, test_env};
use mcp_integration_tests::net::serve_streamable_http;
use mcp_integration_tests::server::{ExampleServer, ServerOptions};
use mcp_oauth::{
    AuthError, AuthProvider, Challenge, ChallengeOutcome, CredentialStore, FileCredentialStore,
    Secret, StoreKey, StoredCredentials, TokenSet,
};
use mcp_transport::AuthProviders;
use mcp_transport::kinds::run_headers_helper_with_timeout;
use mcp_transport::{ConnectOptions, connect};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const ARGV_REPORT: &str = env!("CARGO_BIN_EXE_mcp-argv-report");
const EXAMPLE_SERVER: &str = env!("CARGO_BIN_EXE_mcp-example-server");

/// Arguments a shell would act on. Passed literally, none of them creates
/// the marker file.
fn shell_bait(marker: &Path) -> Vec<String> {
    let m = marker.display();
    vec![
        format!("; touch {m}"),
        format!("$(touch {m})"),
        format!("`touch {m}`"),
        format!("| touch {m}"),
        format!("&& touch {m}"),
        "$HOME".to_owned(),
        "*".to_owned(),
        "a b".to_owned(),
    ]
}

fn quick() -> Timeouts {
    Timeouts::default().with_connect(Duration::from_secs(10))
}

fn stdio(name: &str, command: &str, args: &[String], env: &[(&str, &str)]) -> ServerConfig {
    entry(
        name,
        TransportConfig::Stdio(
            StdioConfig::new(command.to_owned())
                .with_args(args.to_vec())
                .with_env(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))),
        ),
        quick(),
    )
}

fn remote(url: &str, headers: &[(&str, &str)], helper: Option<&str>) -> RemoteConfig {
    let mut remote = RemoteConfig::new(url).with_headers(
        headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    remote.headers_helper = helper.map(str::to_owned);
    remote
}

/// The report `mcp-argv-report` wrote: its arguments and environment.
fn read_report(path: &Path) -> (Vec<String>, BTreeMap<String, String>) {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no report at {}: {e}", path.display()));
    let value: Value = serde_json::from_str(&text).unwrap();
    (
        serde_json::from_value(value["args"].clone()).unwrap(),
        serde_json::from_value(value["env"].clone()).unwrap(),
    )
}

// ---------------------------------------------------------------- env safety

/// Entry variables a config may try to smuggle in, in several spellings.
const DANGEROUS: &[(&str, &str)] = &[
    ("LD_PRELOAD", "/nonexistent/evil.so"),
    ("ld_library_path", "/nonexistent"),
    (" DYLD_INSERT_LIBRARIES ", "/nonexistent/evil.dylib"),
    ("NODE_OPTIONS", "--require /nonexistent/evil.js"),
    ("PYTHONPATH", "/nonexistent"),
    ("BASH_FUNC_ls%%", "() { touch /tmp/evil; }"),
    ("BASH_ENV", "/nonexistent/evil.sh"),
    ("GLIBC_TUNABLES", "glibc.malloc.check=3"),
];

/// The host's environment: a secret of its own and a dangerous key too.
fn host_env() -> BTreeMap<String, String> {
    let mut env = test_env();
    env.insert("HOST_SECRET_TOKEN".into(), "host-secret-value".into());
    env.insert("LD_PRELOAD".into(), "/nonexistent/host-evil.so".into());
    env.insert("HOME".into(), "/home/someone".into());
    env
}

/// Checks a child's environment: no refused key in any case, no host
/// variable outside the allow-list, the entry's safe key present.
#[track_caller]
fn check_child_env(env: &BTreeMap<String, String>, via: &str) {
    let host = host_env();
    for (key, value) in env {
        // An entry may not set `HOME` or `SHELL`, but the child inherits
        // the host's own (the allow-list): only the host's value may show.
        let inherited = mcp_config::env::inherited_env_names().contains(&key.as_str())
            && host.get(key) == Some(value);
        assert!(
            !mcp_config::env::is_dangerous_env_key(key) || inherited,
            "{via}: refused key `{key}` reached the child"
        );
    }
    assert!(
        !env.contains_key("HOST_SECRET_TOKEN"),
        "{via}: a host variable outside the allow-list reached the child"
    );
    assert_eq!(
        env.get("SAFE_SETTING").map(String::as_str),
        Some("visible"),
        "{via}"
    );
    assert_eq!(
        env.get("HOME").map(String::as_str),
        Some("/home/someone"),
        "{via}"
    );
}

#[tokio::test]
async fn env_safety_keys_never_reach_a_child() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let report_text = report.display().to_string();
    let mut env: Vec<(&str, &str)> = DANGEROUS.to_vec();
    env.push(("SAFE_SETTING", "visible"));
    env.push(("ARGV_REPORT", &report_text));

    // Built by hand (a host that skips the loader) ...
    let by_hand = stdio("by-hand", ARGV_REPORT, &[], &env);
    // ... and read from a config file, where each refused key is an error.
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let entry_env: serde_json::Map<String, Value> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), json!(v)))
        .collect();
    let file = json!({"mcpServers": {"from-file": {"command": ARGV_REPORT, "env": entry_env}}});
    std::fs::write(home.join(".claude.json"), file.to_string()).unwrap();
    let config = load(&LoadOptions::default().with_home(home));
    let refused: Vec<&str> = config
        .diagnostics
        .iter()
        .filter(|d| d.level == mcp_config::Level::Error)
        .filter_map(|d| d.field.as_deref())
        .collect();
    assert_eq!(refused.len(), DANGEROUS.len(), "{:#?}", config.diagnostics);
    let from_file = config.server("from-file").unwrap().config.clone();

    let options = ConnectOptions::default().with_env(host_env());
    for server in [by_hand, from_file] {
        let _ = std::fs::remove_file(&report);
        // The reporter is no MCP server: the handshake fails after it wrote.
        assert!(connect(&server, &options).await.is_err());
        let (_, child_env) = read_report(&report);
        check_child_env(&child_env, &server.name);
    }
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn env_safety_holds_for_a_real_peer_reading_its_own_environment() {
    let script = peers::everything_script();
    let mut env: Vec<(&str, &str)> = DANGEROUS.to_vec();
    env.push(("SAFE_SETTING", "visible"));
    let server = stdio(
        "everything",
        &peers::node22().display().to_string(),
        &[script.display().to_string(), "stdio".to_owned()],
        &env,
    );
    // A leaked NODE_OPTIONS (`--require` of a missing file) would stop Node
    // before the handshake, so connecting at all is already evidence.
    let mut host = host_env();
    host.insert(
        "NODE_OPTIONS".into(),
        "--require /nonexistent/evil.js".into(),
    );
    let options = ConnectOptions::default().with_env(host);
    let session = connect(&server, &options).await.unwrap();
    let result = session.call_tool("get-env", Some(json!({}))).await.unwrap();
    session.close().await.unwrap();
    let text = result.content[0].as_text().unwrap();
    let start = text.find('{').unwrap();
    let child_env: BTreeMap<String, String> = serde_json::from_str(&text[start..]).unwrap();
    check_child_env(&child_env, "server-everything get-env");
}

// ------------------------------------------------------------------ no shell

#[tokio::test]
async fn no_shell_spawns_a_stdio_server() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let report = dir.path().join("report.json");
    let args = shell_bait(&marker);
    let report_text = report.display().to_string();
    let server = stdio("bait", ARGV_REPORT, &args, &[("ARGV_REPORT", &report_text)]);
    let options = ConnectOptions::default().with_env(test_env());
    assert!(connect(&server, &options).await.is_err());
    let (received, _) = read_report(&report);
    assert_eq!(received, args, "the child did not get the literal argv");

    // Metacharacters in the command itself name a program that does not
    // exist; nothing runs them.
    for command in [
        format!("{ARGV_REPORT}; touch {}", marker.display()),
        format!("touch {}", marker.display()),
        format!("$(touch {})", marker.display()),
    ] {
        let server = stdio("bait-command", &command, &[], &[]);
        let error = connect(&server, &options).await.unwrap_err().to_string();
        assert!(error.contains("bait-command"), "{error}");
    }
    assert!(!marker.exists(), "a shell ran one of the arguments");
}

#[tokio::test]
async fn no_shell_runs_a_headers_helper() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let report = dir.path().join("report.json");
    let args = shell_bait(&marker);
    let mut argv = vec![ARGV_REPORT.to_owned(), report.display().to_string()];
    argv.extend(args.iter().cloned());
    let command = shell_words::join(&argv);
    let headers = run_headers_helper_with_timeout(
        "helper-bait",
        "http://127.0.0.1:9/mcp",
        &command,
        Duration::from_secs(10),
    )
    .await
    .unwrap();
    assert!(headers.is_empty());
    let (received, env) = read_report(&report);
    assert_eq!(
        received[1..],
        args[..],
        "the helper did not get the literal argv"
    );
    assert_eq!(
        env.get("CLAUDE_CODE_MCP_SERVER_NAME").map(String::as_str),
        Some("helper-bait")
    );
    // Unquoted metacharacters are words too, never operators.
    let unquoted = format!(
        "{ARGV_REPORT} {} ; touch {m} && touch {m} | touch {m}",
        report.display(),
        m = marker.display()
    );
    run_headers_helper_with_timeout("helper-bait", "u", &unquoted, Duration::from_secs(10))
        .await
        .unwrap();
    let (received, _) = read_report(&report);
    assert!(received.iter().any(|arg| arg == ";"), "{received:?}");
    assert!(!marker.exists(), "a shell ran part of the helper's command");
}

/// Whether `pid` is gone (or a zombie nobody needs to kill).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[tokio::test]
async fn a_headers_helper_is_killed_whole_at_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    // A helper that starts a process of its own and never answers.
    let script = format!("sleep 300 & echo $$ $! > {}; wait", pids.display());
    let command = shell_words::join(["sh", "-c", &script]);
    let started = Instant::now();
    let error = run_headers_helper_with_timeout(
        "slow-helper",
        "http://127.0.0.1:9/mcp",
        &command,
        Duration::from_millis(500),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        error,
        "slow-helper: headersHelper `sh` did not finish within 500 ms"
    );
    let text = std::fs::read_to_string(&pids).unwrap();
    let pids: Vec<u32> = text
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "{text}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !pids.iter().all(|pid| gone(*pid)) {
        assert!(
            Instant::now() < deadline,
            "helper processes {pids:?} outlived the limit"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

// ------------------------------------------------------------- plugin roots

#[test]
fn plugin_paths_cannot_escape_their_root() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let outside = base.join("outside.json");
    std::fs::write(
        &outside,
        json!({"mcpServers": {"escaped": {"command": "evil"}}}).to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(base.join("outside-dir")).unwrap();

    /// One plugin whose manifest's `mcpServers` is `servers`, after `setup`
    /// made the files it needs in the root; returns the error messages.
    fn check(base: &Path, name: &str, servers: Value, setup: impl FnOnce(&Path), want: &str) {
        let config = load_plugin(base.join(name), name, servers, setup);
        assert!(
            config.servers.iter().all(|s| s.config.name != "escaped"),
            "{name}: a server from outside the root was loaded"
        );
        let errors: Vec<&str> = config
            .diagnostics
            .iter()
            .filter(|d| d.level == mcp_config::Level::Error)
            .map(|d| d.message.as_str())
            .collect();
        assert!(
            errors.iter().any(|m| m.contains(want)),
            "{name}: no error containing `{want}` in {errors:#?}"
        );
    }

    check(
        &base,
        "dotdot",
        json!("../outside.json"),
        |_| {},
        "leaves the plugin root",
    );
    check(
        &base,
        "absolute",
        json!([outside.display().to_string()]),
        |_| {},
        "leaves the plugin root",
    );
    check(
        &base,
        "symlink",
        json!("./servers.json"),
        |root| std::os::unix::fs::symlink(&outside, root.join("servers.json")).unwrap(),
        "leaves the plugin root",
    );
    check(
        &base,
        "dir-symlink",
        json!("./linked/outside.json"),
        |root| std::os::unix::fs::symlink(base_of(root), root.join("linked")).unwrap(),
        "leaves the plugin root",
    );
    for (name, field) in [
        (
            "command",
            json!({"escaped-cmd": {"command": "../outside-dir/run"}}),
        ),
        (
            "cwd",
            json!({"escaped-cwd": {"command": "run", "cwd": "../outside-dir"}}),
        ),
    ] {
        let config = load_plugin(base.join(format!("inline-{name}")), name, field, |_| {});
        assert!(
            config.runnable().next().is_none(),
            "{name}: a server with a path outside its root may start: {:#?}",
            config.servers
        );
        assert!(
            config
                .diagnostics
                .iter()
                .any(|d| d.level == mcp_config::Level::Error
                    && d.message.contains("leaves the plugin root")),
            "{name}: {:#?}",
            config.diagnostics
        );
    }
}

/// Loads one plugin at `root` whose manifest's `mcpServers` is `servers`,
/// after `setup` made the files it needs there.
fn load_plugin(
    root: PathBuf,
    name: &str,
    servers: Value,
    setup: impl FnOnce(&Path),
) -> mcp_config::LoadedConfig {
    std::fs::create_dir_all(root.join(".claude-plugin")).unwrap();
    setup(&root);
    std::fs::write(
        root.join(".claude-plugin/plugin.json"),
        json!({"name": name, "mcpServers": servers}).to_string(),
    )
    .unwrap();
    load(&LoadOptions::default().with_plugin_roots(vec![root]))
}

fn base_of(root: &Path) -> PathBuf {
    root.parent().unwrap().to_path_buf()
}

// ------------------------------------------------------------------ network

/// A loopback HTTP/1 server answering every request with `answer(port,
/// request head)` and recording each request head.
struct Raw {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Raw {
    async fn start(answer: impl Fn(u16, &str) -> String + Send + Sync + 'static) -> Raw {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        let answer = Arc::new(answer);
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let record = Arc::clone(&record);
                let answer = Arc::clone(&answer);
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    let head_end = loop {
                        let Ok(n) = socket.read(&mut chunk).await else {
                            return;
                        };
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            break at + 4;
                        }
                    };
                    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
                    let length = head
                        .lines()
                        .find_map(|line| {
                            let (name, value) = line.split_once(':')?;
                            name.eq_ignore_ascii_case("content-length")
                                .then(|| value.trim().parse::<usize>().ok())?
                        })
                        .unwrap_or(0);
                    while buf.len() < head_end + length {
                        match socket.read(&mut chunk).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    record.lock().unwrap().push(head.clone());
                    let response = answer(port, &head);
                    let _ = socket.write_all(response.as_bytes()).await;
                    // Keep an event stream open for a while.
                    tokio::time::sleep(Duration::from_secs(2)).await;
                });
            }
        });
        Raw { port, seen }
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

/// Answers everything with a 500, so a request that arrives fails visibly.
async fn sink() -> Raw {
    Raw::start(|_, _| {
        "HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            .to_owned()
    })
    .await
}

fn redirect_to(location: String) -> String {
    format!(
        "HTTP/1.1 307 Temporary Redirect\r\nlocation: {location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    )
}

/// A host's bearer token, kept as a `Secret` like `OAuthProvider` keeps it.
#[derive(Debug)]
struct StaticToken(Secret);

#[async_trait]
impl AuthProvider for StaticToken {
    async fn authorization(&self) -> Result<Option<String>, AuthError> {
        Ok(Some(format!("Bearer {}", self.0.expose())))
    }

    async fn on_challenge(&self, _: &Challenge) -> Result<ChallengeOutcome, AuthError> {
        Ok(ChallengeOutcome::GiveUp)
    }
}

#[derive(Debug)]
struct Everyone(Arc<dyn AuthProvider>);

impl AuthProviders for Everyone {
    fn provider_for(&self, _: &ServerConfig) -> Option<Arc<dyn AuthProvider>> {
        Some(Arc::clone(&self.0))
    }
}

fn with_token(token: &'static str) -> ConnectOptions {
    ConnectOptions::default().with_auth(Arc::new(Everyone(Arc::new(StaticToken(Secret::new(
        token,
    ))))))
}

#[tokio::test]
async fn an_sse_endpoint_on_another_origin_is_refused() {
    let elsewhere = sink().await;
    let target = format!("http://127.0.0.1:{}/message?sessionId=1", elsewhere.port);
    let sse = Raw::start(move |_, _| {
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\nevent: endpoint\ndata: {target}\n\n"
        )
    })
    .await;
    let server = entry(
        "sse-elsewhere",
        TransportConfig::Sse(remote(
            &format!("http://127.0.0.1:{}/sse", sse.port),
            &[("X-Api-Key", "sse-key-value")],
            None,
        )),
        quick(),
    );
    let error = connect(&server, &with_token("sse-token-value"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("sse-elsewhere") && error.contains("another origin"),
        "{error}"
    );
    assert_eq!(sse.seen().len(), 1);
    assert!(elsewhere.seen().is_empty(), "{:?}", elsewhere.seen());
}

#[tokio::test]
async fn redirects_never_carry_credentials_to_another_origin() {
    for kind in ["http", "sse"] {
        let elsewhere = sink().await;
        let target = format!("http://127.0.0.1:{}/mcp", elsewhere.port);
        let redirecting = Raw::start(move |_, _| redirect_to(target.clone())).await;
        let url = format!("http://127.0.0.1:{}/mcp", redirecting.port);
        let config = remote(&url, &[("X-Api-Key", "redirect-key-value")], None);
        let transport = if kind == "http" {
            TransportConfig::Http(config)
        } else {
            TransportConfig::Sse(config)
        };
        let server = entry("redirected", transport, quick());
        let error = connect(&server, &with_token("redirect-token-value"))
            .await
            .unwrap_err()
            .to_string();
        assert!(error.contains("redirected"), "{kind}: {error}");
        assert!(
            error.contains("refused a redirect") && error.contains("another origin"),
            "{kind}: {error}"
        );
        // Over streamable HTTP the session asks twice, and meets the
        // redirect both times: the `server/discover` probe, whose refusal
        // reads as a legacy server, then `initialize`.
        let asked = if kind == "http" { 2 } else { 1 };
        assert_eq!(redirecting.seen().len(), asked, "{kind}");
        assert!(
            elsewhere.seen().is_empty(),
            "{kind}: the other origin was reached: {:?}",
            elsewhere.seen()
        );
    }

    // Within one origin a redirect is followed, credentials and all: the
    // refusal above is about the origin, not about redirects.
    let same = Raw::start(|port, head| {
        if head.starts_with("POST /old") {
            redirect_to(format!("http://127.0.0.1:{port}/mcp"))
        } else {
            "HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                .to_owned()
        }
    })
    .await;
    let server = entry(
        "same-origin",
        TransportConfig::Http(remote(
            &format!("http://127.0.0.1:{}/old", same.port),
            &[("X-Api-Key", "same-origin-key")],
            None,
        )),
        quick(),
    );
    assert!(
        connect(&server, &with_token("same-origin-token"))
            .await
            .is_err()
    );
    // Twice over: the `server/discover` probe (whose 500 reads as a
    // legacy server), then `initialize`, each redirected once.
    let seen = same.seen();
    assert_eq!(seen.len(), 4, "{seen:?}");
    let followed = seen[1].to_ascii_lowercase();
    assert!(followed.starts_with("post /mcp"), "{followed}");
    assert!(
        followed.contains("x-api-key: same-origin-key"),
        "{followed}"
    );
    assert!(
        followed.contains("authorization: bearer same-origin-token"),
        "{followed}"
    );
}

// ------------------------------------------------------------------ secrets

/// Everything logged by this test binary, at TRACE, from `tracing` and `log`.
fn captured_logs() -> &'static Mutex<Vec<u8>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&logs);
        let _ = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || LogWriter(Arc::clone(&sink)))
            .try_init();
        logs
    })
}

struct LogWriter(Arc<Mutex<Vec<u8>>>);

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

const SECRETS: &[&str] = &[
    "hdr-secret-5f1c",
    "env-secret-9a2e",
    "tok-secret-77d0",
    "helper-secret-c3b4",
    "refresh-secret-0e11",
    "client-secret-aa42",
];

#[track_caller]
fn assert_no_secret(what: &str, text: &str) {
    for secret in SECRETS {
        assert!(
            !text.contains(secret),
            "{what} contains the secret `{secret}`:\n{text}"
        );
    }
}

#[tokio::test]
async fn secrets_never_reach_logs_errors_or_debug() {
    let logs = captured_logs();
    let dir = tempfile::tempdir().unwrap();
    let mut shown: Vec<(String, String)> = Vec::new();

    // A full streamable HTTP session with a static header, a helper header
    // and a bearer token.
    let http = serve_streamable_http(Arc::new(ExampleServer::new(ServerOptions::default()))).await;
    // The helper reads its secret from a file, so only its output holds it.
    let secret_file = dir.path().join("helper-secret");
    std::fs::write(&secret_file, "helper-secret-c3b4").unwrap();
    let helper_with = |shape: &str| {
        let script = format!("printf '{shape}' \"$(cat {})\"", secret_file.display());
        shell_words::join(["sh", "-c", &script])
    };
    let helper = &helper_with(r#"{"X-Helper":"%s"}"#);
    let remote_server = entry(
        "remote",
        TransportConfig::Http(remote(
            &http.url,
            &[("X-Api-Key", "hdr-secret-5f1c")],
            Some(helper),
        )),
        quick(),
    );
    let options = with_token("tok-secret-77d0");
    let session = connect(&remote_server, &options).await.unwrap();
    session.list_tools().await.unwrap();
    session
        .call_tool("echo", Some(json!({"text": "hello"})))
        .await
        .unwrap();
    shown.push(("remote session Debug".into(), format!("{session:?}")));
    session.close().await.unwrap();
    shown.push(("remote config Debug".into(), format!("{remote_server:?}")));
    shown.push(("connect options Debug".into(), format!("{options:?}")));

    // A full stdio session whose entry has a secret env value, from a host
    // environment holding one too.
    let local = stdio(
        "local",
        EXAMPLE_SERVER,
        &[],
        &[("API_TOKEN", "env-secret-9a2e")],
    );
    let mut host = test_env();
    host.insert("HOST_TOKEN".into(), "env-secret-9a2e".into());
    let options = ConnectOptions::default().with_env(host);
    let session = connect(&local, &options).await.unwrap();
    session.list_tools().await.unwrap();
    shown.push(("stdio session Debug".into(), format!("{session:?}")));
    session.close().await.unwrap();
    shown.push(("stdio config Debug".into(), format!("{local:?}")));
    shown.push(("stdio connect options Debug".into(), format!("{options:?}")));

    // Failures: a refused token, a spawn failure, a bad header value, a
    // helper that fails.
    let refused = Raw::start(|_, _| {
        "HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer error=\"invalid_token\"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_owned()
    })
    .await;
    let failures = [
        (
            entry(
                "refused",
                TransportConfig::Http(remote(
                    &format!("http://127.0.0.1:{}/mcp", refused.port),
                    &[("X-Api-Key", "hdr-secret-5f1c")],
                    None,
                )),
                quick(),
            ),
            with_token("tok-secret-77d0"),
        ),
        (
            stdio(
                "missing",
                "/nonexistent/server",
                &[],
                &[("API_TOKEN", "env-secret-9a2e")],
            ),
            ConnectOptions::default(),
        ),
        (
            entry(
                "bad-header",
                TransportConfig::Http(remote(
                    &http.url,
                    &[("X-Api-Key", "hdr-secret-5f1c\nX-Evil: 1")],
                    None,
                )),
                quick(),
            ),
            ConnectOptions::default(),
        ),
        (
            entry(
                "bad-helper",
                TransportConfig::Http(remote(
                    &http.url,
                    &[],
                    Some(&helper_with(r#"{"X-Helper": ["%s"]}"#)),
                )),
                quick(),
            ),
            ConnectOptions::default(),
        ),
    ];
    for (server, options) in &failures {
        let error = connect(server, options).await.unwrap_err();
        let text = error.to_string();
        assert!(text.contains(&server.name), "{text}");
        shown.push((format!("{} error", server.name), text));
        shown.push((format!("{} error Debug", server.name), format!("{error:?}")));
    }

    // The loaded configuration, from files holding every kind of secret.
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let file = json!({
        "mcpServers": {
            "remote": {"type": "http", "url": http.url, "headers": {"X-Api-Key": "hdr-secret-5f1c"}},
            "local": {"command": "x", "env": {"API_TOKEN": "env-secret-9a2e", "LD_PRELOAD": "env-secret-9a2e"}},
            "expanded": {"command": "x", "env": {"T": "${HOST_TOKEN}"}},
        },
    });
    std::fs::write(home.join(".claude.json"), file.to_string()).unwrap();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(
        home.join(".claude/settings.json"),
        json!({"env": {"ANTHROPIC_API_KEY": "env-secret-9a2e"}}).to_string(),
    )
    .unwrap();
    let load_options = LoadOptions::default()
        .with_home(home)
        .with_env(BTreeMap::from([(
            "HOST_TOKEN".to_owned(),
            "env-secret-9a2e".to_owned(),
        )]));
    let config = load(&load_options);
    assert!(config.server("expanded").is_some());
    shown.push(("load options Debug".into(), format!("{load_options:?}")));
    shown.push(("loaded config Debug".into(), format!("{config:?}")));
    for diagnostic in &config.diagnostics {
        shown.push((
            "diagnostic".into(),
            format!("{diagnostic:?} {}", diagnostic.message),
        ));
    }
    let report = mcp_config::CheckReport::run(&load_options);
    shown.push(("check report".into(), report.human_lines().join("\n")));
    shown.push(("check report JSON".into(), report.to_json().to_string()));

    // Token types and the store.
    let credentials = StoredCredentials {
        tokens: Some(TokenSet {
            access_token: Secret::new("tok-secret-77d0"),
            refresh_token: Some(Secret::new("refresh-secret-0e11")),
            expires_at: None,
            scope: None,
            lifetime: None,
        }),
        client: Some(mcp_oauth::ClientRegistration {
            client_id: "client".into(),
            client_secret: Some(Secret::new("client-secret-aa42")),
            token_endpoint_auth_method: "client_secret_basic".into(),
            redirect_uri: None,
        }),
        ..StoredCredentials::default()
    };
    shown.push(("credentials Debug".into(), format!("{credentials:?}")));
    let store = FileCredentialStore::new(dir.path().join("credentials"));
    shown.push(("store Debug".into(), format!("{store:?}")));

    for (what, text) in &shown {
        assert_no_secret(what, text);
    }
    let logs = String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
    assert!(
        logs.contains("TRACE") || logs.contains("DEBUG"),
        "nothing was logged, so the check proves nothing"
    );
    assert_no_secret("the TRACE log", &logs);
}

// ---------------------------------------------------------------- token files

#[cfg(unix)]
#[test]
fn token_files_are_private() {
    use std::os::unix::fs::PermissionsExt;

    let dir = tempfile::tempdir().unwrap();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let key = StoreKey::new("secure", "https://example.test/mcp");
    let credentials = StoredCredentials {
        tokens: Some(TokenSet {
            access_token: Secret::new("tok-secret-77d0"),
            refresh_token: None,
            expires_at: None,
            scope: None,
            lifetime: None,
        }),
        ..StoredCredentials::default()
    };

    // A folder the store creates, and one that existed with looser bits.
    let fresh = dir.path().join("fresh/credentials");
    let loose = dir.path().join("loose");
    std::fs::create_dir_all(&loose).unwrap();
    std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o755)).unwrap();
    for folder in [fresh, loose] {
        let store = FileCredentialStore::new(&folder);
        store.save(&key, &credentials).unwrap();
        // A second save replaces the file and keeps it private.
        store.save(&key, &credentials).unwrap();
        let _lock = store.lock(&key).unwrap();
        assert_eq!(mode(&folder), 0o700, "{}", folder.display());
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            assert_eq!(mode(&path), 0o600, "{}", path.display());
        }
        assert_eq!(
            store
                .load(&key)
                .unwrap()
                .unwrap()
                .tokens
                .unwrap()
                .access_token,
            Secret::new("tok-secret-77d0")
        );
    }
}

// ----------------------------------------------------------------- approval

/// A project whose `.mcp.json` names an http server with a `headersHelper`
/// that leaves a report when it runs, shadowing a user server of the same
/// name.
fn project_with_helper(dir: &Path, url: &str, report: &Path) -> LoadOptions {
    let home = dir.join("home");
    let project = dir.join("project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let user = json!({"mcpServers": {"api": {"type": "http", "url": url}}});
    std::fs::write(home.join(".claude.json"), user.to_string()).unwrap();
    let helper = shell_words::join([ARGV_REPORT, &report.display().to_string()]);
    let shipped = json!({"mcpServers": {
        "api": {"type": "http", "url": url, "headersHelper": helper},
        "tool": {"command": ARGV_REPORT, "args": [report.display().to_string()]},
    }});
    std::fs::write(project.join(".mcp.json"), shipped.to_string()).unwrap();
    LoadOptions::default()
        .with_home(home)
        .with_project(project)
        .with_env(test_env())
}

#[tokio::test]
async fn project_servers_and_their_helpers_run_only_once_approved() {
    let dir = tempfile::tempdir().unwrap();
    let http = serve_streamable_http(Arc::new(ExampleServer::new(ServerOptions::default()))).await;
    let report = dir.path().join("ran.json");
    let mut options = project_with_helper(dir.path(), &http.url, &report);
    let connector = || {
        Arc::new(McpConnector::new(
            ConnectOptions::default().with_env(test_env()),
        ))
    };

    let config = load(&options);
    let runtime = SessionRuntime::builder("pending", ServerSet::from_loaded(&config), connector())
        .with_options(mcp_catalog::RuntimeOptions::default().with_materialize(openclaw()))
        .build();
    let catalog = runtime.catalog().await.unwrap();
    runtime.shutdown().await;
    assert!(catalog.tools().is_empty());
    let held: Vec<&str> = catalog
        .diagnostics()
        .iter()
        .map(|d| d.server.as_str())
        .collect();
    assert_eq!(held, ["api", "tool"]);
    assert!(
        !report.exists(),
        "a pending project server or its headersHelper ran"
    );

    // Trusted explicitly, the same servers run: the check above could fail.
    options.trust_project_servers = true;
    let config = load(&options);
    let runtime = SessionRuntime::builder("trusted", ServerSet::from_loaded(&config), connector())
        .with_options(mcp_catalog::RuntimeOptions::default().with_materialize(openclaw()))
        .build();
    let catalog = runtime.catalog().await.unwrap();
    runtime.shutdown().await;
    assert!(report.exists(), "the approved servers did not run");
    assert!(
        catalog
            .tools()
            .iter()
            .any(|tool| tool.name().contains("api")),
        "{:?}",
        catalog.diagnostics()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn oauth_requests_never_follow_a_redirect_to_another_origin() {
    // Metadata discovery, and a client-credentials token request whose body
    // carries the client secret.
    let elsewhere = sink().await;
    let target = elsewhere.port;
    let auth = Raw::start(move |port, head| {
        if head.starts_with("GET /meta") {
            let base = format!("http://127.0.0.1:{port}");
            let body = json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "grant_types_supported": ["client_credentials"],
                "token_endpoint_auth_methods_supported": ["client_secret_post"],
            })
            .to_string();
            format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
        } else if head.starts_with("POST /mcp") {
            "HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_owned()
        } else if head.starts_with("GET /.well-known/") {
            "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_owned()
        } else {
            // `/moved` and `/token` both send the client elsewhere.
            redirect_to(format!("http://127.0.0.1:{target}/stolen"))
        }
    })
    .await;
    let base = format!("http://127.0.0.1:{}", auth.port);
    for (metadata, grant) in [
        ("moved", mcp_oauth::Grant::AuthorizationCode),
        (
            "meta",
            mcp_oauth::Grant::ClientCredentials { private_key: None },
        ),
    ] {
        let mut settings = mcp_oauth::OAuthSettings::new(
            "oauth-redirected",
            format!("{base}/mcp"),
            mcp_config::McpOAuthConfig::default()
                .with_client_id("client")
                .with_auth_server_metadata_url(format!("{base}/{metadata}")),
        );
        settings.grant = grant;
        settings.client_secret = Some(Secret::new("client-secret-aa42"));
        let provider = mcp_oauth::OAuthProvider::new(
            settings,
            Arc::new(mcp_oauth::MemoryCredentialStore::new()),
            Arc::new(mcp_oauth::HeadlessPrompt::new().unwrap()),
        )
        .unwrap();
        let error = provider.login().await.unwrap_err().to_string();
        assert!(error.contains("oauth-redirected"), "{metadata}: {error}");
        assert_no_secret(&format!("{metadata}: oauth error"), &error);
    }
    let seen = auth.seen();
    assert!(
        seen.iter().any(|head| head.starts_with("POST /token")),
        "the token request was not made: {seen:?}"
    );
    assert!(
        elsewhere.seen().is_empty(),
        "an oauth request reached another origin: {:?}",
        elsewhere.seen()
    );
}

/// These tests predate the `claw` default and are about other things
/// than naming: they keep the `server__tool` names they were written for.
fn openclaw() -> mcp_catalog::MaterializeOptions {
    mcp_catalog::MaterializeOptions::default().with_style(mcp_catalog::NamingStyle::OpenClaw)
}
