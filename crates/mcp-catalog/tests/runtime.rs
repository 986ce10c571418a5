//! Session runtime behaviour against scripted servers: lazy concurrent
//! connect, shared in-flight builds, generations, `list_changed`, idle
//! eviction, failure backoff, config changes and shutdown.

// Helpers of the scripted server panic on a broken fixture, as tests do.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use mcp_catalog::BackoffPolicy;
use mcp_catalog::sessions::ManualClock;
use mcp_catalog::{
    CatalogError, CatalogErrorKind, CatalogUpdates, Cause, Connection, Connector, ModelBlock,
    ModelResult, ResultStatus, RuntimeManager, RuntimeOptions, ServerEvents, ServerFeatures,
    ServerSet, SessionRuntime,
};
use mcp_catalog::{Clock, SystemClock};
use mcp_config::{Level, ServerConfig, TransportConfig};
use mcp_transport::types::RejectedTool;
use mcp_transport::{CacheScope, Listing};
use mcp_transport::{CallToolResult, Tool};
use serde_json::{Map, Value, json};

/// What one scripted server does.
#[derive(Default)]
struct Script {
    connect_delay: Duration,
    /// How long a tool call runs (a closed connection ends it at once).
    call_delay: Duration,
    /// Connect attempts that fail before one succeeds (`usize::MAX`:
    /// always).
    failing_connects: usize,
    tools: Vec<String>,
    /// Tool calls fail while this is set.
    calls_fail: bool,
    features: ServerFeatures,
    /// Every tool's `outputSchema`.
    output_schema: Option<Value>,
    /// Every call's `structuredContent`.
    structured: Option<Value>,
    /// The listing's `ttlMs` and `cacheScope`; `None` lists as a server
    /// before 2026-07-28 does (no TTL, private).
    caching: Option<(Option<Duration>, CacheScope)>,
    /// Tools the session left out of the listing, and why.
    rejected: Vec<RejectedTool>,
    /// The first page of `resources/list`, `resources/templates/list` and
    /// `prompts/list`.
    resources: Vec<Value>,
    templates: Vec<Value>,
    prompts: Vec<Value>,
    /// Those three lists fail while this is set.
    offer_lists_fail: bool,
}

#[derive(Default)]
struct Counters {
    connects: AtomicUsize,
    lists: AtomicUsize,
    calls: AtomicUsize,
    closes: AtomicUsize,
    /// `resources/list`, `resources/templates/list` and `prompts/list`
    /// requests.
    offer_lists: AtomicUsize,
}

/// A connector over scripted in-memory servers.
#[derive(Default)]
struct FakeConnector {
    scripts: Mutex<HashMap<String, Script>>,
    counters: Mutex<HashMap<String, Arc<Counters>>>,
    events: Mutex<HashMap<String, ServerEvents>>,
    last_timeout: Mutex<Option<Duration>>,
}

impl FakeConnector {
    fn with(servers: &[(&str, &[&str])]) -> Arc<Self> {
        let fake = FakeConnector::default();
        for (name, tools) in servers {
            fake.scripts.lock().unwrap().insert(
                name.to_string(),
                Script {
                    tools: tools.iter().map(|t| t.to_string()).collect(),
                    ..Script::default()
                },
            );
        }
        Arc::new(fake)
    }

    fn script(&self, server: &str, edit: impl FnOnce(&mut Script)) {
        edit(self.scripts.lock().unwrap().get_mut(server).unwrap());
    }

    fn counters(&self, server: &str) -> Arc<Counters> {
        Arc::clone(
            self.counters
                .lock()
                .unwrap()
                .entry(server.to_owned())
                .or_default(),
        )
    }

    fn connects(&self, server: &str) -> usize {
        self.counters(server).connects.load(Ordering::SeqCst)
    }

    fn lists(&self, server: &str) -> usize {
        self.counters(server).lists.load(Ordering::SeqCst)
    }

    fn calls(&self, server: &str) -> usize {
        self.counters(server).calls.load(Ordering::SeqCst)
    }

    fn closes(&self, server: &str) -> usize {
        self.counters(server).closes.load(Ordering::SeqCst)
    }

    fn events(&self, server: &str) -> ServerEvents {
        self.events.lock().unwrap().get(server).unwrap().clone()
    }
}

struct FakeConnection {
    server: String,
    connector: Arc<FakeConnector>,
    counters: Arc<Counters>,
    /// Set by `close`: calls still running end with an error.
    closed: tokio::sync::watch::Sender<bool>,
}

/// The connector the runtime owns; the test keeps the same fake.
struct FakeHandle(Arc<FakeConnector>);

#[async_trait]
impl Connector for FakeHandle {
    async fn connect(
        &self,
        server: &ServerConfig,
        events: ServerEvents,
    ) -> Result<Arc<dyn Connection>, CatalogError> {
        let this = &self.0;
        let counters = this.counters(&server.name);
        counters.connects.fetch_add(1, Ordering::SeqCst);
        let delay = this.scripts.lock().unwrap()[&server.name].connect_delay;
        tokio::time::sleep(delay).await;
        let fail = {
            let mut scripts = this.scripts.lock().unwrap();
            let script = scripts.get_mut(&server.name).unwrap();
            if script.failing_connects > 0 {
                if script.failing_connects != usize::MAX {
                    script.failing_connects -= 1;
                }
                true
            } else {
                false
            }
        };
        if fail {
            return Err(CatalogError::connect(
                &server.name,
                Cause::other("connection refused"),
            ));
        }
        this.events
            .lock()
            .unwrap()
            .insert(server.name.clone(), events);
        Ok(Arc::new(FakeConnection {
            server: server.name.clone(),
            connector: Arc::clone(this),
            counters,
            closed: tokio::sync::watch::Sender::new(false),
        }))
    }
}

impl FakeConnection {
    /// One page of a resources or prompts list, as scripted.
    fn offer_list(
        &self,
        operation: &str,
        field: &str,
        items: impl Fn(&Script) -> &Vec<Value>,
    ) -> Result<Value, CatalogError> {
        self.counters.offer_lists.fetch_add(1, Ordering::SeqCst);
        let scripts = self.connector.scripts.lock().unwrap();
        let script = &scripts[&self.server];
        if script.offer_lists_fail {
            return Err(CatalogError::request(
                &self.server,
                operation,
                Cause::other("method not found"),
            ));
        }
        Ok(json!({ field: items(script) }))
    }
}

#[async_trait]
impl Connection for FakeConnection {
    fn features(&self) -> ServerFeatures {
        self.connector.scripts.lock().unwrap()[&self.server].features
    }

    async fn list_tools(&self) -> Result<Vec<Tool>, CatalogError> {
        self.counters.lists.fetch_add(1, Ordering::SeqCst);
        tokio::task::yield_now().await;
        let scripts = self.connector.scripts.lock().unwrap();
        let script = &scripts[&self.server];
        Ok(script
            .tools
            .iter()
            .map(|name| Tool {
                name: name.clone(),
                title: None,
                description: Some(format!("{name} of {}", self.server)),
                input_schema: json!({"type": "object", "properties": {"x": {"type": "integer"}}}),
                output_schema: script.output_schema.clone(),
                annotations: None,
                execution: None,
            })
            .collect())
    }

    fn rejected_tools(&self) -> Vec<RejectedTool> {
        self.connector.scripts.lock().unwrap()[&self.server]
            .rejected
            .clone()
    }

    async fn list_tools_listing(&self) -> Result<Listing<Tool>, CatalogError> {
        let items = self.list_tools().await?;
        let caching = self.connector.scripts.lock().unwrap()[&self.server].caching;
        let (ttl, scope) = caching.unwrap_or((None, CacheScope::Private));
        let mut listing = Listing::of(items);
        listing.ttl = ttl;
        listing.scope = scope;
        Ok(listing)
    }

