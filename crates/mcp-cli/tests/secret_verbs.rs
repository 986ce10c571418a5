//! `mcp-cli secret` and `${secret:NAME}` end to end, with the real kernel
//! keyring (and the Secret Service where `.ci/run` starts one): a value
//! set on standard input reaches a stdio server's environment and a
//! loopback server's header, and no verb prints it or writes it to a file
//! unless `secret get --show` is asked. Each test files its secrets under
//! a namespace of its own and removes them.

// Test helpers outside `#[test]` functions unwrap too.
#![allow(clippy::unwrap_used)]

mod support;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::post;
use mcp_config::secret::{OsSecretStore, SecretBackend, SecretStore};
use proptest::prelude::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use support::{Run, Tree};

/// A namespace of the kernel keyring (or Secret Service) this test owns;
/// everything in it is removed when it is dropped.
struct Namespace {
    name: String,
    backend: SecretBackend,
}

impl Namespace {
    fn new(tag: &str, backend: SecretBackend) -> Namespace {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        Namespace {
            name: format!("mcp-cli-test-{tag}-{}-{nanos}", std::process::id()),
            backend,
        }
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        if let Ok(store) = OsSecretStore::open_in(self.backend, &self.name) {
            for name in store.names().unwrap_or_default() {
                let _ = store.remove(&name);
            }
        }
    }
}

/// What the loopback server expects in `X-Api-Key`; `/refuse` answers 403.
type Expected = Arc<Mutex<Vec<u8>>>;

async fn mcp(
    State(expected): State<Expected>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let Some(id) = body.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let result = match body["method"].as_str().unwrap_or_default() {
        "initialize" => json!({
            "protocolVersion": body["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "header-check", "version": "1"}
        }),
        "tools/list" => json!({"tools": [{"name": "check", "inputSchema": {"type": "object"}}]}),
        "tools/call" => {
            let got = headers.get("x-api-key").map(|v| v.as_bytes().to_vec());
            let want = expected.lock().unwrap().clone();
            let verdict = if got == Some(want) {
                "match"
            } else {
                "mismatch"
            };
            json!({"content": [{"type": "text", "text": verdict}]})
        }
        _ => {
            return Json(json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "method not found"}}))
            .into_response();
        }
    };
    Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}

/// Starts the loopback server on its own thread; returns its base url.
fn serve(expected: Expected) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let app = axum::Router::new()
                .route(
                    "/mcp",
                    post(mcp).get(|| async { StatusCode::METHOD_NOT_ALLOWED }),
                )
                .route("/refuse", post(|| async { StatusCode::FORBIDDEN }))
                .with_state(expected);
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(format!("http://{}", listener.local_addr().unwrap()))
                .unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    rx.recv().unwrap()
}

fn env_check_script() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/secrets/env_check.py")
        .display()
        .to_string()
}

