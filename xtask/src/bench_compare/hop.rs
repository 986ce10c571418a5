//! The gateway hop: what `mcp-cli serve --passthrough` adds between a
//! client and the server it fronts, next to supergateway (npm) and
//! mcp-proxy (PyPI) in front of the same server, and next to no proxy.
//!
//! The gateway is only worth running if the hop is cheap, and "cheap"
//! only means something next to what users would otherwise put there. So
//! the measuring client is ours in every column (`mcp-bench-client ours`,
//! the same `seq` and `tput` scenarios as the rest of the run) and only the
//! path changes:
//!
//! - *direct*: ours → the minimal C server over stdio, the baseline;
//! - *HTTP, no proxy*: ours → the minimal server's own HTTP mode, so the
//!   client's side of streamable HTTP is seen apart from the hop;
//! - ours → `mcp-cli serve --listen 127.0.0.1:0 --passthrough -- <minimal>`
//!   (release build, an empty home and project folder, so no user
//!   configuration is read);
//! - ours → supergateway `--stdio <minimal> --outputTransport
//!   streamableHttp --stateful` (stateful: a session keeps its server
//!   process; stateless supergateway starts a server per POST);
//! - ours → `mcp-proxy --port N -- <minimal>` (stateful, its default).
//!
//! Each path reports the p50 and p99 of sequential `echo` calls, the p50
//! it adds to the direct path, and throughput with 16 and 64 calls in
//! flight with its share of the direct path's. The comparison is at wire
//! 2025-11-25, the generation all three proxies speak: ours would probe
//! `server/discover` and speak 2026-07-28 to our gateway (and to
//! supergateway 4, which speaks it too), so the HTTP lanes get an era
//! file that already knows each proxy's URL as legacy (what a host that
//! met it before remembers), and the file is checked afterwards to be
//! sure no run left it. Extra lines measure ours through our gateway at
//! 2026-07-28 (the minimal server with `--revision 2026-07-28` behind it)
//! against the same server direct and over its own HTTP.
//!
//! Memory per idle downstream client: a fresh proxy gets one warm session
//! (`initialize`, `notifications/initialized`, one `echo` call), then its
//! RSS (`VmRSS` of `/proc/PID/status`) is read before and after
//! [`IDLE_SESSIONS`] more sessions are opened (`initialize` and
//! `notifications/initialized` only, each on its own keep-alive
//! connection, all held open), and the difference is divided by their
//! number, for the proxy's own process and for its whole process tree
//! (supergateway starts one server process per session, the others share
//! one). A proxy that cannot be started is shown as skipped with the
//! reason; nothing here fails the run.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::clients::{Client, run_client, wait_for_servers_to_exit};
use super::plan::{Plan, WIRE_2025, WIRE_2026, stdio_target};
use super::report::{Outcome, first_line, format_duration, format_rate, output_text, target_line};
use super::{path_str, progress};

/// Idle sessions opened for the memory measurement.
pub(super) const IDLE_SESSIONS: usize = 100;

/// The target on throughput: at least this share of the direct path's.
const THROUGHPUT_FLOOR: f64 = 0.8;

/// How long a proxy may take to listen.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// What the hop row is measured with.
#[derive(Debug)]
pub(super) struct HopInputs<'a> {
    pub(super) root: &'a Path,
    /// Where the run keeps its files (`target/bench-compare`).
    pub(super) bench_out: &'a Path,
    pub(super) plan: &'a Plan,
    /// The minimal C server.
    pub(super) minimal: &'a Path,
    /// `mcp-bench-client` (release).
    pub(super) ours: &'a Path,
    /// Node 22 of `.peers/`, for supergateway.
    pub(super) node22: &'a Path,
}

/// One way from the client to the minimal server.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Route {
    Direct,
    HttpDirect,
    Gateway,
    Supergateway,
    McpProxy,
}

impl Route {
    /// Whether it is a proxy (has a process whose memory is measured).
    fn is_proxy(self) -> bool {
        matches!(self, Route::Gateway | Route::Supergateway | Route::McpProxy)
    }

    /// The slow proxies (about a millisecond per call) get a tenth of
    /// the calls, so a run stays short; their medians are still over
    /// hundreds of calls.
    fn calls_divisor(self) -> usize {
        match self {
            Route::Supergateway | Route::McpProxy => 10,
            _ => 1,
        }
    }
}

/// A line of the row: a route at a wire generation.
#[derive(Debug)]
struct Lane {
    route: Route,
    wire: &'static str,
    label: String,
    /// The server behind it (argv).
    server: Vec<String>,
    /// Set when it cannot be measured here.
    skipped: Option<String>,
}

/// The lanes' outcomes: sequential latency, 16 and 64 in flight, idle
/// memory per client (proxy process, process tree; kB).
#[derive(Debug, Default)]
struct PathOutcome {
    seq: Outcome,
    tput16: Outcome,
    tput64: Outcome,
    idle: Outcome,
}