    async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        timeout: Duration,
        _progress: Option<mcp_transport::ProgressCallback>,
    ) -> Result<CallToolResult, CatalogError> {
        self.counters.calls.fetch_add(1, Ordering::SeqCst);
        *self.connector.last_timeout.lock().unwrap() = Some(timeout);
        let delay = self.connector.scripts.lock().unwrap()[&self.server].call_delay;
        let mut closed = self.closed.subscribe();
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            _ = closed.wait_for(|closed| *closed) => {
                return Err(CatalogError::request(
                    &self.server,
                    "tools/call",
                    Cause::other("connection closed"),
                ));
            }
        }
        let structured = {
            let scripts = self.connector.scripts.lock().unwrap();
            if scripts[&self.server].calls_fail {
                return Err(CatalogError::request(
                    &self.server,
                    "tools/call",
                    Cause::other("broken pipe"),
                ));
            }
            scripts[&self.server].structured.clone()
        };
        Ok(CallToolResult {
            content: vec![json!({"type": "text", "text": format!("{name} {arguments}")}).into()],
            structured_content: structured,
            is_error: false,
        })
    }

    async fn list_resources(&self, _cursor: Option<String>) -> Result<Value, CatalogError> {
        self.offer_list("resources/list", "resources", |s| &s.resources)
    }

    async fn list_resource_templates(
        &self,
        _cursor: Option<String>,
    ) -> Result<Value, CatalogError> {
        self.offer_list("resources/templates/list", "resourceTemplates", |s| {
            &s.templates
        })
    }

    async fn read_resource(&self, uri: &str) -> Result<Value, CatalogError> {
        Ok(json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": "content of a"}]}))
    }

    async fn list_prompts(&self, _cursor: Option<String>) -> Result<Value, CatalogError> {
        self.offer_list("prompts/list", "prompts", |s| &s.prompts)
    }

    async fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<Value, CatalogError> {
        Ok(
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": format!("{name} {}", Value::Object(arguments))}}]}),
        )
    }

    async fn close(&self) {
        self.counters.closes.fetch_add(1, Ordering::SeqCst);
        self.closed.send_replace(true);
    }
}

fn config(name: &str) -> ServerConfig {
    ServerConfig::new(
        name.to_owned(),
        TransportConfig::Sdk {
            name: name.to_owned(),
        },
    )
}

fn runtime(
    fake: &Arc<FakeConnector>,
    servers: Vec<ServerConfig>,
    clock: Arc<dyn Clock>,
) -> SessionRuntime {
    SessionRuntime::builder(
        "s1",
        ServerSet::all(servers),
        Arc::new(FakeHandle(Arc::clone(fake))),
    )
    .with_clock(clock)
    .with_options(RuntimeOptions::default().with_materialize(openclaw()))
    .build()
}

fn names(catalog: &mcp_catalog::Catalog) -> Vec<&str> {
    catalog.tools().iter().map(|t| t.name()).collect()
}

#[tokio::test(start_paused = true)]
async fn nothing_connects_until_asked_then_all_connect_concurrently() {
    let fake = FakeConnector::with(&[("a", &["t1"]), ("b", &["t2"]), ("c", &["t3"])]);
    for server in ["a", "b", "c"] {
        fake.script(server, |s| s.connect_delay = Duration::from_millis(300));
    }
    let runtime = runtime(
        &fake,
        vec![config("a"), config("b"), config("c")],
        Arc::new(SystemClock),
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        fake.connects("a") + fake.connects("b") + fake.connects("c"),
        0
    );

    let start = tokio::time::Instant::now();
    let catalog = runtime.catalog().await.unwrap();
    let took = start.elapsed();
    assert_eq!(names(&catalog), ["a__t1", "b__t2", "c__t3"]);
    assert!(
        took < Duration::from_millis(400),
        "servers connected one after another: {took:?}"
    );

    // later attempts reuse it
    let again = runtime.catalog().await.unwrap();
    assert!(Arc::ptr_eq(&catalog, &again));
    assert_eq!((fake.connects("a"), fake.lists("a")), (1, 1));
}

#[tokio::test(start_paused = true)]
async fn the_connect_limit_bounds_concurrency() {
    let fake = FakeConnector::with(&[("a", &[]), ("b", &[]), ("c", &[]), ("d", &[])]);
    for server in ["a", "b", "c", "d"] {
        fake.script(server, |s| s.connect_delay = Duration::from_millis(100));
    }
    let options = RuntimeOptions::default()
        .with_materialize(openclaw())
        .with_max_concurrent_connects(2);
    let runtime = SessionRuntime::builder(
        "s",
        ServerSet::all(["a", "b", "c", "d"].map(config)),
        Arc::new(FakeHandle(Arc::clone(&fake))),
    )
    .with_options(options)
    .build();
    let start = tokio::time::Instant::now();
    runtime.catalog().await.unwrap();
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(200) && took < Duration::from_millis(300),
        "{took:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn concurrent_callers_share_one_build() {
    let fake = FakeConnector::with(&[("a", &["t"]), ("b", &["t"])]);
    fake.script("a", |s| s.connect_delay = Duration::from_millis(50));
    let runtime = Arc::new(runtime(
        &fake,
        vec![config("a"), config("b")],
        Arc::new(SystemClock),
    ));
    let callers: Vec<_> = (0..10)
        .map(|_| {
            let runtime = Arc::clone(&runtime);
            tokio::spawn(async move { runtime.catalog().await.unwrap() })
        })
        .collect();
    let catalogs: Vec<_> = futures::future::join_all(callers)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert!(catalogs.windows(2).all(|w| Arc::ptr_eq(&w[0], &w[1])));
    assert_eq!((fake.connects("a"), fake.lists("a")), (1, 1));
    assert_eq!((fake.connects("b"), fake.lists("b")), (1, 1));
}

