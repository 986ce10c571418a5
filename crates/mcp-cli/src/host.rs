//! What the CLI answers when a server asks something of it: the typed
//! handler ([`TypedClientHandler`], which reads and checks each request's
//! params and declares exactly the features it hands out) every
//! connection gets (`session::connect_options`). It answers the server→client requests of revisions up to 2025-11-25 and
//! the input requests of 2026-07-28 results (`input_required`), which the
//! session routes to the same handler.
//!
//! - `roots/list`: the `--root` folders, or the project folder, as
//!   canonical `file://` URIs with their folder names.
//! - `elicitation/create`: on a terminal (stdin and stderr both), form mode
//!   asks field by field on stderr and checks every answer against the
//!   requested schema ([`form`]); URL mode shows the full url and its host
//!   and opens it in a browser only once the user agrees. Without a
//!   terminal both are declined, with a note on stderr naming the server.
//!   One question is shown at a time, however many servers ask at once.
//! - `sampling/createMessage`: refused. The CLI has no language model, and
//!   sampling is deprecated as of 2026-07-28, so the capability is not
//!   declared: a server learns at the handshake that it cannot sample here
//!   and can hide or change what needs it. A server that asks anyway gets
//!   the error the 2025-11-25 spec names for a rejected sampling request
//!   (code -1) with a message saying why, rather than -32601.

mod form;

use std::collections::BTreeMap;
use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use mcp_transport::ErrorObject;
use mcp_transport::error_codes::{INTERNAL_ERROR, INVALID_PARAMS};
use mcp_transport::handler::{
    ElicitAction, ElicitParams, ElicitResult, ElicitationHandler, ListRootsResult, RequestContext,
    Root, RootsProvider, TypedClientHandler,
};
use serde_json::Value;
use tokio::sync::Mutex;

use mcp_config::{ServerConfig, TransportConfig};
use mcp_oauth::{HostClass, UrlPolicy};

use crate::context::Context;
use crate::output::{Frame, Stream, Terminal, note, shown, shown_lines};

use form::Filled;

/// The code the 2025-11-25 sampling spec gives "User rejected sampling
/// request".
const SAMPLING_REJECTED: i64 = -1;

/// The CLI's answers to every server's requests; the session hands each
/// request's server in its [`RequestContext`].
pub(crate) struct Host {
    /// The roots, built once.
    roots: ListRootsResult,
    /// Whether questions can be asked: stdin and stderr are terminals.
    terminal: bool,
    /// Held for the whole of one question, shared by every server's
    /// session, so prompts never interleave.
    asking: Arc<Mutex<()>>,
    /// Judges the urls each server asks to open, by where the server is.
    url_policies: BTreeMap<String, UrlPolicy>,
}

/// The server a request came from, as notes name it.
fn server_of<'a>(context: &RequestContext<'a>) -> &'a str {
    if context.server.is_empty() {
        "(unnamed)"
    } else {
        context.server
    }
}

