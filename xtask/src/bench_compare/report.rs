//! Turning samples into the report: medians, the markdown table with
//! ratios to ours, the targets, the machine description, and
//! replacing the results section of BENCHMARKS.md.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::clients::Client;
use super::plan::{Measurement, Metric, WIRE_2025, WIRE_2026};

pub(super) const BEGIN_MARK: &str = "<!-- bench-compare:begin -->";

pub(super) const END_MARK: &str = "<!-- bench-compare:end -->";

/// Medians over the repetitions of one measurement.
#[derive(Debug, Clone, Default)]
pub(super) struct Outcome {
    pub(super) samples: Vec<Value>,
    pub(super) error: Option<String>,
}

impl Outcome {
    pub(super) fn median(&self, field: &str) -> Option<f64> {
        let mut values: Vec<f64> = self
            .samples
            .iter()
            .filter_map(|sample| sample.get(field).and_then(Value::as_f64))
            .collect();
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let middle = values.len() / 2;
        Some(if values.len() % 2 == 1 {
            values[middle]
        } else {
            (values[middle - 1] + values[middle]) / 2.0
        })
    }
}

pub(super) fn brief(sample: &Value, metric: Metric) -> String {
    let field = |name: &str| sample.get(name).and_then(Value::as_f64).unwrap_or(f64::NAN);
    match metric {
        Metric::Latency => format!(
            "p50 {} p99 {}",
            format_duration(field("p50_ns")),
            format_duration(field("p99_ns"))
        ),
        Metric::Rate => format_rate(field("calls_per_s")),
        Metric::Wall => format_duration(field("wall_ns")),
        Metric::Rss => format_rss(field("vm_hwm_kb")),
    }
}

pub(super) fn format_duration(ns: f64) -> String {
    if ns.is_nan() {
        "—".into()
    } else if ns < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.1} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

pub(super) fn format_rate(rate: f64) -> String {
    if rate.is_nan() {
        "—".into()
    } else if rate >= 1e6 {
        format!("{:.2} M/s", rate / 1e6)
    } else if rate >= 1e3 {
        format!("{:.1} k/s", rate / 1e3)
    } else {
        format!("{rate:.0} /s")
    }
}

pub(super) fn format_rss(kb: f64) -> String {
    if kb.is_nan() {
        "—".into()
    } else {
        format!("{:.1} MB", kb / 1024.0)
    }
}

/// The headline value of an outcome (p50, calls/s, wall, RSS) and whether
/// more is better.
pub(super) fn headline(outcome: &Outcome, metric: Metric) -> Option<(f64, bool)> {
    match metric {
        Metric::Latency => outcome.median("p50_ns").map(|v| (v, false)),
        Metric::Rate => outcome.median("calls_per_s").map(|v| (v, true)),
        Metric::Wall => outcome.median("wall_ns").map(|v| (v, false)),
        Metric::Rss => outcome.median("vm_hwm_kb").map(|v| (v, false)),
    }
}

/// "How many times better ours is" for one row: above 1 means ours wins.
pub(super) fn advantage(ours: f64, theirs: f64, more_is_better: bool) -> f64 {
    if more_is_better {
        ours / theirs
    } else {
        theirs / ours
    }
}

pub(super) fn render(
    clients: &[Client],
    measurements: &[Measurement],
    outcomes: &[Outcome],
) -> String {
    let label = |key: &'static str| -> &'static str {
        clients
            .iter()
            .find(|c| c.key == key)
            .map_or(key, |c| c.label)
    };
    let ours_of = |m: &Measurement| {
        measurements
            .iter()
            .position(|o| {
                o.client == "ours" && o.what == m.what && o.section == m.section && o.wire == m.wire
            })
            .and_then(|i| headline(&outcomes[i], measurements[i].metric))
    };
    let mut out = String::new();
    let mut section = String::new();
    for (m, outcome) in measurements.iter().zip(outcomes) {
        if m.heading() != section {
            section = m.heading();
            let _ = writeln!(out, "\n### {section}\n");
            if m.metric == Metric::Latency {
                let _ = writeln!(
                    out,
                    "| what | client | median p50 | median p99 | ours ahead by |\n|---|---|---:|---:|---:|"
                );
            } else {
                let _ = writeln!(
                    out,
                    "| what | client | median | ours ahead by |\n|---|---|---:|---:|"
                );
            }
        }
        let ratio = match (ours_of(m), headline(outcome, m.metric)) {
            (_, _) if m.client == "ours" => "1.00× (ours)".to_owned(),
            (Some((ours, more)), Some((theirs, _))) => {
                format!("{:.2}×", advantage(ours, theirs, more))
            }
            _ => "—".to_owned(),
        };
        let value = match &outcome.error {
            Some(error) => format!("failed: {}", first_line(error)),
            None => match m.metric {
                Metric::Latency => format!(
                    "{} | {}",
                    format_duration(outcome.median("p50_ns").unwrap_or(f64::NAN)),
                    format_duration(outcome.median("p99_ns").unwrap_or(f64::NAN))
                ),
                Metric::Rate => format_rate(outcome.median("calls_per_s").unwrap_or(f64::NAN)),
                Metric::Wall => format_duration(outcome.median("wall_ns").unwrap_or(f64::NAN)),
                Metric::Rss => format_rss(outcome.median("vm_hwm_kb").unwrap_or(f64::NAN)),
            },
        };
        let value = if outcome.error.is_some() && m.metric == Metric::Latency {
            format!("{value} | —")
        } else {
            value
        };
        let _ = writeln!(
            out,
            "| {} | {} | {value} | {ratio} |",
            m.what,
            label(m.client)
        );
    }
    let skipped: Vec<&Client> = clients.iter().filter(|c| c.skipped.is_some()).collect();
    if !skipped.is_empty() {
        let _ = writeln!(out, "\nSkipped:");
        for c in skipped {
            let _ = writeln!(
                out,
                "- {}: {}",
                c.label,
                c.skipped.as_deref().unwrap_or_default()
            );
        }
    }
    out
}