/// A running proxy, stopped when dropped.
#[derive(Debug)]
struct Proxy {
    child: Child,
    url: String,
    /// Its home folder (our gateway), removed when it stops.
    home: Option<PathBuf>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        // SIGTERM first, so a proxy ends its server processes itself.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(home) = &self.home {
            let _ = fs::remove_dir_all(home);
        }
    }
}

/// How each proxy is started.
#[derive(Debug)]
struct Launchers {
    cli: Result<PathBuf, String>,
    node22: PathBuf,
    supergateway: Result<PathBuf, String>,
    mcp_proxy: Result<PathBuf, String>,
    bench_out: PathBuf,
}

impl Launchers {
    /// Why `route` cannot be started here, if it cannot.
    fn unavailable(&self, route: Route) -> Option<String> {
        match route {
            Route::Gateway => self.cli.as_ref().err().cloned(),
            Route::Supergateway => self.supergateway.as_ref().err().cloned(),
            Route::McpProxy => self.mcp_proxy.as_ref().err().cloned(),
            Route::Direct | Route::HttpDirect => None,
        }
    }

    /// Starts `route` in front of `server` and waits until it listens.
    fn start(&self, route: Route, server: &[String], serial: usize) -> Result<Proxy> {
        let log = self
            .bench_out
            .join(format!("hop-{route:?}-{serial}.log").to_lowercase());
        match route {
            Route::Gateway => {
                let cli = self.cli.as_ref().map_err(|e| anyhow::anyhow!("{e}"))?;
                let home = self.bench_out.join(format!("hop-home-{serial}"));
                let _ = fs::remove_dir_all(&home);
                fs::create_dir_all(&home)
                    .with_context(|| format!("creating {}", home.display()))?;
                let server: Vec<&std::ffi::OsStr> = server.iter().map(|arg| arg.as_ref()).collect();
                let (child, url) =
                    crate::conformance_server::start_passthrough_gateway(cli, &home, &server)?;
                Ok(Proxy {
                    child,
                    url,
                    home: Some(home),
                })
            }
            Route::Supergateway => {
                let script = self
                    .supergateway
                    .as_ref()
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                let port = free_port()?;
                let command = server
                    .iter()
                    .map(|arg| shell_quote(arg))
                    .collect::<Vec<_>>()
                    .join(" ");
                let child = Command::new(&self.node22)
                    .arg(script)
                    .args(["--stdio", &command])
                    .args(["--outputTransport", "streamableHttp", "--stateful"])
                    .args(["--port", &port.to_string(), "--logLevel", "none"])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(log_file(&log)?)
                    .spawn()
                    .context("starting supergateway")?;
                wait_listening(child, port, &log)
            }
            Route::McpProxy => {
                let program = self
                    .mcp_proxy
                    .as_ref()
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                let port = free_port()?;
                let child = Command::new(program)
                    .args(["--port", &port.to_string(), "--host", "127.0.0.1"])
                    .args(["--log-level", "WARNING", "--"])
                    .args(server)
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(log_file(&log)?)
                    .spawn()
                    .context("starting mcp-proxy")?;
                wait_listening(child, port, &log)
            }
            Route::HttpDirect => {
                let port = free_port()?;
                let (program, rest) = server.split_first().context("empty server command")?;
                let child = Command::new(program)
                    .args(rest)
                    .arg("--http")
                    .arg(port.to_string())
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(log_file(&log)?)
                    .spawn()
                    .context("starting the minimal server (HTTP)")?;
                wait_listening(child, port, &log)
            }
            Route::Direct => bail!("the direct path has no proxy"),
        }
    }
}

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn log_file(path: &Path) -> Result<fs::File> {
    fs::File::create(path).with_context(|| format!("creating {}", path.display()))
}