impl Host {
    pub(crate) fn new<'a>(
        context: &Context,
        servers: impl IntoIterator<Item = &'a ServerConfig>,
    ) -> Host {
        Host {
            roots: roots(&context.roots),
            terminal: std::io::stdin().is_terminal() && Stream::Stderr.is_terminal(),
            asking: Arc::default(),
            url_policies: servers
                .into_iter()
                .map(|server| (server.name.clone(), url_policy(server)))
                .collect(),
        }
    }

    /// The handler every session of `servers` takes.
    pub(crate) fn handler<'a>(
        context: &Context,
        servers: impl IntoIterator<Item = &'a ServerConfig>,
    ) -> Arc<dyn mcp_transport::ClientHandler> {
        mcp_transport::handler::Typed::shared(Host::new(context, servers))
    }

    /// The policy for the urls `server` names; a server the host was not
    /// told about is judged as a remote one, the strictest.
    fn url_policy_of(&self, server: &str) -> UrlPolicy {
        self.url_policies
            .get(server)
            .copied()
            .unwrap_or(UrlPolicy::new(HostClass::Public))
    }

    /// Runs `ask` on a blocking thread with the question lock held; the
    /// lock moves into the thread, so a request cancelled while the user is
    /// typing still keeps the next question from starting under it.
    async fn ask<T: Send + 'static>(
        &self,
        ask: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ErrorObject> {
        let turn = Arc::clone(&self.asking).lock_owned().await;
        tokio::task::spawn_blocking(move || {
            let _turn = turn;
            let _shown = QuestionShown::start();
            ask()
        })
        .await
        .map_err(|err| ErrorObject::new(INTERNAL_ERROR, format!("the question failed: {err}")))
    }

    async fn form(
        &self,
        server: &str,
        message: String,
        schema: Value,
    ) -> Result<ElicitResult, ErrorObject> {
        let server = server.to_owned();
        let filled = self
            .ask(move || {
                let mut input = std::io::stdin().lock();
                // Not the stderr lock: other threads' log lines must not
                // wait for the user.
                let mut output = Terminal::stderr();
                form::fill(&server, &message, &schema, &mut input, &mut output)
            })
            .await?;
        let filled = filled.map_err(|form::Unsupported(why)| {
            ErrorObject::new(INVALID_PARAMS, format!("cannot ask for this form: {why}"))
        })?;
        match filled {
            Ok(Filled::Accept(content)) => {
                // The form only fills fields of the kinds an answer holds.
                let content = serde_json::from_value(Value::Object(content)).map_err(|err| {
                    ErrorObject::new(INTERNAL_ERROR, format!("unsendable answer: {err}"))
                })?;
                Ok(ElicitResult::accept(content))
            }
            Ok(Filled::Decline) => Ok(ElicitResult::action(ElicitAction::Decline)),
            Ok(Filled::Cancel) => Ok(ElicitResult::action(ElicitAction::Cancel)),
            Err(err) => Err(ErrorObject::new(
                INTERNAL_ERROR,
                format!("cannot read the answer from the terminal: {err}"),
            )),
        }
    }

    async fn url(
        &self,
        server: &str,
        message: String,
        url: url::Url,
    ) -> Result<ElicitResult, ErrorObject> {
        let server = server.to_owned();
        let action = self
            .ask(move || {
                let mut input = std::io::stdin().lock();
                let mut output = Terminal::stderr();
                open_url(&server, &message, &url, &mut input, &mut output, &|url| {
                    crate::auth::open_in_browser(url)
                })
            })
            .await?
            .map_err(|err| {
                ErrorObject::new(
                    INTERNAL_ERROR,
                    format!("cannot read the answer from the terminal: {err}"),
                )
            })?;
        Ok(ElicitResult::action(action))
    }
}

/// Whether a question is on the terminal now: the call's live progress
/// line waits, so it does not draw over the prompt.
static QUESTION_SHOWN: AtomicBool = AtomicBool::new(false);

pub(crate) fn question_shown() -> bool {
    QUESTION_SHOWN.load(Ordering::SeqCst)
}

/// Marks a question shown until dropped (also when the question fails).
struct QuestionShown;

impl QuestionShown {
    fn start() -> QuestionShown {
        QUESTION_SHOWN.store(true, Ordering::SeqCst);
        // A progress line may be drawn where the question starts.
        Frame::default().clear_line().draw(Stream::Stderr);
        QuestionShown
    }
}

impl Drop for QuestionShown {
    fn drop(&mut self) {
        QUESTION_SHOWN.store(false, Ordering::SeqCst);
    }
}

/// The roots for these folders: `file://` URIs (percent-encoded by the
/// url crate) named after the folder.
fn roots(folders: &[PathBuf]) -> ListRootsResult {
    let roots = folders
        .iter()
        .filter_map(|folder| {
            let uri = url::Url::from_file_path(folder).ok()?;
            let name = folder.file_name().map_or_else(
                || folder.display().to_string(),
                |name| name.to_string_lossy().into_owned(),
            );
            Some(Root {
                uri: uri.into(),
                name: Some(name),
            })
        })
        .collect();
    ListRootsResult { roots }
}

impl TypedClientHandler for Host {
    // `roots: {}` (the list never changes while the CLI runs, and
    // 2026-07-28 has no list-changed notification for it) and both
    // elicitation modes. No sampling: see the module docs.
    fn roots(&self) -> Option<&dyn RootsProvider> {
        Some(self)
    }

