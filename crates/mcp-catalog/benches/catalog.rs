//! Catalog benchmarks: (a) materialising 10,000 tools with realistic
//! schemas, (b) a warm catalog fetch for a session with 1,000 tools, (c) a
//! cold catalog over 10 servers that each take 300 ms to initialise, (d)
//! the per-call work: preparing strict-mode arguments and converting a
//! result.

// The stdio benchmark says on stderr why it skips.
#![allow(clippy::print_stderr, clippy::expect_used)]

mod support;
use support::{listings, listings_numbered, listings_of, normal_schema, realistic_schema};

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use mcp_catalog::McpConnector;
use mcp_catalog::results::{convert_result_owned, dispose_result};
use mcp_catalog::{
    CatalogError, Connection, Connector, MaterializeOptions, ProviderProfile, SchemaCache,
    ServerEvents, ServerFeatures, ServerSet, ServerTools, SessionRuntime, convert_result,
    materialize, materialize_cached,
};
use mcp_config::{ServerConfig, StdioConfig, TransportConfig};
use mcp_transport::ConnectOptions;
use mcp_transport::{CallToolResult, ContentBlock, Tool};
use serde_json::{Map, Value, json};

/// A deep copy of every listing: the plain clone of the input each
/// materialisation is reported next to.
fn clone_listings(input: &[ServerTools]) -> Vec<ServerTools> {
    input
        .iter()
        .map(|listing| {
            let mut copy = listing.clone();
            copy.tools = listing.tools.to_vec().into();
            copy
        })
        .collect()
}

fn materialise_10k(c: &mut Criterion) {
    // 100 servers of the same 100 tools' schemas: what hash-consing
    // shares across servers (and within one, in `rebuild`).
    let input = listings(100, 100);
    let mut group = c.benchmark_group("materialise_10k_tools");
    group.sample_size(20);
    group.bench_function("plain_clone_listings", |b| {
        b.iter_with_large_drop(|| clone_listings(&input))
    });
    // Baseline for the ratio: one deep copy of every input schema, the
    // least any materialisation that outputs new schemas must do.
    let schemas: Vec<&Value> = input
        .iter()
        .flat_map(|l| l.tools.iter().map(|t| &t.input_schema))
        .collect();
    group.bench_function("baseline_clone_schemas", |b| {
        b.iter_with_large_drop(|| schemas.iter().map(|s| (*s).clone()).collect::<Vec<Value>>())
    });
    for profile in ProviderProfile::ALL {
        let options = MaterializeOptions::default().with_profile(profile);
        // The old catalog is freed when the last holder lets go of it,
        // outside the build: leave deallocation out of the timing.
        group.bench_function(profile.as_str(), |b| {
            b.iter_with_large_drop(|| materialize(&input, &options))
        });
    }
    // Schemas that are already normal: the generic profile shares them
    // with the listing instead of copying.
    let normal = listings_of(100, 100, normal_schema);
    let options = MaterializeOptions::default();
    group.bench_function("generic_already_normal", |b| {
        b.iter_with_large_drop(|| materialize(&normal, &options))
    });
    // What a runtime rebuild costs after one of 100 servers changed its
    // tools: the other 99 servers' schemas come from the cache. The new
    // listing arrives from the server; making it is not part of the build.
    let mut cache = SchemaCache::default();
    materialize_cached(&input, &options, &mut cache);
    group.bench_function("rebuild_one_server_changed", |b| {
        b.iter_batched(
            || {
                let mut changed = input.clone();
                changed[0].tools = changed[0].tools.to_vec().into();
                changed
            },
            |changed| materialize_cached(&changed, &options, &mut cache),
            BatchSize::LargeInput,
        )
    });
    // The same, with the changed server's 100 schemas all new (none seen
    // before): the rebuild prepares each of them.
    let mut round = 0usize;
    group.bench_function("rebuild_one_server_new_schemas", |b| {
        b.iter_batched(
            || {
                round += 1;
                let mut changed = input.clone();
                let fresh =
                    listings_numbered(1, 100, realistic_schema, |_, t| 1_000_000 + round * 100 + t);
                changed[0].tools = Arc::clone(&fresh[0].tools);
                changed
            },
            |changed| materialize_cached(&changed, &options, &mut cache),
            BatchSize::LargeInput,
        )
    });
    group.finish();

    // Every one of the 10,000 schemas different (a number in a
    // description): nothing to share, each is prepared once.
    let distinct = listings_numbered(100, 100, realistic_schema, |s, t| s * 100 + t);
    let mut group = c.benchmark_group("materialise_10k_distinct_schemas");
    group.sample_size(10);
    group.bench_function("plain_clone_listings", |b| {
        b.iter_with_large_drop(|| clone_listings(&distinct))
    });
    for profile in ProviderProfile::ALL {
        let options = MaterializeOptions::default().with_profile(profile);
        group.bench_function(profile.as_str(), |b| {
            b.iter_with_large_drop(|| materialize(&distinct, &options))
        });
    }
    group.finish();
}