/// `arg` as one word of a POSIX shell command.
fn shell_quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,".contains(&b))
    {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// Waits until `child` listens on `port`; the last lines of its log when
/// it exits first or never does.
fn wait_listening(child: Child, port: u16, log: &Path) -> Result<Proxy> {
    let mut proxy = Proxy {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
        home: None,
    };
    let tail = || {
        let text = fs::read_to_string(log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().rev().take(3).collect();
        lines.into_iter().rev().collect::<Vec<_>>().join(" | ")
    };
    let deadline = Instant::now() + START_TIMEOUT;
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = proxy.child.try_wait()? {
            bail!("exited ({status}) before it listened: {}", tail());
        }
        if Instant::now() > deadline {
            bail!("did not listen on port {port}: {}", tail());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(proxy)
}

/// Builds `mcp-cli` in release mode (the gateway as it ships).
fn build_cli(root: &Path) -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = Command::new(cargo)
        .args(["build", "--release", "--quiet", "-p", "mcp-cli", "--bin"])
        .arg("mcp-cli")
        .current_dir(root)
        .status()
        .context("building mcp-cli")?;
    if !status.success() {
        bail!("building mcp-cli failed ({status})");
    }
    let binary = super::target_dir(root).join("release/mcp-cli");
    if !binary.exists() {
        bail!("{} is missing after the build", binary.display());
    }
    Ok(binary)
}

/// Writes an era file in which every URL of `urls` is known as a legacy
/// server (as `mcp_transport::EraMemory` keeps them: config hash → Unix
/// seconds), so ours starts with `initialize` there instead of probing.
fn seed_legacy_eras(file: &Path, urls: &[String]) -> Result<()> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    let legacy: serde_json::Map<String, Value> = urls
        .iter()
        .map(|url| (era_key(url), Value::from(now)))
        .collect();
    let text = serde_json::json!({ "version": 1, "legacy": legacy }).to_string();
    fs::write(file, text).with_context(|| format!("writing {}", file.display()))
}

/// The era key of `url` as the benchmark client configures it.
fn era_key(url: &str) -> String {
    let config = mcp_config::ServerConfig::new(
        "bench",
        mcp_config::TransportConfig::Http(mcp_config::RemoteConfig::new(url)),
    );
    mcp_config::config_hash(&config)
}

/// Runs the client once against `url`, a server that speaks only
/// 2025-11-25, with an empty era file, and checks that it recorded the
/// server under [`era_key`].
fn check_era_key(ours: &Path, bench_out: &Path, url: &str) -> Result<()> {
    let file = bench_out.join("hop-eras-check.json");
    match fs::remove_file(&file) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            bail!("removing {}: {e}", file.display())
        }
        _ => {}
    }
    let client = Client {
        key: "ours",
        label: "ours",
        argv: vec![path_str(ours), "ours".into()],
        env: vec![("BENCH_ERA_FILE".into(), path_str(&file))],
        skipped: None,
    };
    let target = ["--url".to_owned(), url.to_owned()];
    run_client(&client, "seq", 1, 10, &target, "current", WIRE_2025)?;
    if !still_legacy(&file, url) {
        bail!(
            "the client did not record {url} under the expected key {}: {}",
            era_key(url),
            fs::read_to_string(&file).unwrap_or_default()
        );
    }
    Ok(())
}

/// Whether the era file still knows `url` as legacy: a run that spoke
/// 2026-07-28 would have removed it.
fn still_legacy(file: &Path, url: &str) -> bool {
    fs::read_to_string(file)
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .is_some_and(|v| v["legacy"].get(era_key(url)).is_some())
}

