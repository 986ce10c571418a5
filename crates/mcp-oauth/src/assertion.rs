//! [`AssertionSource`]s a host configures: an environment variable read
//! through the host's lookup ([`EnvAssertion`]) and a program run without
//! a shell ([`CommandAssertion`]), for workload identity JWTs and the
//! identity provider's ID token of cross-app access.
//!
//! The value is a credential: it is never logged and never put into an
//! error. A command gets no stdin, a time limit (its process group is
//! killed when it is reached), and at most [`MAX_ASSERTION_BYTES`] of
//! stdout; its exit status is checked and its output trimmed. Of its stderr
//! only a short escaped tail reaches an error message, to say why it
//! failed.

use std::fmt;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::{AuthError, Secret};

/// Supplies a credential the provider presents or exchanges: a workload
/// identity JWT, an identity provider's ID token. It is asked once per
/// grant, so a short-lived token is fetched fresh each time; the host
/// decides where it comes from (an environment variable, a file, a command),
/// since this crate reads neither the environment nor the file system.
#[async_trait]
pub trait AssertionSource: Send + Sync + fmt::Debug {
    /// The current assertion, or an error naming the server and the source.
    async fn assertion(&self, server: &str) -> Result<Secret, AuthError>;
}

/// A fixed assertion, for hosts that already hold one.
#[async_trait]
impl AssertionSource for Secret {
    async fn assertion(&self, _server: &str) -> Result<Secret, AuthError> {
        Ok(self.clone())
    }
}

/// How long an assertion command may run by default.
pub const DEFAULT_ASSERTION_TIMEOUT: Duration = Duration::from_secs(30);

/// The most stdout an assertion command may print (a JWT is a few KiB).
pub const MAX_ASSERTION_BYTES: usize = 64 * 1024;

/// How much of a failed command's stderr an error message shows.
const STDERR_TAIL_CHARS: usize = 200;

/// A lookup of environment variables, supplied by the host (the library
/// reads no environment itself).
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The value of one environment variable, read through the host's lookup
/// each time an assertion is needed, so a host that renews the variable is
/// followed.
#[derive(Clone)]
pub struct EnvAssertion {
    name: String,
    field: String,
    lookup: EnvLookup,
}

impl EnvAssertion {
    /// The variable `name`, read through `lookup`; `field` is the setting
    /// errors name (e.g. `oauth.assertion.env`).
    pub fn new(name: impl Into<String>, field: impl Into<String>, lookup: EnvLookup) -> Self {
        EnvAssertion {
            name: name.into(),
            field: field.into(),
            lookup,
        }
    }
}

impl fmt::Debug for EnvAssertion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnvAssertion")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl AssertionSource for EnvAssertion {
    async fn assertion(&self, server: &str) -> Result<Secret, AuthError> {
        match (self.lookup)(&self.name) {
            Some(value) if !value.trim().is_empty() => Ok(Secret::new(value.trim())),
            Some(_) => Err(AuthError::config(
                server,
                &self.field,
                format!("{} is empty", self.name),
            )),
            None => Err(AuthError::config(
                server,
                &self.field,
                format!("{} is not set", self.name),
            )),
        }
    }
}

/// The trimmed stdout of a program, run without a shell each time an
/// assertion is needed.
#[derive(Debug, Clone)]
pub struct CommandAssertion {
    argv: Vec<String>,
    field: String,
    timeout: Duration,
}

impl CommandAssertion {
    /// Runs `argv[0]` with the rest as its arguments; `field` is the
    /// setting errors name (e.g. `oauth.assertion.command`).
    pub fn new(argv: Vec<String>, field: impl Into<String>) -> Self {
        CommandAssertion {
            argv,
            field: field.into(),
            timeout: DEFAULT_ASSERTION_TIMEOUT,
        }
    }

    /// Kills the command after `timeout` instead of the default.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    fn error(&self, server: &str, message: String) -> AuthError {
        AuthError::config(server, &self.field, message)
    }
}