/// What one call costs before and after the server: the model's
/// arguments made the server's (strict mode sends `null` for every
/// optional property it leaves out), and the server's result made the
/// model's.
fn call_path(c: &mut Criterion) {
    let mut group = c.benchmark_group("call_path");
    let options = MaterializeOptions::default().with_profile(ProviderProfile::OpenAiStrict);
    let catalog = materialize(&listings(1, 1), &options);
    let tool = catalog.tools()[0].clone();
    let arguments = json!({
        "query": "open issues",
        "limit": null,
        "since": "2026-01-01T00:00:00Z",
        "sort": "desc",
        "labels": ["bug", "help wanted"],
        "owner": {"login": "octo", "id": null},
        "options": null
    });
    // The validator is compiled on the first call; time the calls after.
    tool.prepare_arguments(arguments.clone())
        .expect("arguments are valid");
    group.bench_function("prepare_arguments_openai_strict", |b| {
        b.iter_batched(
            || arguments.clone(),
            |arguments| tool.prepare_arguments(arguments).expect("valid"),
            BatchSize::SmallInput,
        )
    });

    // A typical text-heavy answer: 16 blocks of 4 KiB, under the cap.
    let result = CallToolResult {
        content: (0..16)
            .map(|i| ContentBlock::text(format!("{i:04} {}", "x".repeat(4091))))
            .collect(),
        structured_content: None,
        is_error: false,
    };
    group.bench_function("convert_result_borrowed", |b| {
        b.iter_with_large_drop(|| convert_result(&result, 100_000))
    });
    // What the runtime does with the result it owns: convert, then drop
    // it. Before `convert_result_owned` this was `convert_result(&result)`
    // followed by `dispose_result(result)`, kept here as the reference.
    group.bench_function("convert_result_and_drop", |b| {
        b.iter_batched(
            || result.clone(),
            |result| convert_result_owned(result, 100_000),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("convert_result_borrowed_then_drop", |b| {
        b.iter_batched(
            || result.clone(),
            |result| {
                let converted = convert_result(&result, 100_000);
                dispose_result(result);
                converted
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

struct BenchConnection {
    tools: Vec<Tool>,
}

#[async_trait]
impl Connection for BenchConnection {
    fn features(&self) -> ServerFeatures {
        ServerFeatures::default()
    }
    async fn list_tools(&self) -> Result<Vec<Tool>, CatalogError> {
        Ok(self.tools.clone())
    }
    async fn call_tool(
        &self,
        _: &str,
        _: Value,
        _: Duration,
        _: Option<mcp_transport::ProgressCallback>,
    ) -> Result<CallToolResult, CatalogError> {
        Ok(CallToolResult::default())
    }
    async fn list_resources(&self, _: Option<String>) -> Result<Value, CatalogError> {
        Ok(Value::Null)
    }
    async fn read_resource(&self, _: &str) -> Result<Value, CatalogError> {
        Ok(Value::Null)
    }
    async fn list_prompts(&self, _: Option<String>) -> Result<Value, CatalogError> {
        Ok(Value::Null)
    }
    async fn get_prompt(&self, _: &str, _: Map<String, Value>) -> Result<Value, CatalogError> {
        Ok(Value::Null)
    }
    async fn close(&self) {}
}

/// In-memory servers with a fixed init delay.
struct BenchConnector {
    tools_per_server: usize,
    init_delay: Duration,
}

#[async_trait]
impl Connector for BenchConnector {
    async fn connect(
        &self,
        _: &ServerConfig,
        _: ServerEvents,
    ) -> Result<Arc<dyn Connection>, CatalogError> {
        tokio::time::sleep(self.init_delay).await;
        let tools = listings(1, self.tools_per_server).remove(0).tools;
        Ok(Arc::new(BenchConnection {
            tools: tools.to_vec(),
        }))
    }
}

fn config(name: String) -> ServerConfig {
    ServerConfig::new(name.clone(), TransportConfig::Sdk { name })
}

fn warm_fetch(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("tokio runtime");
    let runtime = SessionRuntime::builder(
        "bench",
        ServerSet::all((0..10).map(|i| config(format!("server-{i}")))),
        Arc::new(BenchConnector {
            tools_per_server: 100,
            init_delay: Duration::ZERO,
        }),
    )
    .build();
    let catalog = rt.block_on(runtime.catalog()).expect("catalog");
    assert_eq!(catalog.tools().len(), 1000);
    c.bench_function("warm_catalog_fetch_1000_tools", |b| {
        b.to_async(&rt)
            .iter(|| async { runtime.catalog().await.expect("catalog") })
    });
}

fn cold_in_memory(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("tokio runtime");
    let mut group = c.benchmark_group("cold_catalog_in_memory_300ms_init");
    group.sample_size(10);
    for servers in [1usize, 10] {
        group.bench_function(format!("{servers}_servers"), |b| {
            b.to_async(&rt).iter_batched(
                || {
                    SessionRuntime::builder(
                        "bench",
                        ServerSet::all((0..servers).map(|i| config(format!("server-{i}")))),
                        Arc::new(BenchConnector {
                            tools_per_server: 20,
                            init_delay: Duration::from_millis(300),
                        }),
                    )
                    .build()
                },
                |runtime| async move { runtime.catalog().await.expect("catalog") },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

/// `mcp-example-server` from `$MCP_EXAMPLE_SERVER` or next to this
/// benchmark's target folder (release first, then debug).
fn example_server() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("MCP_EXAMPLE_SERVER") {
        return Some(PathBuf::from(path));
    }
    let exe = std::env::current_exe().ok()?;
    let target = exe.parent()?.parent()?.parent()?;
    ["release", "debug"]
        .iter()
        .map(|profile| target.join(profile).join("mcp-example-server"))
        .find(|path| path.exists())
}

fn cold_stdio(c: &mut Criterion) {
    let Some(binary) = example_server() else {
        eprintln!(
            "skipping cold_catalog_stdio: build it with `cargo build -p mcp-integration-tests --bin mcp-example-server` or set MCP_EXAMPLE_SERVER"
        );
        return;
    };
    let rt = tokio::runtime::Runtime::new().expect("tokio runtime");
    let env = std::env::var("PATH")
        .map(|path| BTreeMap::from([("PATH".to_string(), path)]))
        .unwrap_or_default();
    let connector = Arc::new(McpConnector::new(ConnectOptions::default().with_env(env)));
    let mut group = c.benchmark_group("cold_catalog_stdio_300ms_init");
    group.sample_size(10);
    for servers in [1usize, 10] {
        let entries: Vec<ServerConfig> = (0..servers)
            .map(|i| {
                ServerConfig::new(
                    format!("server-{i}"),
                    TransportConfig::Stdio(
                        StdioConfig::new(binary.to_string_lossy().into_owned())
                            .with_args(vec!["--init-delay-ms", "300"]),
                    ),
                )
                .with_required(true)
            })
            .collect();
        group.bench_function(format!("{servers}_servers"), |b| {
            b.to_async(&rt).iter_batched(
                || {
                    SessionRuntime::builder(
                        "bench",
                        ServerSet::all(entries.clone()),
                        Arc::clone(&connector) as Arc<dyn Connector>,
                    )
                    .build()
                },
                // Shutting the children down happens after the timing,
                // when criterion drops the runtime.
                |runtime| async move {
                    let catalog = runtime.catalog().await.expect("catalog");
                    (runtime, catalog)
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    materialise_10k,
    call_path,
    warm_fetch,
    cold_in_memory,
    cold_stdio
);
criterion_main!(benches);