/// The row, measured; its markdown section.
pub(super) fn run(inputs: &HopInputs<'_>) -> String {
    let HopInputs {
        root,
        bench_out,
        plan,
        minimal,
        ours,
        node22,
    } = *inputs;
    let peers = root.join(".peers");
    let supergateway = peers.join("node_modules/supergateway/dist/index.js");
    let mcp_proxy = peers.join("venv-ws/bin/mcp-proxy");
    progress("hop: building mcp-cli (release)");
    let launchers = Launchers {
        cli: build_cli(root).map_err(|e| format!("could not be built: {e:#}")),
        node22: node22.to_path_buf(),
        supergateway: if !node22.exists() {
            Err(format!(
                "no Node 22 at {} (run `cargo xtask peers`)",
                node22.display()
            ))
        } else if !supergateway.exists() {
            Err("supergateway is not in .peers/node_modules (run `cargo xtask peers`)".into())
        } else {
            Ok(supergateway)
        },
        mcp_proxy: if mcp_proxy.exists() {
            Ok(mcp_proxy)
        } else {
            Err("mcp-proxy is not in .peers/venv-ws (run `cargo xtask peers`)".into())
        },
        bench_out: bench_out.to_path_buf(),
    };
    let versions = versions(root, node22);

    // The proxies run the minimal server through a link of another name:
    // each client run waits until no process runs its stdio server's exact
    // command line, which a proxy's server would otherwise hold up.
    let behind = bench_out.join("minimal-server-behind-proxy");
    let _ = fs::remove_file(&behind);
    let behind = match std::os::unix::fs::symlink(minimal, &behind) {
        Ok(()) => behind,
        Err(_) => minimal.to_path_buf(),
    };
    let server = |binary: &Path, wire: &str| {
        let mut argv = vec![path_str(binary)];
        if wire == WIRE_2026 {
            argv.extend(["--revision".to_owned(), WIRE_2026.to_owned()]);
        }
        argv
    };
    let mut lanes: Vec<Lane> = [
        (Route::Direct, WIRE_2025),
        (Route::HttpDirect, WIRE_2025),
        (Route::Gateway, WIRE_2025),
        (Route::Supergateway, WIRE_2025),
        (Route::McpProxy, WIRE_2025),
        (Route::Direct, WIRE_2026),
        (Route::HttpDirect, WIRE_2026),
        (Route::Gateway, WIRE_2026),
    ]
    .into_iter()
    .map(|(route, wire)| Lane {
        route,
        wire,
        label: match route {
            Route::Direct => "direct: stdio, no proxy".to_owned(),
            Route::HttpDirect => "HTTP, no proxy (the minimal server's `--http`)".to_owned(),
            Route::Gateway => "**ours**: `mcp-cli serve --passthrough`".to_owned(),
            Route::Supergateway => {
                format!("supergateway {} (`--stateful`)", versions.supergateway)
            }
            Route::McpProxy => format!("mcp-proxy {}", versions.mcp_proxy),
        },
        server: server(
            if route == Route::Direct {
                minimal
            } else {
                &behind
            },
            wire,
        ),
        skipped: launchers.unavailable(route),
    })
    .collect();

    // The proxies measured for calls live for the whole row.
    let mut proxies: HashMap<usize, Proxy> = HashMap::new();
    for (index, lane) in lanes.iter_mut().enumerate() {
        if lane.route == Route::Direct || lane.skipped.is_some() {
            continue;
        }
        match launchers.start(lane.route, &lane.server, index) {
            Ok(proxy) => {
                proxies.insert(index, proxy);
            }
            Err(error) => lane.skipped = Some(format!("could not be started: {error:#}")),
        }
    }
    let legacy_eras = bench_out.join("hop-eras-legacy.json");
    let legacy_urls: Vec<String> = lanes
        .iter()
        .enumerate()
        .filter(|(_, p)| p.wire == WIRE_2025 && p.route.is_proxy())
        .filter_map(|(index, _)| proxies.get(&index).map(|p| p.url.clone()))
        .collect();
    // The key is checked against the one the client itself records for a
    // legacy server (the minimal server's HTTP mode) before it is relied on.
    let http_direct = lanes
        .iter()
        .position(|p| p.route == Route::HttpDirect && p.wire == WIRE_2025)
        .and_then(|index| proxies.get(&index));
    let seeded = match http_direct {
        Some(server) => check_era_key(ours, bench_out, &server.url),
        None => Err(anyhow::anyhow!(
            "the minimal server's HTTP mode, used to check the era key, did not start"
        )),
    }
    .and_then(|()| seed_legacy_eras(&legacy_eras, &legacy_urls));
    if let Err(error) = &seeded {
        for lane in lanes.iter_mut().filter(|p| p.wire == WIRE_2025) {
            if lane.route.is_proxy() && lane.skipped.is_none() {
                lane.skipped = Some(format!(
                    "could not be held to 2025-11-25 (era file): {error:#}"
                ));
            }
        }
    }
    let client = |lane: &Lane| Client {
        key: "ours",
        label: "ours",
        argv: vec![path_str(ours), "ours".into()],
        env: if lane.wire == WIRE_2025 && lane.route.is_proxy() {
            vec![("BENCH_ERA_FILE".into(), path_str(&legacy_eras))]
        } else {
            vec![]
        },
        skipped: None,
    };

    let mut outcomes: Vec<PathOutcome> = lanes.iter().map(|_| PathOutcome::default()).collect();
    for rep in 0..plan.reps {
        for (index, lane) in lanes.iter().enumerate() {
            if lane.skipped.is_some() {
                continue;
            }
            let target = match proxies.get(&index) {
                Some(proxy) => vec!["--url".to_owned(), proxy.url.clone()],
                None => stdio_target(&lane.server),
            };
            let divisor = lane.route.calls_divisor();
            let tput_calls = if lane.route == Route::Direct {
                plan.tput_calls * 5
            } else {
                plan.tput_calls / divisor
            };
            let outcome = &mut outcomes[index];
            let runs: [(&str, usize, usize, &mut Outcome); 3] = [
                ("seq", 1, plan.seq_calls / divisor, &mut outcome.seq),
                ("tput", 16, tput_calls, &mut outcome.tput16),
                ("tput", 64, tput_calls, &mut outcome.tput64),
            ];
            for (scenario, n, calls, outcome) in runs {
                if outcome.error.is_some() {
                    continue;
                }
                let started = Instant::now();
                let result = run_client(
                    &client(lane),
                    scenario,
                    n,
                    calls,
                    &target,
                    "current",
                    lane.wire,
                );
                let what = format!("{scenario} {n}");
                match result {
                    Ok(sample) => {
                        let shown = match scenario {
                            "seq" => format!(
                                "p50 {}",
                                format_duration(sample["p50_ns"].as_f64().unwrap_or(f64::NAN))
                            ),
                            _ => format_rate(sample["calls_per_s"].as_f64().unwrap_or(f64::NAN)),
                        };
                        progress(&format!(
                            "hop: rep {} {} {:<12} {:<8} {shown} ({:.1} s)",
                            rep + 1,
                            lane.wire,
                            format!("{:?}", lane.route),
                            what,
                            started.elapsed().as_secs_f64()
                        ));
                        outcome.samples.push(sample);
                    }
                    Err(error) => {
                        progress(&format!(
                            "hop: {} {:?} {what}: FAILED: {error:#}",
                            lane.wire, lane.route
                        ));
                        outcome.error = Some(format!("{error:#}"));
                    }
                }
            }
        }
    }
    // A run through a proxy at 2025-11-25 that spoke 2026-07-28 instead
    // would have taken the proxy out of the era file.
    if seeded.is_ok() {
        for (index, lane) in lanes.iter().enumerate() {
            if lane.wire != WIRE_2025 || !lane.route.is_proxy() {
                continue;
            }
            if let Some(proxy) = proxies.get(&index)
                && !still_legacy(&legacy_eras, &proxy.url)
            {
                let outcome = &mut outcomes[index];
                for o in [&mut outcome.seq, &mut outcome.tput16, &mut outcome.tput64] {
                    o.error = Some("the client spoke 2026-07-28, not 2025-11-25".into());
                }
            }
        }
    }
    let servers: Vec<Vec<String>> = lanes.iter().map(|p| p.server.clone()).collect();
    drop(proxies);

    // Memory: a fresh proxy for every repetition.
    for rep in 0..plan.reps {
        for (index, lane) in lanes.iter().enumerate() {
            if !lane.route.is_proxy() || lane.skipped.is_some() || lane.wire != WIRE_2025 {
                continue;
            }
            let outcome = &mut outcomes[index].idle;
            if outcome.error.is_some() {
                continue;
            }
            let started = Instant::now();
            let sample = launchers
                .start(lane.route, &lane.server, 100 + index)
                .and_then(|proxy| idle_memory(&proxy, IDLE_SESSIONS));
            match sample {
                Ok(sample) => {
                    progress(&format!(
                        "hop: rep {} {} {:<12} idle {IDLE_SESSIONS}: {} per client, tree {} ({:.1} s)",
                        rep + 1,
                        lane.wire,
                        format!("{:?}", lane.route),
                        format_kb(sample["proxy_kb"].as_f64().unwrap_or(f64::NAN)),
                        format_kb(sample["tree_kb"].as_f64().unwrap_or(f64::NAN)),
                        started.elapsed().as_secs_f64()
                    ));
                    outcome.samples.push(sample);
                }
                Err(error) => {
                    progress(&format!(
                        "hop: {} {:?} idle: FAILED: {error:#}",
                        lane.wire, lane.route
                    ));
                    outcome.error = Some(format!("{error:#}"));
                }
            }
        }
    }
    // Every server process of the row has ended before anything else runs.
    for server in servers {
        wait_for_servers_to_exit(&server, Duration::from_secs(15));
    }
    render(&lanes, &outcomes, &versions)
}