#[tokio::test(start_paused = true)]
async fn a_build_invalidated_mid_flight_is_not_cached() {
    let fake = FakeConnector::with(&[("a", &["old"])]);
    fake.script("a", |s| s.connect_delay = Duration::from_millis(100));
    let runtime = Arc::new(runtime(&fake, vec![config("a")], Arc::new(SystemClock)));
    let first = {
        let runtime = Arc::clone(&runtime);
        tokio::spawn(async move { runtime.catalog().await.unwrap() })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    runtime.invalidate();
    let first = first.await.unwrap();
    assert_eq!(
        names(&first),
        ["a__old"],
        "callers of the overtaken build still get its result"
    );

    fake.script("a", |s| s.tools = vec!["new".into()]);
    fake.events("a").tools_changed();
    let second = runtime.catalog().await.unwrap();
    assert!(!Arc::ptr_eq(&first, &second));
    assert_eq!(names(&second), ["a__new"]);
    assert_eq!(fake.connects("a"), 1, "the open session is reused");
}

#[tokio::test(start_paused = true)]
async fn list_changed_relists_only_that_server() {
    let fake = FakeConnector::with(&[("a", &["one"]), ("b", &["two"])]);
    let runtime = runtime(&fake, vec![config("a"), config("b")], Arc::new(SystemClock));
    let before = runtime.catalog().await.unwrap();
    fake.script("a", |s| s.tools = vec!["one".into(), "uno".into()]);
    fake.events("a").tools_changed();
    let after = runtime.catalog().await.unwrap();
    assert_eq!(names(&before), ["a__one", "b__two"]);
    assert_eq!(names(&after), ["a__one", "a__uno", "b__two"]);
    assert_eq!((fake.lists("a"), fake.lists("b")), (2, 1));
    assert_eq!((fake.connects("a"), fake.connects("b")), (1, 1));
}

#[tokio::test(start_paused = true)]
async fn a_closed_connection_reconnects_on_the_next_attempt() {
    let fake = FakeConnector::with(&[("a", &["t"])]);
    let runtime = runtime(&fake, vec![config("a")], Arc::new(SystemClock));
    runtime.catalog().await.unwrap();
    fake.events("a").closed();
    assert!(!runtime.is_connected("a"));
    runtime.catalog().await.unwrap();
    assert_eq!(fake.connects("a"), 2);
}

#[tokio::test(start_paused = true)]
async fn concurrent_first_calls_share_one_connect() {
    let fake = FakeConnector::with(&[("a", &["t"])]);
    fake.script("a", |s| s.connect_delay = Duration::from_millis(200));
    let runtime = runtime(&fake, vec![config("a")], Arc::new(SystemClock));
    let catalog = runtime.catalog().await.unwrap();
    let tool = catalog.get("a__t").unwrap();
    fake.events("a").closed();
    assert!(!runtime.is_connected("a"));
    let (first, second, third, rebuilt) = tokio::join!(
        runtime.call_tool(tool, json!({"x": 1})),
        runtime.call_tool(tool, json!({"x": 2})),
        runtime.call_tool(tool, json!({"x": 3})),
        runtime.catalog(),
    );
    first.unwrap();
    second.unwrap();
    third.unwrap();
    rebuilt.unwrap();
    assert_eq!(
        fake.connects("a"),
        2,
        "one connect at first, then one shared by every caller"
    );
    assert_eq!(fake.calls("a"), 3);
    assert_eq!(
        fake.closes("a"),
        0,
        "no spare connection was opened and thrown away"
    );
}

#[tokio::test(start_paused = true)]
async fn a_shared_connect_that_fails_counts_once() {
    let clock = Arc::new(ManualClock::new());
    let fake = FakeConnector::with(&[("a", &["t"])]);
    let runtime = runtime(&fake, vec![config("a")], clock.clone());
    let catalog = runtime.catalog().await.unwrap();
    let tool = catalog.get("a__t").unwrap();
    fake.script("a", |s| {
        s.connect_delay = Duration::from_millis(200);
        s.failing_connects = usize::MAX;
    });
    fake.events("a").closed();
    let (first, second) = tokio::join!(
        runtime.call_tool(tool, json!({"x": 1})),
        runtime.call_tool(tool, json!({"x": 2})),
    );
    assert!(
        first
            .unwrap_err()
            .to_string()
            .contains("connection refused")
    );
    assert!(
        second
            .unwrap_err()
            .to_string()
            .contains("connection refused")
    );
    assert_eq!(fake.connects("a"), 2);
    // Two more failures pause the server (three in a row); had the shared
    // failure counted twice, one would do.
    runtime.call_tool(tool, json!({"x": 3})).await.unwrap_err();
    let error = runtime.call_tool(tool, json!({"x": 4})).await.unwrap_err();
    assert!(!error.to_string().contains("paused"), "{error}");
    assert_eq!(fake.connects("a"), 4);
    let error = runtime.call_tool(tool, json!({"x": 5})).await.unwrap_err();
    assert!(error.to_string().contains("paused"), "{error}");
    assert_eq!(fake.connects("a"), 4);
}

#[tokio::test(start_paused = true)]
async fn a_failed_server_is_reported_and_retried_later() {
    let fake = FakeConnector::with(&[("good", &["t"]), ("flaky", &["f"])]);
    fake.script("flaky", |s| s.failing_connects = 1);
    let runtime = runtime(
        &fake,
        vec![config("good"), config("flaky")],
        Arc::new(SystemClock),
    );
    let first = runtime.catalog().await.unwrap();
    assert_eq!(names(&first), ["good__t"]);
    let diagnostic = first
        .diagnostics()
        .iter()
        .find(|d| d.server == "flaky")
        .unwrap();
    assert_eq!(diagnostic.level, Level::Error);
    assert!(
        diagnostic.message.contains("connection refused"),
        "{}",
        diagnostic.message
    );

    let second = runtime.catalog().await.unwrap();
    assert_eq!(names(&second), ["flaky__f", "good__t"]);
    assert_eq!((fake.connects("good"), fake.connects("flaky")), (1, 2));
    let third = runtime.catalog().await.unwrap();
    assert!(Arc::ptr_eq(&second, &third), "a complete catalog is cached");
}

#[tokio::test(start_paused = true)]
async fn a_required_server_that_fails_fails_the_build() {
    let fake = FakeConnector::with(&[("must", &["t"]), ("other", &["o"])]);
    fake.script("must", |s| s.failing_connects = 1);
    let mut must = config("must");
    must.required = true;
    let runtime = runtime(&fake, vec![must, config("other")], Arc::new(SystemClock));
    let error = runtime.catalog().await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "required server \"must\" failed: server \"must\": connect failed: connection refused"
    );
    // not cached: the next attempt tries again and succeeds
    assert_eq!(
        names(&runtime.catalog().await.unwrap()),
        ["must__t", "other__o"]
    );
}

#[tokio::test(start_paused = true)]
async fn connect_timeout_bounds_each_server() {
    let fake = FakeConnector::with(&[("slow", &["t"]), ("fast", &["f"])]);
    fake.script("slow", |s| s.connect_delay = Duration::from_secs(3600));
    let mut slow = config("slow");
    slow.timeouts.connect = Duration::from_millis(500);
    let runtime = runtime(&fake, vec![slow, config("fast")], Arc::new(SystemClock));
    let start = tokio::time::Instant::now();
    let catalog = runtime.catalog().await.unwrap();
    assert!(start.elapsed() < Duration::from_secs(1));
    assert_eq!(names(&catalog), ["fast__f"]);
    let diagnostic = catalog
        .diagnostics()
        .iter()
        .find(|d| d.server == "slow")
        .unwrap();
    assert!(
        diagnostic.message.contains("timed out after 500 ms"),
        "{}",
        diagnostic.message
    );
}

#[tokio::test(start_paused = true)]
async fn three_failures_pause_a_server_and_a_trial_recovers_it() {
    let clock = Arc::new(ManualClock::new());
    let fake = FakeConnector::with(&[("down", &["t"])]);
    fake.script("down", |s| s.failing_connects = usize::MAX);
    let runtime = runtime(&fake, vec![config("down")], clock.clone());
    for attempt in 1..=3 {
        runtime.catalog().await.unwrap();
        assert_eq!(fake.connects("down"), attempt);
    }
    // paused: no new connect, the diagnostic names the retry time
    let paused = runtime.catalog().await.unwrap();
    assert_eq!(fake.connects("down"), 3);
    let message = &paused.diagnostics()[0].message;
    assert!(
        message.contains(
            "paused after 3 consecutive failures; next try at 2027-01-15T08:01:00Z (in 60 s)"
        ),
        "{message}"
    );
    clock.advance(Duration::from_secs(30));
    runtime.catalog().await.unwrap();
    assert_eq!(fake.connects("down"), 3, "still paused after 30 s");

    clock.advance(Duration::from_secs(30));
    fake.script("down", |s| s.failing_connects = 0);
    let recovered = runtime.catalog().await.unwrap();
    assert_eq!(fake.connects("down"), 4, "one trial after the pause");
    assert_eq!(names(&recovered), ["down__t"]);
}