pub(super) fn first_line(text: &str) -> String {
    let line: String = text
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(120)
        .collect();
    line.replace('|', "/")
}

/// Whether a row's "ours ahead by" meets the target: ahead, or for a row
/// bound by the servers' own start (a cold catalog), within 2%.
pub(super) fn meets_target(bound_by_servers: bool, advantage: f64) -> bool {
    if bound_by_servers {
        advantage >= 0.98
    } else {
        advantage > 1.0
    }
}

/// The targets, each with the numbers it was judged on, for each wire
/// generation: every row where the client's own work shows ahead of rmcp
/// 3.11 and the TypeScript SDK 2.x (the cold-catalog rows, bound by the
/// servers' own start, within 2%), peak RSS for 20 and 100 idle sessions
/// below rmcp's, and stdio against the raw driver (sequential p50 at most
/// 1.6×, 64 in flight at least 25%).
pub(super) fn render_targets(measurements: &[Measurement], outcomes: &[Outcome]) -> String {
    let find = |client: &str, scenario: &str, what: &str, wire: &str| {
        measurements
            .iter()
            .position(|m| {
                m.client == client && m.scenario == scenario && m.what == what && m.wire == wire
            })
            .and_then(|i| headline(&outcomes[i], measurements[i].metric).map(|(v, _)| v))
    };
    let mut out = String::from("### targets\n\n");
    let mut check = |name: &str, holds: Option<(bool, String)>| {
        let _ = writeln!(out, "{}", target_line(name, holds));
    };
    for wire in [WIRE_2025, WIRE_2026] {
        let at = |name: &str| format!("{wire}: {name}");
        let ratio_to = |floor: &str, scenario: &str, what: &str| {
            find("ours", scenario, what, wire).zip(find(floor, scenario, what, wire))
        };
        check(
            &at("stdio sequential p50 against the minimal server at most 1.6× the raw driver's"),
            ratio_to("raw", "seq", "minimal server")
                .map(|(ours, raw)| (ours <= 1.6 * raw, format!("{:.2}×", ours / raw))),
        );
        check(
            &at("stdio throughput with 64 in flight at least 25% of the raw driver's"),
            ratio_to("raw", "tput", "64 in flight, minimal server")
                .map(|(ours, raw)| (ours >= 0.25 * raw, format!("{:.0}%", 100.0 * ours / raw))),
        );
        for (rival, name) in [("rmcp", "rmcp 3.11"), ("ts2", "the TypeScript SDK 2.x")] {
            let mut slower = Vec::new();
            let mut compared = 0;
            for (m, outcome) in measurements.iter().zip(outcomes) {
                if m.client != rival || m.wire != wire {
                    continue;
                }
                let Some((theirs, more)) = headline(outcome, m.metric) else {
                    continue;
                };
                let Some(ours) = find("ours", m.scenario, &m.what, wire) else {
                    continue;
                };
                compared += 1;
                if !meets_target(m.scenario == "catalog", advantage(ours, theirs, more)) {
                    slower.push(format!(
                        "{} {}: {:.2}×",
                        m.scenario,
                        m.what,
                        advantage(ours, theirs, more)
                    ));
                }
            }
            check(
                &at(&format!(
                    "every row ahead of {name} (cold-catalog rows, bound by the servers' own start: within 2%)"
                )),
                (compared > 0).then(|| {
                    if slower.is_empty() {
                        (true, format!("{compared} rows compared"))
                    } else {
                        (false, format!("not ahead in: {}", slower.join("; ")))
                    }
                }),
            );
        }
        for sessions in [20, 100] {
            let rss = format!("peak RSS, {sessions} idle sessions (minimal server)");
            check(
                &at(&format!(
                    "peak RSS for {sessions} idle sessions below rmcp's"
                )),
                find("ours", "idle", &rss, wire)
                    .zip(find("rmcp", "idle", &rss, wire))
                    .map(|(ours, rmcp)| {
                        (
                            ours < rmcp,
                            format!("{} vs {}", format_rss(ours), format_rss(rmcp)),
                        )
                    }),
            );
        }
    }
    out
}