/// The versions of the proxies, as the table names them.
#[derive(Debug)]
struct Versions {
    supergateway: String,
    mcp_proxy: String,
    line: String,
}

fn versions(root: &Path, node22: &Path) -> Versions {
    let peers = root.join(".peers");
    let supergateway = fs::read_to_string(peers.join("node_modules/supergateway/package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|v| v["version"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "(not installed)".into());
    let output = |program: &Path, args: &[&str]| {
        Command::new(program)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(output_text)
    };
    let python = peers.join("venv-ws/bin/python");
    let version_of = |package: &str| {
        output(
            &python,
            &[
                "-c",
                &format!("import importlib.metadata as m; print(m.version('{package}'))"),
            ],
        )
    };
    let mcp_proxy = version_of("mcp-proxy").unwrap_or_else(|| "(not installed)".into());
    let line = format!(
        "Proxies: ours (`mcp-cli` at this commit, release); supergateway {supergateway} on Node {}; mcp-proxy {mcp_proxy} on {} with Python `mcp` {} (`.peers/venv-ws`).",
        output(node22, &["--version"]).unwrap_or_else(|| "(not found)".into()),
        output(&python, &["--version"]).unwrap_or_else(|| "(not found)".into()),
        version_of("mcp").unwrap_or_else(|| "(not found)".into()),
    );
    Versions {
        supergateway,
        mcp_proxy,
        line,
    }
}

/// Opens `sessions` idle sessions on a proxy that already serves a warm
/// one; its RSS per session, own process and process tree, in kB.
fn idle_memory(proxy: &Proxy, sessions: usize) -> Result<Value> {
    let pid = proxy.child.id();
    let url = proxy
        .url
        .strip_prefix("http://")
        .context("the proxy's URL is not http://")?;
    let (authority, path) = url
        .split_once('/')
        .map(|(authority, path)| (authority.to_owned(), format!("/{path}")))
        .context("the proxy's URL has no path")?;
    let mut warm = HttpSession::open(&authority, &path)?;
    warm.call_echo()?;
    std::thread::sleep(Duration::from_millis(300));
    let before = (vm_rss_kb(pid)?, tree_rss_kb(pid));
    let mut held = Vec::with_capacity(sessions);
    for _ in 0..sessions {
        held.push(HttpSession::open(&authority, &path)?);
    }
    std::thread::sleep(Duration::from_millis(300));
    let after = (vm_rss_kb(pid)?, tree_rss_kb(pid));
    drop(held);
    drop(warm);
    let per = |b: u64, a: u64| (a as f64 - b as f64) / sessions as f64;
    Ok(serde_json::json!({
        "proxy_kb": per(before.0, after.0),
        "tree_kb": per(before.1, after.1),
        "proxy_before_kb": before.0,
        "proxy_after_kb": after.0,
        "sessions": sessions,
    }))
}

/// `VmRSS` of `pid`, in kB.
fn vm_rss_kb(pid: u32) -> Result<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("reading /proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmRSS in /proc/PID/status")
}

/// `VmRSS` of `pid` and every process below it, in kB.
fn tree_rss_kb(pid: u32) -> u64 {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    if let Ok(entries) = fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // `pid (comm) state ppid …`; comm may hold spaces and parens.
            let parent = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|ppid| ppid.parse::<u32>().ok());
            if let Some(parent) = parent {
                children.entry(parent).or_default().push(child);
            }
        }
    }
    let mut total = 0;
    let mut queue = VecDeque::from([pid]);
    while let Some(next) = queue.pop_front() {
        total += vm_rss_kb(next).unwrap_or(0);
        if let Some(below) = children.get(&next) {
            queue.extend(below);
        }
    }
    total
}

