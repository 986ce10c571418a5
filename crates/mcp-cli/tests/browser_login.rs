//! `mcp-cli login` with a real browser: headless Chromium (Debian's
//! `chromium`) against fastmcp's in-memory OAuth authorization server
//! (`peers/py_oauth_server.py`). `login` hands the authorization URL to the
//! program in `$BROWSER`, here a two-line script that only writes the URL
//! down; the test then opens that URL (or a tampered form of it) in
//! Chromium, which follows the authorization server's redirect to the CLI's
//! loopback listener and renders its callback page. `--dump-dom` gives the
//! page as Chromium rendered it, so the test reads what a user would see.
//!
//! Cases: a sign-in that succeeds (and whose token a following `call`
//! uses), an authorization the user denied (`error=access_denied` with the
//! right `state`) and a redirect whose `state` was forged.
//!
//! Like the other peer tests these are ignored by a plain `cargo test`;
//! run with `-- --include-ignored` a missing fastmcp peer fails them. A
//! missing Chromium skips them with a message saying how to install it,
//! except under `CI=true`, where it fails them: CI must run the browser.

#![allow(clippy::expect_used)]

mod support;

use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::Url;
use support::Tree;

use mcp_test_peers as peers;
use peers::{Running, fastmcp_oauth_peer, free_port};

/// Where Debian's `chromium` package installs the browser.
const CHROMIUM: &str = "/usr/bin/chromium";

/// The server's name in the config, which every page and message names.
const SERVER: &str = "secure";

/// How long any one step (the peer, the URL, the browser, the login) may take.
const STEP: Duration = Duration::from_secs(60);

/// Chromium, or `None` (with a message on stderr) when it is not installed
/// and this is not CI.
fn chromium() -> Option<PathBuf> {
    let path = PathBuf::from(CHROMIUM);
    if path.exists() {
        return Some(path);
    }
    let message = format!(
        "Chromium is not installed at {CHROMIUM}; install it with \
         `apt-get install -y --no-install-recommends chromium` (Debian's package)"
    );
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{message}; CI runs the browser test"
    );
    // Written to the stream itself: the test harness hides `eprintln!`
    // of a passing test, and a skip must be seen.
    let _ = writeln!(
        std::io::stderr(),
        "skipping the browser login test: {message}"
    );
    None
}

/// The fastmcp OAuth peer on a free loopback port, and its MCP url.
fn fastmcp_peer() -> (Running, String) {
    let port = free_port();
    let peer = fastmcp_oauth_peer(port, None);
    (peer, format!("http://127.0.0.1:{port}/mcp"))
}

/// A tree whose user config names the peer as the http server `secure`.
fn tree_with(url: &str) -> Tree {
    let tree = Tree::new("empty");
    let run = tree.run(&["add", SERVER, "--scope", "user", "--url", url]);
    assert_eq!(run.code, 0, "add: {}{}", run.stdout, run.stderr);
    tree
}

/// A `$BROWSER` program for `login`: it writes the URL it is given to
/// `url` in the tree (renamed into place, so the test never reads half of
/// it) and exits, as a browser launcher does.
fn url_recorder(tree: &Tree) -> (PathBuf, PathBuf) {
    let recorded = tree.path("url");
    let text = recorded.to_str().expect("utf-8 temp path");
    assert!(!text.contains('\''), "a temp path without quotes: {text}");
    let script = tree.path("browser");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nprintf '%s' \"$1\" > '{text}.part' && mv '{text}.part' '{text}'\n"),
    )
    .expect("write the browser script");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
            .expect("make the browser script executable");
    }
    (script, recorded)
}

/// A running `mcp-cli login secure` whose browser is the URL recorder.
struct Login {
    child: Running,
    recorded: PathBuf,
    stdout: std::thread::JoinHandle<String>,
    stderr: std::thread::JoinHandle<String>,
}