#[tokio::test(start_paused = true)]
async fn failing_calls_pause_the_server_and_calls_fail_at_once() {
    let clock = Arc::new(ManualClock::new());
    let fake = FakeConnector::with(&[("s", &["t"])]);
    let runtime = runtime(&fake, vec![config("s")], clock.clone());
    runtime.catalog().await.unwrap();
    fake.script("s", |s| s.calls_fail = true);
    for _ in 0..3 {
        let error = runtime.call("s__t", json!({"x": 1})).await.unwrap_err();
        assert!(error.to_string().contains("broken pipe"), "{error}");
    }
    let error = runtime.call("s__t", json!({"x": 1})).await.unwrap_err();
    assert!(
        matches!(error.kind(), CatalogErrorKind::Paused { .. }),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        "server \"s\" is paused after 3 consecutive failures; next try at 2027-01-15T08:01:00Z (in 60 s)"
    );
    assert_eq!(fake.calls("s"), 3, "a paused call never reaches the server");

    clock.advance(Duration::from_secs(60));
    fake.script("s", |s| s.calls_fail = false);
    let result = runtime.call("s__t", json!({"x": 2})).await.unwrap();
    assert_eq!(
        result.content,
        vec![ModelBlock::Text {
            text: "t {\"x\":2}".into()
        }]
    );
    // success cleared the count: two more failures do not pause
    fake.script("s", |s| s.calls_fail = true);
    for _ in 0..2 {
        runtime.call("s__t", json!({})).await.unwrap_err();
    }
    fake.script("s", |s| s.calls_fail = false);
    assert!(runtime.call("s__t", json!({})).await.is_ok());
}

#[tokio::test(start_paused = true)]
async fn calls_go_over_the_open_session_with_the_tool_call_timeout() {
    let fake = FakeConnector::with(&[("s", &["t"])]);
    let mut server = config("s");
    server.timeouts.tool_call = Duration::from_millis(1234);
    let runtime = runtime(&fake, vec![server], Arc::new(SystemClock));
    let result = runtime.call("s__t", json!({"x": 5})).await.unwrap();
    assert_eq!(
        result.content,
        vec![ModelBlock::Text {
            text: "t {\"x\":5}".into()
        }]
    );
    assert_eq!(fake.connects("s"), 1);
    assert_eq!(
        *fake.last_timeout.lock().unwrap(),
        Some(Duration::from_millis(1234))
    );

    let error = runtime
        .call("s__t", json!({"x": "five"}))
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), CatalogErrorKind::InvalidArguments { path, .. } if path == "/x"),
        "{error}"
    );
    assert_eq!(
        fake.calls("s"),
        1,
        "invalid arguments never reach the server"
    );
    let error = runtime.call("s__nope", json!({})).await.unwrap_err();
    assert_eq!(error.to_string(), "unknown tool \"s__nope\"");
}

/// Calls `s__t` of a server whose tool has `output_schema` and answers
/// with `structured`; compares the model's result with `expect`.
async fn check_output(output_schema: Value, structured: Option<Value>, expect: ModelResult) {
    let fake = FakeConnector::with(&[("s", &["t"])]);
    fake.script("s", |s| {
        s.output_schema = Some(output_schema.clone());
        s.structured = structured.clone();
    });
    let runtime = runtime(&fake, vec![config("s")], Arc::new(SystemClock));
    let result = runtime.call("s__t", json!({"x": 1})).await.unwrap();
    assert_eq!(result, expect, "{output_schema} / {structured:?}");
    let tool = runtime.catalog().await.unwrap();
    let tool = tool.get("s__t").unwrap();
    let raw = runtime
        .call_tool_raw(tool, json!({"x": 1}), None)
        .await
        .unwrap();
    assert_eq!(raw.model, expect, "the raw call checks the same");
    assert_eq!(
        raw.raw["structuredContent"],
        structured.unwrap_or(Value::Null),
        "and keeps the server's answer"
    );
}

#[tokio::test(start_paused = true)]
async fn structured_results_are_checked_against_the_output_schema() {
    let ok = |structured: &str| ModelResult {
        status: ResultStatus::Ok,
        content: vec![
            ModelBlock::Text {
                text: format!("structuredContent:\n{structured}"),
            },
            ModelBlock::Text {
                text: "t {\"x\":1}".into(),
            },
        ],
        truncated: false,
        warnings: Vec::new(),
    };
    let list = json!({"type": "array", "items": {"type": "integer"}});
    check_output(list.clone(), Some(json!([1, 2])), ok("[\n  1,\n  2\n]")).await;
    check_output(
        list,
        Some(json!([1, "two"])),
        ModelResult::failed(
            "server \"s\", tool \"t\": structuredContent does not match the tool's outputSchema at /1: \"two\" is not of type \"integer\"",
        ),
    )
    .await;
    check_output(json!({"type": "string"}), Some(json!("x")), ok("\"x\"")).await;
    check_output(
        json!({"type": "object"}),
        None,
        ModelResult::failed(
            "server \"s\", tool \"t\": the result has no structuredContent, which the tool's outputSchema requires (null is not of type \"object\")",
        ),
    )
    .await;
}

/// How often each server was asked for its tools so far.
fn check_lists(fake: &FakeConnector, step: &str, expect: &[(&str, usize)]) {
    let got: Vec<(&str, usize)> = expect.iter().map(|(s, _)| (*s, fake.lists(s))).collect();
    assert_eq!(got, expect, "tools/list per server after {step}");
}

#[tokio::test(start_paused = true)]
async fn a_listing_is_kept_until_its_ttl_then_only_that_server_is_listed_again() {
    let clock = Arc::new(ManualClock::new());
    let fake = FakeConnector::with(&[("a", &["t"]), ("b", &["t"]), ("c", &["t"])]);
    let minute = Duration::from_secs(60);
    fake.script("a", |s| {
        s.caching = Some((Some(minute), CacheScope::Private))
    });
    fake.script("c", |s| {
        s.caching = Some((Some(Duration::ZERO), CacheScope::Public))
    });
    let runtime = runtime(
        &fake,
        vec![config("a"), config("b"), config("c")],
        clock.clone(),
    );
    runtime.catalog().await.unwrap();
    check_lists(&fake, "the first catalog", &[("a", 1), ("b", 1), ("c", 1)]);

    clock.advance(Duration::from_secs(59));
    runtime.catalog().await.unwrap();
    // c's `ttlMs: 0` makes it stale at once: listed for every catalog.
    check_lists(&fake, "59 s", &[("a", 1), ("b", 1), ("c", 2)]);

    clock.advance(Duration::from_secs(2));
    runtime.call("a__t", json!({})).await.unwrap();
    check_lists(
        &fake,
        "a call past the TTL",
        &[("a", 1), ("b", 1), ("c", 2)],
    );
    runtime.catalog().await.unwrap();
    check_lists(&fake, "61 s", &[("a", 2), ("b", 1), ("c", 3)]);
    assert_eq!(fake.connects("a"), 1, "a stale listing keeps the session");

    // list_changed works as before, next to the TTL
    fake.events("b").tools_changed();
    runtime.catalog().await.unwrap();
    check_lists(&fake, "b's list_changed", &[("a", 2), ("b", 2), ("c", 4)]);
    clock.advance(Duration::from_secs(59));
    fake.events("a").tools_changed();
    runtime.catalog().await.unwrap();
    check_lists(&fake, "a's list_changed", &[("a", 3), ("b", 2), ("c", 5)]);
}

#[tokio::test(start_paused = true)]
async fn tools_the_session_rejected_are_warnings_naming_server_and_tool() {
    let fake = FakeConnector::with(&[("h", &["ok"])]);
    fake.script("h", |s| {
        s.rejected = vec![RejectedTool {
            name: "bad".into(),
            reason: "x-mcp-header \"My Region\" is not an HTTP token".into(),
        }]
    });
    let runtime = runtime(&fake, vec![config("h")], Arc::new(SystemClock));
    for _ in 0..2 {
        // reported by every catalog built from that listing
        let catalog = runtime.catalog().await.unwrap();
        assert_eq!(names(&catalog), ["h__ok"]);
        let notes: Vec<_> = catalog
            .diagnostics()
            .iter()
            .map(|d| (d.level, d.tool.as_deref(), d.message.as_str()))
            .collect();
        assert_eq!(
            notes,
            [(
                Level::Warning,
                Some("bad"),
                "server \"h\", tool \"bad\": x-mcp-header \"My Region\" is not an HTTP token; the tool is left out"
            )]
        );
        runtime.invalidate();
    }
    assert_eq!(fake.lists("h"), 1);
}