/// One 2025-11-25 client session over a keep-alive connection of its
/// own, written and read by hand (the proxies answer with JSON or with an
/// event stream, with a length or chunked).
#[derive(Debug)]
struct HttpSession {
    connection: BufReader<TcpStream>,
    authority: String,
    path: String,
    session_id: String,
    next_id: u64,
}

/// One HTTP answer.
#[derive(Debug)]
struct HttpAnswer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl HttpSession {
    /// Connects, sends `initialize` and `notifications/initialized`.
    fn open(authority: &str, path: &str) -> Result<HttpSession> {
        let stream =
            TcpStream::connect(authority).with_context(|| format!("connecting {authority}"))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(20)))?;
        let mut session = HttpSession {
            connection: BufReader::new(stream),
            authority: authority.to_owned(),
            path: path.to_owned(),
            session_id: String::new(),
            next_id: 1,
        };
        let answer = session.post(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench-idle","version":"1"}}}"#,
        )?;
        if answer.status != 200 || !contains(&answer.body, b"\"result\"") {
            bail!(
                "initialize answered {}: {}",
                answer.status,
                String::from_utf8_lossy(&answer.body)
            );
        }
        session.session_id = answer
            .headers
            .iter()
            .find(|(name, _)| name == "mcp-session-id")
            .map(|(_, value)| value.clone())
            .context("initialize was answered without an Mcp-Session-Id")?;
        let answer = session.post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)?;
        if !(200..300).contains(&answer.status) {
            bail!("notifications/initialized answered {}", answer.status);
        }
        Ok(session)
    }

    fn call_echo(&mut self) -> Result<()> {
        self.next_id += 1;
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hello"}}}}}}"#,
            self.next_id
        );
        let answer = self.post(&body)?;
        if answer.status != 200 || !contains(&answer.body, b"\"result\"") {
            bail!(
                "tools/call echo answered {}: {}",
                answer.status,
                String::from_utf8_lossy(&answer.body)
            );
        }
        Ok(())
    }

    fn post(&mut self, body: &str) -> Result<HttpAnswer> {
        let mut request = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.path,
            self.authority,
            body.len()
        );
        if !self.session_id.is_empty() {
            let _ = write!(
                request,
                "Mcp-Session-Id: {}\r\nMCP-Protocol-Version: 2025-11-25\r\n",
                self.session_id
            );
        }
        request.push_str("\r\n");
        request.push_str(body);
        self.connection.get_mut().write_all(request.as_bytes())?;
        read_answer(&mut self.connection)
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Reads one HTTP/1.1 answer: status line, headers (names lowercased),
/// and a body of `content-length` bytes or chunks (none otherwise).
fn read_answer(reader: &mut BufReader<TcpStream>) -> Result<HttpAnswer> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        bail!("the connection closed before an answer");
    }
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .with_context(|| format!("not an HTTP status line: {line:?}"))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line)?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let value = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let mut body = Vec::new();
    if value("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                .with_context(|| format!("not a chunk size: {line:?}"))?;
            if size == 0 {
                // Trailers, up to the empty line.
                loop {
                    line.clear();
                    if reader.read_line(&mut line)? == 0 || line.trim_end().is_empty() {
                        break;
                    }
                }
                break;
            }
            let start = body.len();
            body.resize(start + size, 0);
            reader.read_exact(&mut body[start..])?;
            line.clear();
            reader.read_line(&mut line)?;
        }
    } else if let Some(length) = value("content-length") {
        let length: usize = length.parse().context("a bad content-length")?;
        body.resize(length, 0);
        reader.read_exact(&mut body)?;
    }
    Ok(HttpAnswer {
        status,
        headers,
        body,
    })
}