    fn elicitation(&self) -> Option<&dyn ElicitationHandler> {
        Some(self)
    }

    fn refuse(&self, context: RequestContext<'_>, method: &str) -> ErrorObject {
        if method != "sampling/createMessage" {
            return ErrorObject::method_not_found(method);
        }
        note(
            "sampling requests refused",
            format_args!(
                "note: server \"{}\" asked to sample a language model; refused: mcp-cli has none",
                shown(server_of(&context)).as_ref()
            ),
        );
        ErrorObject::new(
            SAMPLING_REJECTED,
            "sampling declined: this client (mcp-cli) has no language model to sample, \
             and sampling is deprecated as of MCP 2026-07-28",
        )
    }
}

#[async_trait]
impl RootsProvider for Host {
    async fn list_roots(&self, _: RequestContext<'_>) -> Result<ListRootsResult, ErrorObject> {
        Ok(self.roots.clone())
    }
}

#[async_trait]
impl ElicitationHandler for Host {
    fn supports_url(&self) -> bool {
        true
    }

    async fn elicit(
        &self,
        context: RequestContext<'_>,
        params: ElicitParams,
    ) -> Result<ElicitResult, ErrorObject> {
        let server = server_of(&context);
        let declined = Ok(ElicitResult::action(ElicitAction::Decline));
        let (message, url, schema) = match params {
            ElicitParams::Form {
                message,
                requested_schema,
            } => (message, None, requested_schema),
            ElicitParams::Url { message, url, .. } => {
                // The same rule as every url a sign-in opens: another
                // scheme could start a local program through the
                // platform's url opener, and a remote server must not
                // point the browser at the user's own machine or network.
                let parsed = match self.url_policy_of(server).check(&url) {
                    Ok(parsed) => parsed,
                    Err(refusal) => {
                        note(
                            "urls declined",
                            format_args!(
                                "note: server \"{}\" asked to open \"{}\"; declined: {}",
                                shown(server).as_ref(),
                                shown(&url).as_ref(),
                                refusal
                            ),
                        );
                        return declined;
                    }
                };
                (message, Some(parsed), Value::Null)
            }
            other => {
                return Err(ErrorObject::new(
                    INVALID_PARAMS,
                    format!("elicitation/create: unsupported request {other:?}"),
                ));
            }
        };
        if !self.terminal {
            note(
                "input requests declined",
                format_args!(
                    "note: server \"{}\" asked for input ({}: \"{}\"); declined: stdin and stderr are not a terminal to ask on",
                    shown(server).as_ref(),
                    if url.is_some() {
                        "open a url"
                    } else {
                        "a form"
                    },
                    shown(&message).as_ref()
                ),
            );
            return declined;
        }
        match url {
            Some(url) => self.url(server, message, url).await,
            None => self.form(server, message, schema).await,
        }
    }
}

/// The policy for the urls a configured server names: from the host of a
/// remote server's url; a local process is on the user's machine.
fn url_policy(server: &ServerConfig) -> UrlPolicy {
    match &server.transport {
        TransportConfig::Http(remote)
        | TransportConfig::Sse(remote)
        | TransportConfig::Ws(remote) => url::Url::parse(&remote.url)
            .map(|url| UrlPolicy::for_server(&url))
            .unwrap_or(UrlPolicy::new(HostClass::Public)),
        TransportConfig::Stdio(_) | TransportConfig::Sdk { .. } => {
            UrlPolicy::new(HostClass::Loopback)
        }
        _ => UrlPolicy::new(HostClass::Public),
    }
}