#[tokio::test(start_paused = true)]
async fn only_public_listings_are_shared_between_sessions() {
    let clock = Arc::new(ManualClock::new());
    let servers = [
        ("public", &["t"][..]),
        ("private", &["t"]),
        ("silent", &["t"]),
        ("public_no_ttl", &["t"]),
    ];
    let fake = FakeConnector::with(&servers);
    let minute = Some(Duration::from_secs(60));
    fake.script("public", |s| s.caching = Some((minute, CacheScope::Public)));
    fake.script("private", |s| {
        s.caching = Some((minute, CacheScope::Private))
    });
    fake.script("public_no_ttl", |s| {
        s.caching = Some((None, CacheScope::Public))
    });
    let manager = RuntimeManager::builder(
        ServerSet::all(servers.iter().map(|(name, _)| config(name))),
        Arc::new(FakeHandle(Arc::clone(&fake))),
    )
    .with_clock(clock.clone())
    .with_options(RuntimeOptions::default().with_materialize(openclaw()))
    .build();
    let names = ["public", "private", "silent", "public_no_ttl"];
    let expect =
        |counts: [usize; 4]| -> Vec<(&str, usize)> { names.iter().copied().zip(counts).collect() };
    for session in ["s1", "s2"] {
        let lease = manager.lease(session);
        let catalog = lease.catalog().await.unwrap();
        assert_eq!(
            catalog.tools().len(),
            4,
            "{session} sees every server's tool"
        );
    }
    check_lists(&fake, "two sessions", &expect([1, 2, 2, 2]));
    assert_eq!(
        fake.connects("public"),
        2,
        "sharing a listing shares no session"
    );

    // a change seen by one session ends the sharing for all
    fake.events("public").tools_changed();
    manager.lease("s3").catalog().await.unwrap();
    check_lists(&fake, "public's list_changed", &expect([2, 3, 3, 3]));
    manager.lease("s4").catalog().await.unwrap();
    check_lists(&fake, "a fourth session", &expect([2, 4, 4, 4]));

    clock.advance(Duration::from_secs(61));
    manager.lease("s5").catalog().await.unwrap();
    check_lists(&fake, "the public TTL", &expect([3, 5, 5, 5]));
}

#[tokio::test(start_paused = true)]
async fn utility_tools_reach_resources_and_prompts() {
    let fake = FakeConnector::with(&[("docs", &[])]);
    fake.script("docs", |s| {
        s.features = ServerFeatures::default()
            .with_resources(true)
            .with_prompts(true);
        s.resources = vec![json!({"uri": "test://a", "name": "a"})];
        s.prompts = vec![json!({"name": "greet"})];
    });
    let runtime = runtime(&fake, vec![config("docs")], Arc::new(SystemClock));
    let catalog = runtime.catalog().await.unwrap();
    assert_eq!(
        names(&catalog),
        [
            "docs__prompts_get",
            "docs__prompts_list",
            "docs__resources_list",
            "docs__resources_read"
        ]
    );
    let read = runtime
        .call("docs__resources_read", json!({"uri": "test://a"}))
        .await
        .unwrap();
    assert_eq!(
        read.content,
        vec![ModelBlock::Text {
            text: "content of a".into()
        }]
    );
    let prompt = runtime
        .call(
            "docs__prompts_get",
            json!({"name": "greet", "arguments": {"who": "ann"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        prompt.content,
        vec![ModelBlock::Text {
            text: "user: greet {\"who\":\"ann\"}".into()
        }]
    );
    let error = runtime
        .call("docs__resources_read", json!({}))
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), CatalogErrorKind::InvalidArguments { .. }),
        "{error}"
    );
}