#[async_trait]
impl AssertionSource for CommandAssertion {
    async fn assertion(&self, server: &str) -> Result<Secret, AuthError> {
        let Some((program, args)) = self.argv.split_first() else {
            return Err(self.error(server, "the command is empty".into()));
        };
        let shown = escape_tail(program, 80);
        let mut command = tokio::process::Command::new(program);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // Its own process group, so a script's own children die with it.
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command.spawn().map_err(|e| {
            self.error(server, format!("cannot start `{shown}`: {e}"))
                .with_source(e)
        })?;
        let mut group = crate::process::GroupGuard::new(child.id());
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        // stderr is drained on its own task, so a command that fills it
        // never blocks, and too much stdout ends the run without waiting
        // for it.
        let err_task = tokio::spawn(read_tail(stderr));
        let abort = err_task.abort_handle();
        let run = async {
            let Some(out) = read_bounded(stdout).await else {
                return (None, None, Vec::new());
            };
            let status = child.wait().await;
            // A grandchild may keep stderr open; its tail is not worth waiting for.
            let err = tokio::time::timeout(Duration::from_millis(500), err_task)
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            (Some(status), Some(out), err)
        };
        let ran = tokio::time::timeout(self.timeout, run).await;
        abort.abort();
        let (status, out, err) = match ran {
            Ok(done) => done,
            Err(_) => {
                return Err(self.error(
                    server,
                    format!(
                        "`{shown}` did not finish within {} ms and was killed",
                        self.timeout.as_millis()
                    ),
                ));
            }
        };
        let (Some(out), Some(status)) = (out, status) else {
            return Err(self.error(
                server,
                format!("`{shown}` printed more than {MAX_ASSERTION_BYTES} bytes and was killed"),
            ));
        };
        let status = status.map_err(|e| {
            self.error(server, format!("waiting for `{shown}` failed: {e}"))
                .with_source(e)
        })?;
        // It finished: whatever it left running is its own business.
        group.disarm();
        if !status.success() {
            let tail = String::from_utf8_lossy(&err);
            let tail = escape_tail(tail.trim(), STDERR_TAIL_CHARS);
            let said = if tail.is_empty() {
                String::new()
            } else {
                format!(": {tail}")
            };
            return Err(self.error(server, format!("`{shown}` exited with {status}{said}")));
        }
        let text = String::from_utf8(out)
            .map_err(|_| self.error(server, format!("`{shown}` printed text that is not UTF-8")))?;
        let text = text.trim();
        if text.is_empty() {
            return Err(self.error(server, format!("`{shown}` printed nothing")));
        }
        Ok(Secret::new(text))
    }
}

/// Reads all of `stream` unless it holds more than [`MAX_ASSERTION_BYTES`]
/// (then `None`, without reading further).
async fn read_bounded(stream: Option<impl AsyncRead + Unpin>) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    if let Some(stream) = stream {
        let limit = u64::try_from(MAX_ASSERTION_BYTES).unwrap_or(u64::MAX) + 1;
        let _ = stream.take(limit).read_to_end(&mut out).await;
    }
    (out.len() <= MAX_ASSERTION_BYTES).then_some(out)
}

/// Drains `stream` (so a chatty command never blocks on a full pipe) and
/// keeps its last few KiB.
async fn read_tail(stream: Option<impl AsyncRead + Unpin + Send>) -> Vec<u8> {
    const KEEP: usize = 4096;
    let mut tail = Vec::new();
    let Some(mut stream) = stream else {
        return tail;
    };
    let mut buf = [0u8; 8192];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return tail,
            Ok(n) => {
                tail.extend_from_slice(buf.get(..n).unwrap_or_default());
                if tail.len() > KEEP {
                    tail.drain(..tail.len() - KEEP);
                }
            }
        }
    }
}