/// URL mode: the full url and its host shown, a warning for what makes a
/// url easy to misread, the user's consent asked, then the browser.
fn open_url(
    server: &str,
    message: &str,
    url: &url::Url,
    input: &mut dyn std::io::BufRead,
    output: &mut dyn std::io::Write,
    open: &dyn Fn(&str) -> bool,
) -> std::io::Result<ElicitAction> {
    let host = url.host_str().unwrap_or_default();
    writeln!(
        output,
        "Server \"{}\" asks you to open a web page:\n  {}\n  url:  {}\n  host: {}",
        shown(server).as_ref(),
        shown_lines(message).replace('\n', "\n  "),
        shown(url.as_str()),
        shown(host)
    )?;
    if host.split('.').any(|label| label.starts_with("xn--")) {
        writeln!(
            output,
            "  warning: the host is an internationalised (punycode) name; check it is the site you expect"
        )?;
    }
    if url.scheme() != "https" {
        writeln!(output, "  warning: not https")?;
    }
    let mut line = String::new();
    loop {
        write!(output, "Open it in your browser? [y/N] (:cancel cancels) ")?;
        output.flush()?;
        line.clear();
        if input.read_line(&mut line)? == 0 {
            writeln!(output)?;
            return Ok(ElicitAction::Cancel);
        }
        match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => break,
            "" | "n" | "no" | ":decline" => return Ok(ElicitAction::Decline),
            ":cancel" => return Ok(ElicitAction::Cancel),
            _ => writeln!(output, "  answer y or n")?,
        }
    }
    if open(url.as_str()) {
        writeln!(output, "(opened in your browser)")?;
        return Ok(ElicitAction::Accept);
    }
    // The user agreed; without a browser they can still open it by hand.
    write!(
        output,
        "(could not open a browser; open the url yourself, then press Enter, or :cancel) "
    )?;
    output.flush()?;
    line.clear();
    let read = input.read_line(&mut line)?;
    if read == 0 || line.trim() == ":cancel" {
        return Ok(ElicitAction::Cancel);
    }
    Ok(ElicitAction::Accept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_transport::ClientHandler;
    use mcp_transport::handler::Typed;
    use serde_json::json;
    use std::io::Cursor;

    fn host(folders: &[PathBuf], terminal: bool) -> Host {
        Host {
            roots: roots(folders),
            terminal,
            asking: Arc::default(),
            url_policies: BTreeMap::new(),
        }
    }

    /// The host as a session holds it, answering for server `srv`.
    fn handler(host: Host) -> Arc<dyn ClientHandler> {
        Typed::new(host).for_server("srv").expect("a named copy")
    }

    #[test]
    fn roots_are_percent_encoded_file_uris_named_after_their_folder() {
        let check = |folder: &str, uri: &str, name: &str| {
            let value = serde_json::to_value(roots(&[PathBuf::from(folder)])).expect("json");
            assert_eq!(
                value,
                json!({"roots": [{"uri": uri, "name": name}]}),
                "{folder}"
            );
        };
        check("/home/u/project", "file:///home/u/project", "project");
        check(
            "/home/u/my project#1?%",
            "file:///home/u/my%20project%231%3F%25",
            "my project#1?%",
        );
        check("/srv/ünï", "file:///srv/%C3%BCn%C3%AF", "ünï");
        check("/", "file:///", "/");
    }

    #[tokio::test]
    async fn without_a_terminal_elicitation_is_declined_and_sampling_refused() {
        let host = handler(host(&[PathBuf::from("/p")], false));
        let form = json!({"message": "Name?", "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}}});
        assert_eq!(
            host.elicit(Some(form)).await,
            Ok(json!({"action": "decline"}))
        );
        let url = json!({"mode": "url", "message": "Sign in", "url": "https://example.com/x"});
        assert_eq!(
            host.elicit(Some(url)).await,
            Ok(json!({"action": "decline"}))
        );
        // Never handed to a url opener, terminal or not.
        let file = json!({"mode": "url", "message": "m", "url": "file:///etc/passwd"});
        assert_eq!(
            host.elicit(Some(file)).await,
            Ok(json!({"action": "decline"}))
        );
        let bad = host
            .elicit(Some(json!({"mode": "telepathy", "message": "m"})))
            .await;
        assert_eq!(bad.map_err(|e| e.code), Err(INVALID_PARAMS));

        let refused = host
            .create_message(Some(json!({"messages": []})))
            .await
            .expect_err("refused");
        assert_eq!(refused.code, SAMPLING_REJECTED);
        assert!(
            refused.message.contains("no language model"),
            "{}",
            refused.message
        );
        assert_eq!(
            host.handle_request("roots/list", None).await,
            Ok(json!({"roots": [{"uri": "file:///p", "name": "p"}]}))
        );
        assert_eq!(
            host.capabilities(),
            json!({"roots": {}, "elicitation": {"form": {}, "url": {}}})
        );
    }

    #[test]
    fn a_server_is_judged_from_where_its_config_puts_it() {
        use mcp_config::{RemoteConfig, StdioConfig};
        #[track_caller]
        fn check(transport: TransportConfig, expect: HostClass) {
            let server = ServerConfig::new("s", transport);
            assert_eq!(url_policy(&server).server(), expect, "{server:?}");
        }
        let remote = |url: &str| RemoteConfig::new(url);
        for url in [
            "http://127.0.0.1:9/mcp",
            "http://localhost:3000/mcp",
            "https://[::1]/mcp",
        ] {
            check(TransportConfig::Http(remote(url)), HostClass::Loopback);
            check(TransportConfig::Sse(remote(url)), HostClass::Loopback);
        }
        for url in [
            "https://mcp.example.com/mcp",
            "not a url",
            "https://8.8.8.8/",
        ] {
            check(TransportConfig::Http(remote(url)), HostClass::Public);
        }
        check(
            TransportConfig::Ws(remote("wss://10.0.0.2/ws")),
            HostClass::Private,
        );
        check(
            TransportConfig::Http(remote("http://169.254.1.1/mcp")),
            HostClass::LinkLocal,
        );
        check(
            TransportConfig::Stdio(StdioConfig::new("srv")),
            HostClass::Loopback,
        );
        // A server the host was not told about gets the strictest policy.
        let host = host(&[], false);
        assert_eq!(host.url_policy_of("unknown").server(), HostClass::Public);
    }

    #[test]
    fn url_mode_opens_only_with_consent() {
        #[track_caller]
        fn check(url: &str, lines: &str, opens: bool, expect: &str, said: &str) {
            let url = url::Url::parse(url).expect("url");
            let mut input = Cursor::new(lines.as_bytes().to_vec());
            let mut output = Vec::new();
            let opened = std::cell::Cell::new(false);
            let answer = open_url("srv", "Sign in", &url, &mut input, &mut output, &|_| {
                opened.set(true);
                opens
            })
            .expect("io");
            let shown = String::from_utf8(output).expect("utf-8");
            assert_eq!(json!(answer), json!(expect), "{lines:?}\n{shown}");
            assert_eq!(
                opened.get(),
                lines.starts_with('y') || lines.contains("\ny"),
                "{shown}"
            );
            assert!(shown.contains(said), "{said:?} not in\n{shown}");
        }
        check(
            "https://example.com/a?b=1",
            "y\n",
            true,
            "accept",
            "url:  https://example.com/a?b=1\n  host: example.com",
        );
        check("https://example.com/", "\n", true, "decline", "[y/N]");
        check(
            "https://example.com/",
            "maybe\nn\n",
            true,
            "decline",
            "answer y or n",
        );
        check(
            "https://example.com/",
            ":cancel\n",
            true,
            "cancel",
            "Open it",
        );
        check("https://example.com/", "", true, "cancel", "Sign in");
        check(
            "https://xn--e1afmkfd.example/",
            "n\n",
            true,
            "decline",
            "punycode",
        );
        check("http://127.0.0.1:9/", "n\n", true, "decline", "not https");
        check(
            "https://example.com/",
            "y\n\n",
            false,
            "accept",
            "open the url yourself",
        );
        check(
            "https://example.com/",
            "y\n:cancel\n",
            false,
            "cancel",
            "could not open a browser",
        );
    }

    #[tokio::test]
    async fn a_named_copy_answers_alike_and_questions_wait_their_turn() {
        let host = Arc::new(host(&[], true));
        let typed = Typed::from_arc(Arc::clone(&host));
        let named = typed.for_server("other").expect("a named copy");
        // The copy answers as the original does.
        assert_eq!(named.capabilities(), typed.capabilities());
        assert_eq!(named.list_roots(None).await, Ok(json!({"roots": []})));
        // While one question holds the lock, another waits for it.
        let held = Arc::clone(&host.asking).lock_owned().await;
        let waiting = host.ask(|| 7);
        tokio::pin!(waiting);
        assert!(
            tokio::time::timeout(std::time::Duration::from_millis(50), &mut waiting)
                .await
                .is_err()
        );
        drop(held);
        assert_eq!(waiting.await, Ok(7));
    }
}