/// A call of `call_delay` runs on `a` (and one on `b`, which stays) when
/// `a` is removed (or, with `change`, replaced); the runtime's retire
/// grace is 30 s. Checks whether the call on `a` completed and when its
/// session closed.
async fn check_retire(call_delay: Duration, change: bool, completes: bool, closed_after: Duration) {
    let fake = FakeConnector::with(&[("a", &["t"]), ("b", &["t"])]);
    fake.script("a", |s| s.call_delay = call_delay);
    fake.script("b", |s| s.call_delay = call_delay);
    let runtime = Arc::new(runtime(
        &fake,
        vec![config("a"), config("b")],
        Arc::new(SystemClock),
    ));
    runtime.catalog().await.unwrap();
    let started = tokio::time::Instant::now();
    let call = |tool: &'static str| {
        let runtime = Arc::clone(&runtime);
        tokio::spawn(async move { runtime.call(tool, json!({})).await })
    };
    let (on_a, on_b) = (call("a__t"), call("b__t"));
    while fake.calls("a") + fake.calls("b") < 2 {
        tokio::task::yield_now().await;
    }
    let next = match change {
        true => {
            let mut changed = config("a");
            changed.timeouts.request = Duration::from_secs(7);
            vec![changed, config("b")]
        }
        false => vec![config("b")],
    };
    let reconciled = runtime.reconcile(ServerSet::all(next)).await;
    assert_eq!(reconciled.unchanged, ["b"]);
    assert_eq!(reconciled.touched(), ["a"]);
    assert_eq!(fake.closes("a"), 0, "closed under a running call");
    let outcome = on_a.await.unwrap();
    assert_eq!(outcome.is_ok(), completes, "{outcome:?}");
    // The session closes right after the call ends (or the grace ran out).
    while fake.closes("a") == 0 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let closed_at = started.elapsed();
    assert!(
        closed_at >= closed_after && closed_at < closed_after + Duration::from_millis(50),
        "closed after {closed_at:?}, expected {closed_after:?}"
    );
    // The unchanged server's call completes and its session stays.
    assert!(on_b.await.unwrap().is_ok());
    assert_eq!((fake.closes("b"), fake.connects("b")), (0, 1));
    let expected: &[&str] = if change { &["a__t", "b__t"] } else { &["b__t"] };
    assert_eq!(names(&runtime.catalog().await.unwrap()), expected);
    runtime.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_removed_or_replaced_server_closes_once_its_calls_end() {
    let grace = mcp_catalog::sessions::DEFAULT_RETIRE_GRACE;
    for change in [false, true] {
        // A call shorter than the grace completes, then the session closes.
        let short = Duration::from_secs(10);
        check_retire(short, change, true, short).await;
        // A longer one is ended when the grace runs out.
        check_retire(Duration::from_secs(3600), change, false, grace).await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_shutdown_closes_a_draining_session_at_once() {
    let fake = FakeConnector::with(&[("a", &["t"])]);
    fake.script("a", |s| s.call_delay = Duration::from_secs(3600));
    let runtime = Arc::new(runtime(&fake, vec![config("a")], Arc::new(SystemClock)));
    runtime.catalog().await.unwrap();
    let call = {
        let runtime = Arc::clone(&runtime);
        tokio::spawn(async move { runtime.call("a__t", json!({})).await })
    };
    while fake.calls("a") == 0 {
        tokio::task::yield_now().await;
    }
    runtime.reconcile(ServerSet::all([])).await;
    assert_eq!(fake.closes("a"), 0);
    let started = tokio::time::Instant::now();
    runtime.shutdown().await;
    assert_eq!(fake.closes("a"), 1);
    assert!(call.await.unwrap().is_err());
    assert!(started.elapsed() < Duration::from_millis(10));
}

#[tokio::test(start_paused = true)]
async fn a_changed_entry_reconnects_only_that_server() {
    let fake = FakeConnector::with(&[("a", &["t"]), ("b", &["t"])]);
    let runtime = runtime(&fake, vec![config("a"), config("b")], Arc::new(SystemClock));
    runtime.catalog().await.unwrap();
    let mut changed_b = config("b");
    changed_b.timeouts.request = Duration::from_secs(5);
    let reconciled = runtime
        .reconcile(ServerSet::all([config("a"), changed_b.clone()]))
        .await;
    assert_eq!(
        (reconciled.changed, reconciled.unchanged),
        (vec!["b".to_owned()], vec!["a".to_owned()])
    );
    assert_eq!(fake.closes("b"), 1, "the old session of b is closed");
    runtime.catalog().await.unwrap();
    assert_eq!((fake.connects("a"), fake.connects("b")), (1, 2));
    assert_eq!(fake.closes("a"), 0);
    // the same entries again change nothing
    assert!(
        runtime
            .reconcile(ServerSet::all([config("a"), changed_b]))
            .await
            .is_unchanged()
    );
    // removing a server closes it and takes its tools out
    assert_eq!(
        runtime
            .reconcile(ServerSet::all([config("a")]))
            .await
            .removed,
        ["b"]
    );
    assert_eq!(names(&runtime.catalog().await.unwrap()), ["a__t"]);
    assert_eq!(fake.closes("b"), 2);
}

#[tokio::test(start_paused = true)]
async fn idle_runtimes_are_evicted_after_the_ttl_unless_in_use() {
    let clock = Arc::new(ManualClock::new());
    let fake = FakeConnector::with(&[("a", &["t"])]);
    let manager = RuntimeManager::builder(
        ServerSet::all(vec![config("a")]),
        Arc::new(FakeHandle(Arc::clone(&fake))),
    )
    .with_clock(clock.clone())
    .with_options(RuntimeOptions::default().with_materialize(openclaw()))
    .build();
    {
        let lease = manager.lease("idle");
        lease.catalog().await.unwrap();
    }
    let busy = manager.lease("busy");
    busy.catalog().await.unwrap();
    assert_eq!(manager.session_ids(), ["busy", "idle"]);

    clock.advance(Duration::from_secs(9 * 60));
    assert!(manager.evict_idle().await.is_empty());
    clock.advance(Duration::from_secs(60));
    assert_eq!(manager.evict_idle().await, ["idle"]);
    assert_eq!(manager.session_ids(), ["busy"]);
    assert_eq!(
        fake.closes("a"),
        1,
        "the evicted runtime's session is closed"
    );

    drop(busy);
    clock.advance(Duration::from_secs(600));
    assert_eq!(manager.evict_idle().await, ["busy"]);
    // a new lease starts over lazily
    let fresh = manager.lease("idle");
    assert_eq!(fake.connects("a"), 2);
    fresh.catalog().await.unwrap();
    assert_eq!(fake.connects("a"), 3);
}

#[tokio::test(start_paused = true)]
async fn a_zero_ttl_never_evicts() {
    let clock = Arc::new(ManualClock::new());
    let fake = FakeConnector::with(&[("a", &["t"])]);
    let options = RuntimeOptions::default()
        .with_materialize(openclaw())
        .with_idle_ttl(Duration::ZERO);
    let manager = RuntimeManager::builder(
        ServerSet::all(vec![config("a")]),
        Arc::new(FakeHandle(Arc::clone(&fake))),
    )
    .with_clock(clock.clone())
    .with_options(options)
    .build();
    manager.lease("s").catalog().await.unwrap();
    clock.advance(Duration::from_secs(365 * 24 * 3600));
    assert!(manager.evict_idle().await.is_empty());
}

/// Starts the idle sweeper every `every` on a manager with one runtime
/// already past its TTL, lets `wait` of (paused) time pass, and says
/// whether the runtime was evicted; the sweeper must still be running
/// (a panic ends its task).
async fn check_sweeper(every: Duration, wait: Duration) -> bool {
    let clock = Arc::new(ManualClock::new());
    let fake = FakeConnector::with(&[("a", &["t"])]);
    let manager = RuntimeManager::builder(
        ServerSet::all(vec![config("a")]),
        Arc::new(FakeHandle(Arc::clone(&fake))),
    )
    .with_clock(clock.clone())
    .with_options(RuntimeOptions::default().with_materialize(openclaw()))
    .build();
    manager.lease("idle").catalog().await.unwrap();
    clock.advance(Duration::from_secs(3600));
    let sweeper = manager.spawn_idle_sweeper(every);
    tokio::time::sleep(wait).await;
    assert!(!sweeper.is_finished(), "every {every:?}: the sweeper ended");
    sweeper.abort();
    match sweeper.await {
        Err(e) => assert!(e.is_cancelled(), "every {every:?}: {e}"),
        Ok(()) => panic!("every {every:?}: the sweeper returned"),
    }
    manager.session_ids().is_empty()
}

/// The sweeper takes any interval a host passes: zero and 1 ns sweep at
/// the timer's resolution (zero made tokio panic), and an interval past
/// the clock's range waits without overflowing.
#[tokio::test(start_paused = true)]
async fn the_idle_sweeper_takes_any_interval() {
    let minute = Duration::from_secs(60);
    for (every, evicted_within_a_minute) in [
        (Duration::ZERO, true),
        (Duration::from_nanos(1), true),
        (Duration::from_millis(200), true),
        (Duration::from_secs(3600), false),
        (Duration::from_millis(u64::MAX), false),
        (Duration::MAX, false),
    ] {
        assert_eq!(
            check_sweeper(every, minute).await,
            evicted_within_a_minute,
            "every {every:?}"
        );
    }
    assert!(
        check_sweeper(
            Duration::ZERO,
            mcp_catalog::sessions::MIN_SWEEP_INTERVAL * 3
        )
        .await,
        "zero sweeps at the timer's resolution"
    );
}

#[tokio::test(start_paused = true)]
async fn shutdown_closes_every_session() {
    let fake = FakeConnector::with(&[("a", &["t"]), ("b", &["t"])]);
    let manager = RuntimeManager::builder(
        ServerSet::all(vec![config("a"), config("b")]),
        Arc::new(FakeHandle(Arc::clone(&fake))),
    )
    .with_options(RuntimeOptions::default().with_materialize(openclaw()))
    .build();
    let one = manager.lease("one");
    one.catalog().await.unwrap();
    manager.lease("two").catalog().await.unwrap();
    manager.shutdown().await;
    assert_eq!((fake.closes("a"), fake.closes("b")), (2, 2));
    assert!(manager.session_ids().is_empty());
    let error = one.catalog().await.unwrap_err();
    assert_eq!(error.to_string(), "session runtime \"one\" is shut down");
}

#[tokio::test(start_paused = true)]
async fn disabled_servers_never_connect() {
    let fake = FakeConnector::with(&[("on", &["t"]), ("off", &["t"])]);
    let mut off = config("off");
    off.enabled = false;
    let runtime = runtime(&fake, vec![config("on"), off], Arc::new(SystemClock));
    assert_eq!(names(&runtime.catalog().await.unwrap()), ["on__t"]);
    assert_eq!(fake.connects("off"), 0);
}

#[test]
fn backoff_defaults_match_the_reference() {
    let policy = BackoffPolicy::default();
    assert_eq!(
        (policy.threshold, policy.pause),
        (3, Duration::from_secs(60))
    );
    assert_eq!(
        RuntimeOptions::default()
            .with_materialize(openclaw())
            .idle_ttl,
        Duration::from_secs(600)
    );
    assert!(
        RuntimeOptions::default()
            .with_materialize(openclaw())
            .max_concurrent_connects
            >= 20
    );
}

/// A home and project on disk: the user has `shadowed` and approves
/// `approved` and denies `denied` for this project; the project's
/// `.mcp.json` has four servers, one of them shadowing the user's
/// `shadowed` with a `headersHelper`.
fn approval_tree() -> (tempfile::TempDir, mcp_config::LoadedConfig) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let sdk = |name: &str| json!({"type": "sdk", "name": name});
    let user = json!({
        "mcpServers": {"shadowed": sdk("shadowed"), "user": sdk("user")},
        "projects": {project.to_string_lossy(): {
            "enabledMcpjsonServers": ["approved"],
            "disabledMcpjsonServers": ["denied"],
        }},
    });
    std::fs::write(home.join(".claude.json"), user.to_string()).unwrap();
    let shipped = json!({"mcpServers": {
        "approved": sdk("approved"),
        "pending": sdk("pending"),
        "denied": sdk("denied"),
        "shadowed": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headersHelper": "touch helper-ran"},
    }});
    std::fs::write(project.join(".mcp.json"), shipped.to_string()).unwrap();
    let config = mcp_config::load(
        &mcp_config::LoadOptions::default()
            .with_home(home)
            .with_project(project),
    );
    (dir, config)
}

#[tokio::test(start_paused = true)]
async fn only_approved_servers_start_and_held_back_ones_are_diagnostics() {
    let (_dir, config) = approval_tree();
    let fake = FakeConnector::with(&[
        ("approved", &["t"]),
        ("pending", &["t"]),
        ("denied", &["t"]),
        ("shadowed", &["t"]),
        ("user", &["t"]),
    ]);
    let set = ServerSet::from_loaded(&config);
    let runnable: Vec<&str> = set.runnable().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(runnable, ["approved", "user"]);
    let runtime = SessionRuntime::builder("s1", set, Arc::new(FakeHandle(Arc::clone(&fake))))
        .with_options(RuntimeOptions::default().with_materialize(openclaw()))
        .build();
    let catalog = runtime.catalog().await.unwrap();
    assert_eq!(names(&catalog), ["approved__t", "user__t"]);
    for held in ["pending", "denied", "shadowed"] {
        assert_eq!(fake.connects(held), 0, "{held} must not connect");
    }
    let notes: Vec<(&str, Level, &str)> = catalog
        .diagnostics()
        .iter()
        .map(|d| (d.server.as_str(), d.level, d.message.as_str()))
        .collect();
    assert_eq!(notes.len(), 3, "{notes:#?}");
    for (server, level, message) in notes {
        assert_eq!(level, Level::Warning);
        assert!(
            message.starts_with(&format!("project server `{server}` (from "))
                && message.contains(".mcp.json) was not started"),
            "{message}"
        );
        let how = if server == "denied" {
            "denied by disabledMcpjsonServers in user or local settings; remove it there to approve it"
        } else {
            "it awaits approval; add it to enabledMcpjsonServers (or set enableAllProjectMcpServers) in user or local settings"
        };
        assert!(message.ends_with(how), "{message}");
    }
}

#[tokio::test(start_paused = true)]
async fn an_approval_given_later_starts_the_server_in_every_session() {
    let (_dir, config) = approval_tree();
    let fake = FakeConnector::with(&[("approved", &["t"]), ("pending", &["t"]), ("user", &["t"])]);
    let manager = RuntimeManager::builder(
        ServerSet::from_loaded(&config),
        Arc::new(FakeHandle(Arc::clone(&fake))),
    )
    .with_options(RuntimeOptions::default().with_materialize(openclaw()))
    .build();
    let lease = manager.lease("s");
    assert_eq!(
        names(&lease.catalog().await.unwrap()),
        ["approved__t", "user__t"]
    );
    assert_eq!(fake.connects("pending"), 0);

    // The host reloads after the person approved `pending`.
    let mut approved = config.clone();
    for server in &mut approved.servers {
        if server.config.name == "pending" {
            server.approval = mcp_config::Approval::Approved;
        }
    }
    let changed = manager.reconcile(ServerSet::from_loaded(&approved)).await;
    assert_eq!(changed["s"].added, ["pending"]);
    let catalog = lease.catalog().await.unwrap();
    assert_eq!(names(&catalog), ["approved__t", "pending__t", "user__t"]);
    assert_eq!(fake.connects("pending"), 1);
    let held: Vec<&str> = catalog
        .diagnostics()
        .iter()
        .map(|d| d.server.as_str())
        .collect();
    assert_eq!(held, ["denied", "shadowed"]);

    // Taking the approval back closes the session.
    manager.reconcile(ServerSet::from_loaded(&config)).await;
    assert_eq!(fake.closes("pending"), 1);
    assert_eq!(
        names(&lease.catalog().await.unwrap()),
        ["approved__t", "user__t"]
    );
}

/// One server announcing `announced` (resources, prompts) and listing
/// `listed` (resources, templates, prompts: how many items each first
/// page has), or failing those lists: the utility tools it gets, the
/// diagnostics about it (`level message-start`), and how many list
/// requests the check made.
fn check_offered(
    announced: (bool, bool),
    listed: (usize, usize, usize),
    fail: bool,
    utilities: &[&str],
    diagnostics: &[&str],
    requests: usize,
) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let fake = FakeConnector::with(&[("s", &["t"])]);
        let items = |n: usize, key: &str| -> Vec<Value> {
            (0..n)
                .map(|i| json!({"name": format!("{key}{i}"), "uri": format!("test://{i}")}))
                .collect()
        };
        fake.script("s", |s| {
            s.features = ServerFeatures::default()
                .with_resources(announced.0)
                .with_prompts(announced.1);
            s.resources = items(listed.0, "r");
            s.templates = items(listed.1, "t");
            s.prompts = items(listed.2, "p");
            s.offer_lists_fail = fail;
        });
        let session = runtime_of(&fake);
        let catalog = session.catalog().await.unwrap();
        let mut expected = vec!["s__t"];
        expected.extend(utilities);
        expected.sort();
        let case = format!("{announced:?} {listed:?} fail={fail}");
        assert_eq!(names(&catalog), expected, "{case}");
        let got: Vec<String> = catalog
            .diagnostics()
            .iter()
            .map(|d| format!("{:?} {}", d.level, d.message))
            .collect();
        assert_eq!(got.len(), diagnostics.len(), "{case}: {got:#?}");
        for (got, want) in got.iter().zip(diagnostics) {
            assert!(got.starts_with(want), "{case}: {got:?} is not {want:?}…");
        }
        let offer_lists = fake.counters("s").offer_lists.load(Ordering::SeqCst);
        assert_eq!(offer_lists, requests, "{case}: list requests");
        // the answer is kept: a rebuild asks nothing again
        session.invalidate();
        session.catalog().await.unwrap();
        assert_eq!(
            fake.counters("s").offer_lists.load(Ordering::SeqCst),
            requests,
            "{case}: a rebuild lists again"
        );
    });
}