fn format_kb(kb: f64) -> String {
    if kb.is_nan() {
        "—".into()
    } else if kb.abs() >= 1024.0 {
        format!("{:.2} MB", kb / 1024.0)
    } else {
        format!("{kb:.1} kB")
    }
}

/// The section of the report.
fn render(lanes: &[Lane], outcomes: &[PathOutcome], versions: &Versions) -> String {
    let direct = |wire: &str| {
        lanes
            .iter()
            .position(|p| p.route == Route::Direct && p.wire == wire)
            .map(|i| &outcomes[i])
    };
    let cell_error = |o: &Outcome| {
        o.error
            .as_deref()
            .map(|e| format!("failed: {}", first_line(e)))
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n### the gateway hop (ours client → minimal server, through each path)\n"
    );
    let _ = writeln!(out, "{}\n", versions.line);
    let _ = writeln!(
        out,
        "| path | wire | median p50 | median p99 | added p50 | 16 in flight | of direct | 64 in flight | of direct | per idle client: proxy | per idle client: process tree |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for (lane, outcome) in lanes.iter().zip(outcomes) {
        if let Some(reason) = &lane.skipped {
            let _ = writeln!(
                out,
                "| {} | {} | skipped: {} | | | | | | | | |",
                lane.label,
                lane.wire,
                first_line(reason)
            );
            continue;
        }
        let base = direct(lane.wire);
        let p50 = outcome.seq.median("p50_ns");
        let latency = match cell_error(&outcome.seq) {
            Some(error) => format!("{error} | — | —"),
            None => {
                let added = match (p50, base.and_then(|b| b.seq.median("p50_ns"))) {
                    _ if lane.route == Route::Direct => "—".to_owned(),
                    (Some(p50), Some(direct)) => format!("+{}", format_duration(p50 - direct)),
                    _ => "—".to_owned(),
                };
                format!(
                    "{} | {} | {added}",
                    format_duration(p50.unwrap_or(f64::NAN)),
                    format_duration(outcome.seq.median("p99_ns").unwrap_or(f64::NAN))
                )
            }
        };
        let rate = |o: &Outcome, direct: Option<&Outcome>| match cell_error(o) {
            Some(error) => format!("{error} | —"),
            None => {
                let rate = o.median("calls_per_s");
                let share = match (rate, direct.and_then(|d| d.median("calls_per_s"))) {
                    (Some(rate), Some(direct)) => format!("{:.1}%", 100.0 * rate / direct),
                    _ => "—".to_owned(),
                };
                format!("{} | {share}", format_rate(rate.unwrap_or(f64::NAN)))
            }
        };
        let memory = if !lane.route.is_proxy() || lane.wire != WIRE_2025 {
            "— | —".to_owned()
        } else {
            match cell_error(&outcome.idle) {
                Some(error) => format!("{error} | —"),
                None => format!(
                    "{} | {}",
                    format_kb(outcome.idle.median("proxy_kb").unwrap_or(f64::NAN)),
                    format_kb(outcome.idle.median("tree_kb").unwrap_or(f64::NAN))
                ),
            }
        };
        let _ = writeln!(
            out,
            "| {} | {} | {latency} | {} | {} | {memory} |",
            lane.label,
            lane.wire,
            rate(&outcome.tput16, base.map(|b| &b.tput16)),
            rate(&outcome.tput64, base.map(|b| &b.tput64)),
        );
    }
    let _ = writeln!(
        out,
        "\nAdded p50: the path's median p50 minus the direct path's at the same wire. Of direct: the share of the direct path's calls/s. Per idle client: (RSS after − RSS before) ÷ {IDLE_SESSIONS} idle 2025-11-25 sessions on a fresh proxy that already serves one warm session; \"process tree\" adds every process below the proxy."
    );
    out.push_str(&render_targets(lanes, outcomes));
    out
}