/// The last `max` characters of `text` with control characters escaped, so
/// a message cannot carry terminal escapes or fake lines.
fn escape_tail(text: &str, max: usize) -> String {
    let count = text.chars().count();
    let skip = count.saturating_sub(max);
    let tail: String = text
        .chars()
        .skip(skip)
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect();
    if skip > 0 { format!("…{tail}") } else { tail }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[tokio::test]
    async fn a_command_prints_the_assertion() {
        let source = CommandAssertion::new(argv(&["printf", "  jwt.a.b\n"]), "oauth.assertion");
        let got = source.assertion("s").await.map(|s| s.expose().to_owned());
        assert_eq!(got.ok().as_deref(), Some("jwt.a.b"));
    }

    #[tokio::test]
    async fn no_shell_runs_the_argv() {
        // `$HOME` and `;` reach the program as they are written.
        let source = CommandAssertion::new(argv(&["echo", "$HOME;", "x"]), "oauth.assertion");
        let got = source.assertion("s").await.map(|s| s.expose().to_owned());
        assert_eq!(got.ok().as_deref(), Some("$HOME; x"));
    }

    #[tokio::test]
    async fn a_command_that_hangs_is_killed_at_its_time_limit() {
        let source = CommandAssertion::new(argv(&["sleep", "30"]), "oauth.assertion")
            .with_timeout(Duration::from_millis(200));
        let started = std::time::Instant::now();
        let err = source.assertion("s").await.expect_err("a timeout");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(
            err.to_string(),
            "oauth settings for s: oauth.assertion: `sleep` did not finish within 200 ms and was killed"
        );
    }

    #[tokio::test]
    async fn a_command_that_prints_100_mb_is_cut_off() {
        let source = CommandAssertion::new(
            argv(&["head", "-c", "100000000", "/dev/zero"]),
            "oauth.assertion",
        );
        let started = std::time::Instant::now();
        let err = source.assertion("s").await.expect_err("too much");
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(
            err.to_string()
                .ends_with("`head` printed more than 65536 bytes and was killed"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_failure_shows_a_short_escaped_tail_of_stderr() {
        let script = "printf 'x%.0s' $(seq 1 500) >&2; printf '\\033[2Jlast words\\n' >&2; exit 3";
        let source = CommandAssertion::new(argv(&["sh", "-c", script]), "oauth.assertion");
        let message = source.assertion("s").await.expect_err("fails").to_string();
        assert!(
            message.contains("`sh` exited with exit status: 3: …"),
            "{message}"
        );
        assert!(message.ends_with("\\u{1b}[2Jlast words"), "{message}");
        assert!(
            !message.contains('\u{1b}') && message.len() < 400,
            "{message}"
        );
    }

    #[tokio::test]
    async fn empty_output_and_missing_programs_are_errors() {
        let silent = CommandAssertion::new(argv(&["true"]), "oauth.assertion");
        let message = silent.assertion("s").await.expect_err("empty").to_string();
        assert!(message.ends_with("`true` printed nothing"), "{message}");
        let missing = CommandAssertion::new(argv(&["/nonexistent/tool"]), "oauth.assertion");
        let message = missing
            .assertion("s")
            .await
            .expect_err("missing")
            .to_string();
        assert!(
            message.contains("cannot start `/nonexistent/tool`"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn an_env_assertion_is_read_each_time() {
        let value = Arc::new(std::sync::Mutex::new(Some("one".to_owned())));
        let shared = value.clone();
        let lookup: EnvLookup = Arc::new(move |name| {
            assert_eq!(name, "WORKLOAD_JWT");
            shared.lock().ok()?.clone()
        });
        let source = EnvAssertion::new("WORKLOAD_JWT", "oauth.assertion.env", lookup);
        let read = |s: Result<Secret, AuthError>| s.map(|s| s.expose().to_owned());
        assert_eq!(
            read(source.assertion("s").await).ok().as_deref(),
            Some("one")
        );
        *value.lock().unwrap_or_else(|e| e.into_inner()) = Some("two".into());
        assert_eq!(
            read(source.assertion("s").await).ok().as_deref(),
            Some("two")
        );
        *value.lock().unwrap_or_else(|e| e.into_inner()) = None;
        assert_eq!(
            source.assertion("s").await.expect_err("unset").to_string(),
            "oauth settings for s: oauth.assertion.env: WORKLOAD_JWT is not set"
        );
        assert!(!format!("{source:?}").contains("two"));
    }
}
