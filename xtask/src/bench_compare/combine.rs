//! `cargo xtask bench-compare --combine run1.md run2.md run3.md`: the rows
//! of ours against rmcp 3.11 and the TypeScript SDK 2.x across saved runs,
//! and in how many runs ours met the target in each (at least two of three
//! are needed): ahead, or within 2% for the cold-catalog rows, which the
//! servers' own start bounds.
//!
//! Each ratio is computed from the medians the run's tables show: a time
//! or a memory size (lower is better) is the rival's over ours, a rate
//! (the throughput sections) ours over the rival's. A ratio that two
//! decimals would print as 1.00× is printed with three; equal medians are
//! a tie, which does not count as ahead (but is within 2%).

use std::collections::HashMap;
use std::fs;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};

/// The rivals the target names, as the tables label them.
const RIVALS: [(&str, &str); 2] = [
    ("TypeScript SDK 2.x (Node 22)", "TS SDK 2.x"),
    ("rmcp (Rust)", "rmcp 3.11"),
];

/// One run's medians: (section, row, client) → value in base units.
type Medians = HashMap<(String, String, String), f64>;

/// A median as the tables print it ("10.1 µs", "347.1 k/s", "959 /s",
/// "7.8 MB") in base units.
fn value(text: &str) -> Option<f64> {
    let (number, unit) = text.trim().split_once(' ')?;
    let scale = match unit {
        "ns" => 1e-9,
        "µs" => 1e-6,
        "ms" => 1e-3,
        "s" | "/s" => 1.0,
        "k/s" | "kB" => 1e3,
        "M/s" | "MB" => 1e6,
        "GB" => 1e9,
        _ => return None,
    };
    Some(number.parse::<f64>().ok()? * scale)
}

fn parse(text: &str) -> (Medians, Vec<(String, String)>) {
    let mut medians = Medians::new();
    let mut ours_rows = Vec::new();
    let mut section: Option<String> = None;
    for line in text.lines() {
        if line.starts_with("### ") || line.starts_with("#### ") {
            section = Some(line.trim_start_matches('#').trim().to_owned());
            continue;
        }
        let Some(section) = &section else { continue };
        if !line.starts_with("| ") || line.starts_with("| what") {
            continue;
        }
        let cells: Vec<&str> = line
            .trim()
            .trim_matches('|')
            .split('|')
            .map(str::trim)
            .collect();
        let [what, client, median, ..] = cells[..] else {
            continue;
        };
        let Some(median) = value(median) else {
            continue;
        };
        let client = if client.starts_with("**ours**") {
            "ours"
        } else {
            client
        };
        if client == "ours" {
            ours_rows.push((section.clone(), what.to_owned()));
        }
        medians.insert(
            (section.clone(), what.to_owned(), client.to_owned()),
            median,
        );
    }
    (medians, ours_rows)
}

/// Prints the combined table of the runs saved in `files`.
#[allow(clippy::print_stdout)]
pub(super) fn run(files: &[PathBuf]) -> Result<()> {
    if files.is_empty() {
        bail!("--combine needs the saved output of at least one run");
    }
    let mut runs = Vec::new();
    let mut order = Vec::new();
    for file in files {
        let text =
            fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let (medians, ours_rows) = parse(&text);
        if ours_rows.is_empty() {
            bail!("{} holds no table row of ours", file.display());
        }
        if order.is_empty() {
            order = ours_rows;
        }
        runs.push(medians);
    }
    let header: Vec<String> = (1..=runs.len()).map(|i| format!("run {i}")).collect();
    println!(
        "| section | row | rival | {} | ours ahead in |",
        header.join(" | ")
    );
    println!("|---|---|---|{}---:|", "---:|".repeat(runs.len()));
    let (mut compared, mut led) = (0, 0);
    let mut behind = Vec::new();
    for (section, what) in &order {
        for (rival, label) in RIVALS {
            let key = |client: &str| (section.clone(), what.clone(), client.to_owned());
            if !runs[0].contains_key(&key(rival)) {
                continue;
            }
            compared += 1;
            let mut ahead = 0;
            let cells: Vec<String> = runs
                .iter()
                .map(|run| match (run.get(&key("ours")), run.get(&key(rival))) {
                    (Some(ours), Some(theirs)) => {
                        let ratio = if section.contains("throughput") {
                            ours / theirs
                        } else {
                            theirs / ours
                        };
                        if super::report::meets_target(section.starts_with("cold catalog"), ratio) {
                            ahead += 1;
                        }
                        let shown = format!("{ratio:.2}×");
                        if shown == "1.00×" {
                            format!("{ratio:.3}×")
                        } else {
                            shown
                        }
                    }
                    _ => "—".to_owned(),
                })
                .collect();
            let needed = runs.len().min(2);
            let count = format!("{ahead} of {}", runs.len());
            let count = if ahead >= needed {
                led += 1;
                count
            } else {
                behind.push(format!("{section} / {what} vs {label}"));
                format!("**{count}**")
            };
            println!(
                "| {section} | {what} | {label} | {} | {count} |",
                cells.join(" | ")
            );
        }
    }
    println!();
    println!(
        "rows compared: {compared}; ahead in at least two runs: {led}; not: {}",
        compared - led
    );
    for row in behind {
        println!("- not ahead in two runs: {row}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_are_read_in_base_units() {
        for (text, expect) in [
            ("10.1 µs", Some(10.1e-6)),
            ("302.2 ms", Some(0.3022)),
            ("1.33 s", Some(1.33)),
            ("347.1 k/s", Some(347_100.0)),
            ("2.38 M/s", Some(2_380_000.0)),
            ("959 /s", Some(959.0)),
            ("7.8 MB", Some(7_800_000.0)),
            ("—", None),
            ("skipped", None),
        ] {
            let got = value(text);
            match (got, expect) {
                (Some(got), Some(expect)) => {
                    assert!((got - expect).abs() <= expect * 1e-9, "{text}: {got}")
                }
                (got, expect) => assert_eq!(got, expect, "{text}"),
            }
        }
    }

    #[test]
    fn rows_are_keyed_by_section_row_and_client() {
        let text = "#### cold catalog (wire 2025-11-25)\n\n| what | client | median | ours ahead by |\n|---|---|---:|---:|\n| 1 × s | **ours** (mcp-transport / mcp-catalog) | 302.2 ms | 1.00× (ours) |\n| 1 × s | rmcp (Rust) | 302.3 ms | 1.00× |\n";
        let (medians, ours) = parse(text);
        let section = "cold catalog (wire 2025-11-25)".to_owned();
        assert_eq!(ours, vec![(section.clone(), "1 × s".to_owned())]);
        assert_eq!(
            medians.get(&(section, "1 × s".to_owned(), "rmcp (Rust)".to_owned())),
            Some(&0.3023)
        );
    }
}