fn runtime_of(fake: &Arc<FakeConnector>) -> SessionRuntime {
    runtime(fake, vec![config("s")], Arc::new(SystemClock))
}

const RESOURCE_TOOLS: [&str; 2] = ["s__resources_list", "s__resources_read"];
const PROMPT_TOOLS: [&str; 2] = ["s__prompts_get", "s__prompts_list"];

#[test]
fn utility_tools_only_for_servers_that_list_something() {
    // no capability: no request, no utility
    check_offered((false, false), (3, 3, 3), false, &[], &[], 0);
    // capability and items
    check_offered((true, false), (1, 0, 0), false, &RESOURCE_TOOLS, &[], 1);
    check_offered((false, true), (0, 0, 2), false, &PROMPT_TOOLS, &[], 1);
    let both = [RESOURCE_TOOLS, PROMPT_TOOLS].concat();
    check_offered((true, true), (1, 0, 1), false, &both, &[], 2);
    // a template alone is enough for the resource utilities
    check_offered((true, false), (0, 1, 0), false, &RESOURCE_TOOLS, &[], 2);
    // capability but nothing listed: no utility, an info note
    check_offered(
        (true, true),
        (0, 0, 0),
        false,
        &[],
        &[
            "Info server \"s\" announces prompts but lists none",
            "Info server \"s\" announces resources but lists none",
        ],
        3,
    );
    // a list that fails: no utility, a warning
    check_offered(
        (true, true),
        (1, 1, 1),
        true,
        &[],
        &[
            "Warning server \"s\" announces prompts, but listing them failed",
            "Warning server \"s\" announces resources, but listing them failed",
        ],
        2,
    );
}