/// What `login` ended with.
struct Ended {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Login {
    fn start(tree: &Tree) -> Login {
        let (script, recorded) = url_recorder(tree);
        let mut child = tree
            .std_command()
            .args(["login", SERVER])
            .env("BROWSER", &script)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mcp-cli login");
        let stdout = drain(child.stdout.take().expect("stdout"));
        let stderr = drain(child.stderr.take().expect("stderr"));
        Login {
            child: Running(child),
            recorded,
            stdout,
            stderr,
        }
    }

    /// The authorization URL `login` gave its browser.
    fn authorization_url(&mut self) -> Url {
        let deadline = Instant::now() + STEP;
        loop {
            if let Ok(text) = std::fs::read_to_string(&self.recorded) {
                return Url::parse(&text).expect("the browser got a url");
            }
            if let Ok(Some(status)) = self.child.0.try_wait() {
                panic!("login ended ({status}) before opening a browser");
            }
            assert!(Instant::now() < deadline, "login never opened a browser");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for `login` to end; it must not keep waiting after the
    /// browser reached its callback.
    fn end(mut self) -> Ended {
        let deadline = Instant::now() + STEP;
        let status = loop {
            if let Some(status) = self.child.0.try_wait().expect("poll login") {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "login kept waiting after the browser reached its callback"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        Ended {
            code: status.code(),
            stdout: self.stdout.join().expect("stdout reader"),
            stderr: self.stderr.join().expect("stderr reader"),
        }
    }
}

/// Reads a pipe to its end on a thread, so the child never blocks on it.
fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// The page headless Chromium ends on after opening `url`, as the DOM it
/// rendered. A fresh profile each time; the flags keep Chromium from
/// reaching for anything beyond loopback.
fn render(chromium: &Path, url: &Url, profile: &Path) -> String {
    let output = Command::new("timeout")
        .arg(STEP.as_secs().to_string())
        .arg(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            // containers often have a small /dev/shm, which crashes it
            "--disable-dev-shm-usage",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(url.as_str())
        .stdin(Stdio::null())
        .output()
        .expect("run chromium");
    let dom = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success() && !dom.is_empty(),
        "chromium failed ({}) on {url}:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    dom
}

/// The text of an element of a rendered page (`title`, `body`), without
/// tags and entities and with whitespace collapsed: what a reader sees.
fn text_of(dom: &str, element: &str) -> String {
    let open = format!("<{element}");
    let close = format!("</{element}>");
    let inner = dom
        .find(&open)
        .and_then(|start| dom[start..].find('>').map(|end| start + end + 1))
        .map_or("", |start| {
            let end = dom[start..]
                .find(&close)
                .map_or(dom.len(), |end| start + end);
            &dom[start..end]
        });
    let mut text = String::new();
    let mut in_tag = false;
    for c in inner.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                text.push(' ');
            }
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&");
    let words: Vec<&str> = text.split_whitespace().collect();
    // Tags split text into words with stray spaces before punctuation;
    // the contract's sentences are compared without them.
    words
        .join(" ")
        .replace(" .", ".")
        .replace(" :", ":")
        .replace(" ,", ",")
}

/// The value of one query parameter of `url`.
fn param(url: &Url, name: &str) -> String {
    url.query_pairs()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
        .unwrap_or_else(|| panic!("no `{name}` in {url}"))
}

/// `url` with the value of `name` replaced.
fn with_param(url: &Url, name: &str, value: &str) -> Url {
    let pairs: Vec<(String, String)> = url
        .query_pairs()
        .map(|(key, old)| {
            let new = if key == name { value.into() } else { old };
            (key.into_owned(), new.into_owned())
        })
        .collect();
    let mut changed = url.clone();
    changed.query_pairs_mut().clear().extend_pairs(pairs);
    changed
}

/// Asserts a failed sign-in: the page says so with its reason, `login`
/// exits 1 naming the server, and no token was stored.
fn assert_failed(tree: &Tree, dom: &str, ended: &Ended, reason: &str) {
    assert_eq!(text_of(dom, "title"), "Sign-in failed", "{dom}");
    let body = text_of(dom, "body");
    let said = format!("Sign-in to {SERVER} failed: ");
    assert!(body.contains(&said), "the page should say {said:?}: {body}");
    assert!(
        body.to_lowercase().contains(reason),
        "the page should give the reason ({reason}): {body}"
    );
    assert_eq!(
        ended.code,
        Some(1),
        "login: {}{}",
        ended.stdout,
        ended.stderr
    );
    assert!(
        ended.stderr.contains(&format!("`{SERVER}`"))
            || ended.stderr.contains(&format!(" {SERVER} ")),
        "the error should name the server: {}",
        ended.stderr
    );
    let run = tree.run(&["--json", "auth-status"]);
    assert_eq!(
        run.json()["servers"][0]["status"],
        "signed out",
        "{}",
        run.stdout
    );
}

#[test]
#[ignore = "needs cargo xtask peers and Chromium"]
fn chromium_signs_in_and_the_token_is_used() {
    let Some(chromium) = chromium() else { return };
    let (_peer, url) = fastmcp_peer();
    let tree = tree_with(&url);
    let mut login = Login::start(&tree);
    let authorize = login.authorization_url();
    assert_eq!(param(&authorize, "code_challenge_method"), "S256");
    let dom = render(&chromium, &authorize, &tree.path("profile"));
    let ended = login.end();

    assert_eq!(text_of(&dom, "title"), "Sign-in succeeded", "{dom}");
    let said = format!("Sign-in to {SERVER} succeeded. You can close this window.");
    let body = text_of(&dom, "body");
    assert!(body.contains(&said), "the page should say {said:?}: {body}");
    assert_eq!(
        ended.code,
        Some(0),
        "login: {}{}",
        ended.stdout,
        ended.stderr
    );
    assert!(
        ended
            .stdout
            .contains(&format!("signed in to `{SERVER}` at http://127.0.0.1:"))
            && ended.stdout.contains("; credentials saved in "),
        "{}",
        ended.stdout
    );
    assert!(
        ended.stderr.contains(authorize.as_str()),
        "login shows the url it opened: {}",
        ended.stderr
    );

    // The stored token is what lets `call` in: without it the server
    // answers 401 and `call` says to sign in.
    let run = tree.run(&[
        "call",
        "mcp__secure__echo",
        "--arg",
        "message=from chromium",
    ]);
    assert_eq!(run.code, 0, "call: {}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("Echo: from chromium"), "{}", run.stdout);
    let run = tree.run(&["--json", "auth-status"]);
    assert_eq!(
        run.json()["servers"][0]["status"],
        "signed in",
        "{}",
        run.stdout
    );
}

#[test]
#[ignore = "needs cargo xtask peers and Chromium"]
fn a_denied_authorization_fails_on_the_page_and_in_login() {
    let Some(chromium) = chromium() else { return };
    let (_peer, url) = fastmcp_peer();
    let tree = tree_with(&url);
    let mut login = Login::start(&tree);
    let authorize = login.authorization_url();
    // What an authorization server sends when the user clicks "deny": the
    // browser lands on the redirect URI with the error and the request's
    // own state.
    let mut denied = Url::parse(&param(&authorize, "redirect_uri")).expect("redirect_uri");
    denied
        .query_pairs_mut()
        .append_pair("error", "access_denied")
        .append_pair("error_description", "The user denied access")
        .append_pair("state", &param(&authorize, "state"));
    let dom = render(&chromium, &denied, &tree.path("profile"));
    let ended = login.end();
    assert_failed(&tree, &dom, &ended, "access_denied");
}

#[test]
#[ignore = "needs cargo xtask peers and Chromium"]
fn a_forged_state_fails_on_the_page_and_in_login() {
    let Some(chromium) = chromium() else { return };
    let (_peer, url) = fastmcp_peer();
    let tree = tree_with(&url);
    let mut login = Login::start(&tree);
    let authorize = login.authorization_url();
    // The authorization server approves and echoes the state it was given,
    // so the redirect carries a code with a state `login` never issued.
    let forged = with_param(&authorize, "state", "forged-state");
    let dom = render(&chromium, &forged, &tree.path("profile"));
    let ended = login.end();
    assert_failed(&tree, &dom, &ended, "state");
}