fn sha256_hex(value: &str) -> String {
    Sha256::digest(value.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A tree whose user file has `env` (stdio, `${secret:API}` in its env),
/// `web` (http, `${secret:API}` in a header), `refuser` (http, answers
/// 403, with the secret in a header) and `orphan` (names a secret no store
/// holds).
fn tree(value: &str, base: &str) -> Tree {
    let tree = Tree::new("empty");
    let servers = json!({
        "env": {"command": "python3", "args": [env_check_script(), "API_KEY", sha256_hex(value)],
                "env": {"API_KEY": "${secret:API}"}},
        "web": {"type": "http", "url": format!("{base}/mcp"),
                "headers": {"X-Api-Key": "${secret:API}"}},
        "refuser": {"type": "http", "url": format!("{base}/refuse"),
                    "headers": {"X-Api-Key": "pre-${secret:API}"}},
        "orphan": {"command": "python3", "args": [env_check_script(), "K", "0"],
                   "env": {"K": "${secret:NOT_SET}"}}
    });
    tree.write(
        "home/.claude.json",
        &serde_json::to_string_pretty(&json!({"mcpServers": servers})).unwrap(),
    );
    tree
}

/// Runs `args` with the namespace's store and `stdin`.
fn run(tree: &Tree, namespace: &Namespace, args: &[&str], stdin: &str) -> Run {
    let mut full = vec![
        "--secret-store",
        namespace.backend.as_str(),
        "--secret-namespace",
        &namespace.name,
    ];
    full.extend_from_slice(args);
    tree.run_with(&full, |command| {
        command.write_stdin(stdin.as_bytes().to_vec());
        if let Some(bus) = std::env::var_os("DBUS_SESSION_BUS_ADDRESS") {
            command.env("DBUS_SESSION_BUS_ADDRESS", bus);
        }
    })
}

#[track_caller]
fn expect(run: &Run, code: i32, stdout: &[&str], stderr: &[&str]) {
    assert_eq!(
        run.code, code,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    for part in stdout {
        assert!(
            run.stdout.contains(part),
            "stdout lacks {part:?}:\n{}",
            run.stdout
        );
    }
    for part in stderr {
        assert!(
            run.stderr.contains(part),
            "stderr lacks {part:?}:\n{}",
            run.stderr
        );
    }
}

fn secret_verbs_and_resolution(backend: SecretBackend, kind: &str) {
    let value = "s3cret value with spaces & $igns";
    let expected: Expected = Arc::new(Mutex::new(value.as_bytes().to_vec()));
    let base = serve(expected);
    let namespace = Namespace::new("verbs", backend);
    let tree = tree(value, &base);

    // Set from standard input: one trailing newline dropped.
    let set = run(
        &tree,
        &namespace,
        &["secret", "set", "API"],
        &format!("{value}\n"),
    );
    expect(&set, 0, &[&format!("secret API stored in the {kind}")], &[]);
    let get = run(&tree, &namespace, &["secret", "get", "API"], "");
    expect(&get, 0, &[&format!("secret API set in the {kind}")], &[]);
    assert!(!get.stdout.contains(value));
    let show = run(&tree, &namespace, &["secret", "get", "API", "--show"], "");
    assert_eq!(show.stdout, format!("{value}\n"));

    // The value reaches the child's environment and the header.
    let call = run(&tree, &namespace, &["call", "mcp__env__check"], "");
    expect(&call, 0, &["match"], &[]);
    assert!(!call.stdout.contains("mismatch"), "{}", call.stdout);
    let call = run(&tree, &namespace, &["call", "mcp__web__check"], "");
    expect(&call, 0, &["match"], &[]);
    assert!(!call.stdout.contains("mismatch"), "{}", call.stdout);

    // The listing names users and flags the secret no store holds.
    let list = run(&tree, &namespace, &["secret", "list"], "");
    expect(
        &list,
        1,
        &[
            "API  used by env, refuser, web",
            "NOT_SET  MISSING, named by orphan",
        ],
        &[],
    );
    let list = run(&tree, &namespace, &["--json", "secret", "list"], "");
    let json: Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(json["store"], kind);
    assert_eq!(
        json["secrets"],
        json!([{"name": "API", "servers": ["env", "refuser", "web"]}])
    );
    assert_eq!(
        json["missing"],
        json!([{"name": "NOT_SET", "servers": ["orphan"]}])
    );

    // A missing secret is an error naming the secret and the server.
    let orphan = run(&tree, &namespace, &["call", "mcp__orphan__check"], "");
    assert_ne!(orphan.code, 0);
    let both = format!("{}{}", orphan.stdout, orphan.stderr);
    assert!(
        both.contains("`NOT_SET`") && both.contains("`orphan`"),
        "{both}"
    );

    // Refusals: an empty value, a bad name; removal, then the error.
    expect(
        &run(&tree, &namespace, &["secret", "set", "API"], "\n"),
        2,
        &[],
        &["empty value"],
    );
    expect(
        &run(&tree, &namespace, &["secret", "set", "a b"], "x"),
        2,
        &[],
        &["not a secret name"],
    );
    let rm = run(&tree, &namespace, &["secret", "rm", "API"], "");
    expect(
        &rm,
        0,
        &[&format!("secret API removed from the {kind}")],
        &[],
    );
    expect(
        &run(&tree, &namespace, &["secret", "rm", "API"], ""),
        1,
        &[],
        &["no secret API"],
    );
    let gone = run(&tree, &namespace, &["call", "mcp__env__check"], "");
    assert_ne!(gone.code, 0);
    let both = format!("{}{}", gone.stdout, gone.stderr);
    assert!(both.contains("`API`") && both.contains("`env`"), "{both}");
}

#[cfg(target_os = "linux")]
#[test]
fn secrets_in_the_kernel_keyring_reach_servers_and_are_never_shown() {
    secret_verbs_and_resolution(SecretBackend::KernelKeyring, "kernel keyring");
}

#[test]
#[ignore = "needs a Secret Service: .ci/run runs it under dbus-run-session with gnome-keyring-daemon"]
fn secrets_in_the_secret_service_reach_servers_and_are_never_shown() {
    secret_verbs_and_resolution(SecretBackend::SecretService, "Secret Service");
}

#[cfg(target_os = "linux")]
#[test]
fn auto_falls_back_to_the_kernel_keyring_without_a_session_bus() {
    let namespace = Namespace::new("auto", SecretBackend::KernelKeyring);
    let tree = Tree::new("empty");
    let set = tree.run_with(
        &["--secret-namespace", &namespace.name, "secret", "set", "A"],
        |command| {
            command
                .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
                .write_stdin("v");
        },
    );
    expect(&set, 0, &["secret A stored in the kernel keyring"], &[]);
}

#[test]
fn a_run_that_names_no_secret_never_opens_a_store() {
    // A store that cannot open (no such backend here) is not asked when
    // no entry names a secret.
    let tree = Tree::new("empty");
    tree.write(
        "home/.claude.json",
        &json!({"mcpServers": {"p": {"command": "python3", "args": [env_check_script(), "K", "0"]}}})
            .to_string(),
    );
    let other = if cfg!(target_os = "macos") {
        "credential-manager"
    } else {
        "keychain"
    };
    let call = tree.run(&["--secret-store", other, "call", "mcp__p__check"]);
    expect(&call, 0, &["mismatch"], &[]);
    let set = tree.run_with(
        &["--secret-store", other, "secret", "set", "A"],
        |command| {
            command.write_stdin("v");
        },
    );
    assert_eq!(set.code, 1, "{}", set.stderr);
    assert!(
        set.stderr.contains("not available on this platform"),
        "{}",
        set.stderr
    );
}

/// Every file under `dir` that holds `needle`.
fn files_holding(dir: &Path, needle: &[u8], found: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            files_holding(&path, needle, found);
        } else if let Ok(bytes) = std::fs::read(&path)
            && bytes.windows(needle.len()).any(|w| w == needle)
        {
            found.push(path.display().to_string());
        }
    }
}

proptest! {
    // Each case runs the CLI a dozen times.
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// For random values, no read verb (listings, `get`, `check-config`,
    /// `probe`, calls that work and calls that fail, `secret list` and
    /// `secret get` without `--show`) prints the value or writes it to a file.
    #[cfg(target_os = "linux")]
    #[test]
    fn no_verb_shows_a_secret(value in "[!-~][ -~]{10,30}[!-~]") {
        let expected: Expected = Arc::new(Mutex::new(value.as_bytes().to_vec()));
        let base = serve(expected);
        let namespace = Namespace::new("prop", SecretBackend::KernelKeyring);
        let tree = tree(&value, &base);
        let set = run(&tree, &namespace, &["secret", "set", "API"], &value);
        prop_assert_eq!(set.code, 0, "{}", set.stderr);
        let verbs: &[&[&str]] = &[
            &["list"],
            &["--json", "list"],
            &["get", "env"],
            &["--json", "get", "web"],
            &["get", "refuser", "--show-secrets"],
            &["check-config"],
            &["--json", "check-config"],
            &["probe"],
            &["--json", "probe"],
            &["tools"],
            &["call", "mcp__env__check"],
            &["call", "mcp__web__check"],
            &["call", "mcp__refuser__check"],
            &["call", "mcp__orphan__check"],
            &["secret", "list"],
            &["--json", "secret", "list"],
            &["secret", "get", "API"],
        ];
        let mut matched = 0;
        for args in verbs {
            let out = run(&tree, &namespace, args, "");
            prop_assert!(!out.stdout.contains(&value), "{:?} printed it:\n{}", args, out.stdout);
            prop_assert!(!out.stderr.contains(&value), "{:?} printed it:\n{}", args, out.stderr);
            if args[0] == "call" && out.stdout.contains("match") && !out.stdout.contains("mismatch") {
                matched += 1;
            }
        }
        // Both servers that hold the value got it.
        prop_assert_eq!(matched, 2);
        let mut found = Vec::new();
        files_holding(tree.root(), value.as_bytes(), &mut found);
        prop_assert!(found.is_empty(), "written to {:?}", found);
    }
}

/// `secret set` on a terminal asks on it and reads without echo: what is
/// typed never shows on the terminal.
#[cfg(target_os = "linux")]
#[test]
fn set_on_a_terminal_reads_without_echo() {
    use std::io::{Read, Write};
    use std::time::{Duration, Instant};

    let namespace = Namespace::new("tty", SecretBackend::KernelKeyring);
    let tree = Tree::new("empty");
    let pty = nix::pty::openpty(None, None).unwrap();
    let mut command = tree.std_command();
    command
        .args([
            "--secret-store",
            "kernel-keyring",
            "--secret-namespace",
            &namespace.name,
        ])
        .args(["secret", "set", "TYPED"])
        .stdin(pty.slave.try_clone().unwrap())
        .stderr(pty.slave.try_clone().unwrap())
        .stdout(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    drop(command);
    drop(pty.slave);
    let mut master = std::fs::File::from(pty.master);
    let shown = Arc::new(Mutex::new(Vec::new()));
    let reader = {
        let mut master = master.try_clone().unwrap();
        let shown = Arc::clone(&shown);
        std::thread::spawn(move || {
            let mut buffer = [0_u8; 4096];
            // Ends with EIO once the child has closed the terminal.
            while let Ok(n @ 1..) = master.read(&mut buffer) {
                shown.lock().unwrap().extend_from_slice(&buffer[..n]);
            }
        })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while !String::from_utf8_lossy(&shown.lock().unwrap()).contains("value for secret TYPED: ") {
        assert!(Instant::now() < deadline, "no prompt");
        std::thread::sleep(Duration::from_millis(20));
    }
    master.write_all(b"typed-v4lue\n").unwrap();
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = child.wait().unwrap();
    drop(master);
    let _ = reader.join();
    let terminal = String::from_utf8_lossy(&shown.lock().unwrap()).into_owned();
    assert!(status.success(), "{terminal}{stdout}");
    assert!(
        stdout.contains("secret TYPED stored in the kernel keyring"),
        "{stdout}"
    );
    assert!(!terminal.contains("typed-v4lue"), "echoed: {terminal}");
    let store = OsSecretStore::open_in(SecretBackend::KernelKeyring, &namespace.name).unwrap();
    let name = mcp_config::secret::SecretName::new("TYPED").unwrap();
    assert_eq!(store.get(&name).unwrap().unwrap().expose(), "typed-v4lue");
}