/// The hop's goals: less added latency than supergateway and mcp-proxy,
/// and at least 80% of the direct path's throughput.
fn render_targets(lanes: &[Lane], outcomes: &[PathOutcome]) -> String {
    let find = |route: Route, wire: &str| {
        lanes
            .iter()
            .position(|p| p.route == route && p.wire == wire && p.skipped.is_none())
            .map(|i| &outcomes[i])
    };
    let p50 = |route: Route| find(route, WIRE_2025).and_then(|o| o.seq.median("p50_ns"));
    let mut out = String::from("\n#### targets of the hop (wire 2025-11-25)\n\n");
    let mut check = |name: &str, holds: Option<(bool, String)>| {
        let _ = writeln!(out, "{}", target_line(name, holds));
    };
    let direct = p50(Route::Direct);
    let ours_added = p50(Route::Gateway).zip(direct).map(|(p, d)| p - d);
    for (route, name) in [
        (Route::Supergateway, "supergateway"),
        (Route::McpProxy, "mcp-proxy"),
    ] {
        let theirs = p50(route).zip(direct).map(|(p, d)| p - d);
        check(
            &format!("our hop adds less p50 latency than {name}"),
            ours_added.zip(theirs).map(|(ours, theirs)| {
                (
                    ours < theirs,
                    format!("+{} vs +{}", format_duration(ours), format_duration(theirs)),
                )
            }),
        );
    }
    let mut shares = Vec::new();
    for (in_flight, pick) in [
        (
            16,
            (|o: &PathOutcome| o.tput16.median("calls_per_s")) as fn(&PathOutcome) -> Option<f64>,
        ),
        (64, |o: &PathOutcome| o.tput64.median("calls_per_s")),
    ] {
        let ours = find(Route::Gateway, WIRE_2025).and_then(pick);
        let direct = find(Route::Direct, WIRE_2025).and_then(pick);
        if let Some((ours, http)) = ours.zip(find(Route::HttpDirect, WIRE_2025).and_then(pick)) {
            shares.push(format!(
                "{:.0}% at {in_flight} in flight",
                100.0 * ours / http
            ));
        }
        check(
            &format!(
                "through our gateway, {in_flight} in flight at least {:.0}% of the direct path's throughput",
                100.0 * THROUGHPUT_FLOOR
            ),
            ours.zip(direct).map(|(ours, direct)| {
                (
                    ours >= THROUGHPUT_FLOOR * direct,
                    format!(
                        "{:.1}%: {} vs {}",
                        100.0 * ours / direct,
                        format_rate(ours),
                        format_rate(direct)
                    ),
                )
            }),
        );
    }
    if !shares.is_empty() {
        let _ = writeln!(
            out,
            "- for scale: through our gateway, {} of the throughput of HTTP with no proxy",
            shares.join(", ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_quote("/a/b-c_d.e"), "/a/b-c_d.e");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    /// The seeded era file holds each URL under the key ours looks up.
    #[test]
    fn seeded_urls_are_known_as_legacy() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("eras.json");
        let url = "http://127.0.0.1:4242/mcp".to_owned();
        seed_legacy_eras(&file, std::slice::from_ref(&url))?;
        assert!(still_legacy(&file, &url));
        assert!(!still_legacy(&file, "http://127.0.0.1:4243/mcp"));
        let text = fs::read_to_string(&file)?;
        let value: Value = serde_json::from_str(&text)?;
        assert_eq!(value["version"], 1);
        let key = era_key(&url);
        assert_eq!(key.len(), 16);
        Ok(())
    }

    /// Answers with a length, chunked, and without a body are read whole,
    /// leaving the connection at the next answer.
    #[test]
    fn answers_are_read_by_length_and_by_chunks() -> Result<()> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let server = std::thread::spawn(move || -> Result<()> {
            let (mut stream, _) = listener.accept()?;
            stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nMcp-Session-Id: abc\r\n\r\nhello\
                  HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4;x=y\r\ndefg\r\n0\r\n\r\n\
                  HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n",
            )?;
            Ok(())
        });
        let mut reader = BufReader::new(TcpStream::connect(("127.0.0.1", port))?);
        let first = read_answer(&mut reader)?;
        assert_eq!(first.status, 200);
        assert_eq!(first.body, b"hello");
        assert!(
            first
                .headers
                .contains(&("mcp-session-id".to_owned(), "abc".to_owned()))
        );
        let second = read_answer(&mut reader)?;
        assert_eq!(second.body, b"abcdefg");
        let third = read_answer(&mut reader)?;
        assert_eq!(third.status, 202);
        assert!(third.body.is_empty());
        server
            .join()
            .map_err(|_| anyhow::anyhow!("server panicked"))??;
        Ok(())
    }

    #[test]
    fn the_process_tree_includes_the_process_itself() -> Result<()> {
        let own = vm_rss_kb(std::process::id())?;
        assert!(own > 0);
        assert!(tree_rss_kb(std::process::id()) >= own);
        Ok(())
    }
}