/// Replaces the text between the result markers of BENCHMARKS.md.
pub(super) fn write_results(path: &Path, report: &str) -> Result<()> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let (Some(begin), Some(end)) = (text.find(BEGIN_MARK), text.find(END_MARK)) else {
        bail!(
            "{} has no `{BEGIN_MARK}` … `{END_MARK}` section",
            path.display()
        );
    };
    if end < begin {
        bail!("{}: the result markers are out of order", path.display());
    }
    let updated = format!(
        "{}{BEGIN_MARK}\n{}\n{}",
        &text[..begin],
        report.trim_end(),
        &text[end..]
    );
    fs::write(path, updated).with_context(|| format!("writing {}", path.display()))
}

/// The machine and the versions of everything measured.
pub(super) fn machine_description(
    root: &Path,
    node22: &Path,
    python: &Path,
    modules: &Path,
) -> String {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|rest| rest.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let memory = fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .map(|rest| rest.trim().to_owned())
        .unwrap_or_default();
    let load = fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ");
    let version_of = |program: &Path, args: &[&str]| {
        Command::new(program)
            .args(args)
            .output()
            .ok()
            .map(output_text)
            .unwrap_or_else(|| "not found".into())
    };
    let kernel = version_of(Path::new("uname"), &["-sr"]);
    let rustc = version_of(Path::new("rustc"), &["--version"]);
    let node = version_of(node22, &["--version"]);
    let python_version = version_of(python, &["--version"]);
    let mcp_version = version_of(
        python,
        &[
            "-c",
            "import importlib.metadata as m; print(m.version('mcp'))",
        ],
    );
    let package_version = |name: &str| {
        fs::read_to_string(modules.join(name).join("package.json"))
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .and_then(|v| v["version"].as_str().map(str::to_owned))
            .unwrap_or_else(|| "not installed".into())
    };
    let rmcp_version = fs::read_to_string(root.join("bench/rmcp-client/Cargo.lock"))
        .ok()
        .and_then(|lock| {
            let at = lock.find("name = \"rmcp\"\nversion = \"")?;
            let rest = &lock[at + "name = \"rmcp\"\nversion = \"".len()..];
            rest.split('"').next().map(str::to_owned)
        })
        .unwrap_or_else(|| "unknown".into());
    let commit = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(root)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Machine: {cores} cores ({cpu}), {memory} RAM, {kernel}; load average at start {load}."
    );
    let _ = writeln!(
        out,
        "Versions: ours at {commit} ({rustc}, release); TypeScript SDK {} and {} on Node {node}; Python `mcp` {mcp_version} on {python_version}; rmcp {rmcp_version}; server-everything {}.",
        package_version("@modelcontextprotocol/sdk"),
        package_version("@modelcontextprotocol/client"),
        package_version("@modelcontextprotocol/server-everything"),
    );
    out
}

/// What a `--version` run printed: its standard output, or its standard
/// error when it printed nothing else (some tools print versions there).
pub(super) fn output_text(output: std::process::Output) -> String {
    let text = match output.stdout.is_empty() {
        true => output.stderr,
        false => output.stdout,
    };
    String::from_utf8_lossy(&text).trim().to_owned()
}

/// One line of a targets list: whether `name` holds, and the numbers.
pub(super) fn target_line(name: &str, holds: Option<(bool, String)>) -> String {
    match holds {
        Some((true, detail)) => format!("- met: {name} ({detail})"),
        Some((false, detail)) => format!("- NOT met: {name} ({detail})"),
        None => format!("- not measured: {name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(values: &[f64]) -> Outcome {
        Outcome {
            samples: values
                .iter()
                .map(|v| serde_json::json!({ "p50_ns": v }))
                .collect(),
            error: None,
        }
    }

    #[test]
    fn median_of_odd_and_even_sample_counts() {
        assert_eq!(outcome(&[5.0, 1.0, 3.0]).median("p50_ns"), Some(3.0));
        assert_eq!(outcome(&[4.0, 1.0, 3.0, 2.0]).median("p50_ns"), Some(2.5));
        assert_eq!(outcome(&[]).median("p50_ns"), None);
    }

    #[test]
    fn advantage_is_above_one_when_ours_wins() {
        assert_eq!(advantage(10.0, 20.0, false), 2.0);
        assert_eq!(advantage(200.0, 100.0, true), 2.0);
        assert!(advantage(30.0, 20.0, false) < 1.0);
    }

    #[test]
    fn results_section_is_replaced_between_the_markers() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("BENCHMARKS.md");
        fs::write(
            &path,
            format!("# head\n{BEGIN_MARK}\nold\n{END_MARK}\ntail\n"),
        )
        .expect("write");
        write_results(&path, "new table\n").expect("replace");
        assert_eq!(
            fs::read_to_string(&path).expect("read"),
            format!("# head\n{BEGIN_MARK}\nnew table\n{END_MARK}\ntail\n")
        );
        fs::write(&path, "no markers").expect("write");
        assert!(write_results(&path, "x").is_err());
    }
}