#[tokio::test(start_paused = true)]
async fn a_resources_or_prompts_list_change_checks_again() {
    let fake = FakeConnector::with(&[("s", &["t"])]);
    fake.script("s", |s| {
        s.features = ServerFeatures::default()
            .with_resources(false)
            .with_prompts(true)
    });
    let session = runtime_of(&fake);
    assert_eq!(names(&session.catalog().await.unwrap()), ["s__t"]);
    fake.script("s", |s| s.prompts = vec![json!({"name": "greet"})]);
    // unannounced, the catalog stays as it was
    assert_eq!(names(&session.catalog().await.unwrap()), ["s__t"]);
    fake.events("s").offers_changed();
    let catalog = session.catalog().await.unwrap();
    assert_eq!(
        names(&catalog),
        ["s__prompts_get", "s__prompts_list", "s__t"]
    );
    // tools are not listed again for it, and the prompts list was asked twice
    assert_eq!(fake.lists("s"), 1);
    assert_eq!(fake.counters("s").offer_lists.load(Ordering::SeqCst), 2);
    fake.script("s", |s| s.prompts.clear());
    fake.events("s").offers_changed();
    assert_eq!(names(&session.catalog().await.unwrap()), ["s__t"]);
}

/// What a host or a server does to a runtime with one open server `a`.
#[derive(Debug, Clone, Copy)]
enum Change {
    ToolsChanged,
    /// A resources or prompts `list_changed` (the server is checked again,
    /// and may now get utility tools).
    OffersChanged,
    Closed,
    ChangedEntry,
    SameEntries,
    Approved,
    Invalidate,
}

/// The next version a subscription wakes with, or `None` when nothing
/// wakes it for a (paused-clock) minute.
async fn next(updates: &mut CatalogUpdates) -> Option<u64> {
    tokio::time::timeout(Duration::from_secs(60), updates.changed())
        .await
        .ok()
        .flatten()
}

/// Applies `change` after the first catalog and checks whether a
/// subscriber wakes, and that the catalog asked for next holds `tools`.
async fn check_update(change: Change, wakes: bool, tools: &[&str]) {
    let fake = FakeConnector::with(&[("a", &["t"]), ("b", &["u"])]);
    let runtime = runtime(&fake, vec![config("a")], Arc::new(SystemClock));
    let mut updates = runtime.subscribe();
    runtime.catalog().await.unwrap();
    let before = updates.version();
    match change {
        Change::ToolsChanged => {
            fake.script("a", |s| s.tools = vec!["t".into(), "t2".into()]);
            fake.events("a").tools_changed();
        }
        Change::OffersChanged => fake.events("a").offers_changed(),
        Change::Closed => fake.events("a").closed(),
        Change::ChangedEntry => {
            let mut changed = config("a");
            changed.timeouts.request = Duration::from_secs(5);
            runtime.reconcile(ServerSet::all([changed])).await;
        }
        Change::SameEntries => {
            runtime.reconcile(ServerSet::all([config("a")])).await;
        }
        Change::Approved => {
            runtime
                .reconcile(ServerSet::all([config("a"), config("b")]))
                .await;
        }
        Change::Invalidate => runtime.invalidate(),
    }
    let woke = next(&mut updates).await;
    match woke {
        Some(version) => {
            assert!(wakes, "{change:?} woke the subscriber");
            assert!(version > before, "{change:?}: {version} after {before}");
            assert_eq!(updates.version(), version);
        }
        None => assert!(!wakes, "{change:?} did not wake the subscriber"),
    }
    assert_eq!(
        names(&runtime.catalog().await.unwrap()),
        tools,
        "{change:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn subscribers_wake_on_every_change_to_the_catalog() {
    check_update(Change::ToolsChanged, true, &["a__t", "a__t2"]).await;
    check_update(Change::Closed, true, &["a__t"]).await;
    check_update(Change::ChangedEntry, true, &["a__t"]).await;
    check_update(Change::Approved, true, &["a__t", "b__u"]).await;
    check_update(Change::Invalidate, true, &["a__t"]).await;
    check_update(Change::OffersChanged, true, &["a__t"]).await;
    check_update(Change::SameEntries, false, &["a__t"]).await;
}

#[tokio::test(start_paused = true)]
async fn changes_while_the_host_is_busy_wake_it_once_with_the_newest_version() {
    let fake = FakeConnector::with(&[("a", &["t"])]);
    let runtime = runtime(&fake, vec![config("a")], Arc::new(SystemClock));
    runtime.catalog().await.unwrap();
    let mut updates = runtime.subscribe();
    let first = updates.version();
    fake.events("a").tools_changed();
    runtime.invalidate();
    runtime.invalidate();
    assert_eq!(next(&mut updates).await, Some(first + 3));
    assert_eq!(next(&mut updates).await, None, "all three seen at once");
    // every subscription sees every change
    let mut other = updates.clone();
    runtime.invalidate();
    assert_eq!(next(&mut updates).await, Some(first + 4));
    assert_eq!(next(&mut other).await, Some(first + 4));
}

#[tokio::test(start_paused = true)]
async fn a_waiting_subscriber_wakes_when_a_server_lists_new_tools() {
    let fake = FakeConnector::with(&[("a", &["t"])]);
    let runtime = Arc::new(runtime(&fake, vec![config("a")], Arc::new(SystemClock)));
    runtime.catalog().await.unwrap();
    let mut updates = runtime.subscribe();
    let host = tokio::spawn({
        let runtime = Arc::clone(&runtime);
        async move {
            updates.changed().await.unwrap();
            runtime.catalog().await.unwrap()
        }
    });
    tokio::task::yield_now().await;
    fake.script("a", |s| s.tools = vec!["t".into(), "v".into()]);
    fake.events("a").tools_changed();
    let catalog = host.await.unwrap();
    assert_eq!(names(&catalog), ["a__t", "a__v"]);
}

#[tokio::test(start_paused = true)]
async fn shutdown_ends_every_subscription() {
    let fake = FakeConnector::with(&[("a", &["t"])]);
    let runtime = runtime(&fake, vec![config("a")], Arc::new(SystemClock));
    let mut updates = runtime.subscribe();
    runtime.catalog().await.unwrap();
    runtime.shutdown().await;
    assert_eq!(updates.changed().await, None);
    assert_eq!(runtime.subscribe().changed().await, None);
    drop(runtime);
    let fake = FakeConnector::with(&[("a", &["t"])]);
    let mut updates = runtime_of_one(&fake).subscribe();
    assert_eq!(
        updates.changed().await,
        None,
        "a dropped runtime ends it too"
    );
}

fn runtime_of_one(fake: &Arc<FakeConnector>) -> SessionRuntime {
    runtime(fake, vec![config("a")], Arc::new(SystemClock))
}

/// These tests predate the `claw` default and are about other things
/// than naming: they keep the `server__tool` names they were written for.
fn openclaw() -> mcp_catalog::MaterializeOptions {
    mcp_catalog::MaterializeOptions::default().with_style(mcp_catalog::NamingStyle::OpenClaw)
}
