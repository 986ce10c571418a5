//! `cargo xtask footprint`: what a host with only some features of a crate
//! builds. Runs `cargo tree` on the normal dependencies of `--package`
//! with its default features off and `--features` on (by default
//! `mcp-catalog` with `stdio`, the stdio-only host), prints how many
//! crates that is, and fails naming every crate of the deny list that
//! still appears (by default the HTTP, TLS, WebSocket and JWT crates a
//! stdio-only host must not compile).
//!
//! ```sh
//! cargo xtask footprint
//! cargo xtask footprint --package mcp-transport --features sdk
//! ```

use std::collections::BTreeSet;
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};

/// The crates a stdio-only build must not contain (issue: "builds none of
/// reqwest, hyper, rustls, ring, tokio-tungstenite, jsonwebtoken").
const DENIED: &[&str] = &[
    "reqwest",
    "hyper",
    "rustls",
    "ring",
    "tokio-tungstenite",
    "jsonwebtoken",
];

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The package whose build is measured.
    #[arg(long, default_value = "mcp-catalog")]
    package: String,
    /// Its features (comma-separated), with the default set turned off.
    #[arg(long, default_value = "stdio")]
    features: String,
    /// A crate that must not appear (repeatable; replaces the default
    /// list: reqwest, hyper, rustls, ring, tokio-tungstenite,
    /// jsonwebtoken).
    #[arg(long = "deny", value_name = "CRATE")]
    denied: Vec<String>,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["tree", "-p", &args.package, "--no-default-features"])
        .args(["--features", &args.features])
        .args(["-e", "normal", "--prefix", "none"])
        .output()
        .context("cannot run cargo tree")?;
    if !output.status.success() {
        bail!(
            "cargo tree failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let crates = crates_in(&String::from_utf8_lossy(&output.stdout));
    let denied: Vec<&str> = if args.denied.is_empty() {
        DENIED.to_vec()
    } else {
        args.denied.iter().map(String::as_str).collect()
    };
    let found = denied_found(&crates, &denied);
    #[allow(clippy::print_stdout)]
    {
        println!(
            "{} --no-default-features --features {}: {} crates",
            args.package,
            args.features,
            crates.len()
        );
    }
    if !found.is_empty() {
        bail!(
            "{} with features {:?} still builds {}",
            args.package,
            args.features,
            found.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The distinct `(name, version)` pairs of `cargo tree --prefix none`
/// output (one crate a line, `name vX.Y.Z [(path)] [(*)]`).
fn crates_in(tree: &str) -> BTreeSet<(String, String)> {
    tree.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let name = words.next()?;
            let version = words.next()?;
            Some((name.to_owned(), version.to_owned()))
        })
        .collect()
}

/// The denied crate names present among `crates`, each once, sorted.
fn denied_found(crates: &BTreeSet<(String, String)>, denied: &[&str]) -> Vec<String> {
    let names: BTreeSet<&str> = crates.iter().map(|(name, _)| name.as_str()).collect();
    denied
        .iter()
        .filter(|name| names.contains(**name))
        .map(|name| (*name).to_owned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_distinct_crates_and_names_each_denied_one_once() {
        let tree = "\
mcp-catalog v0.1.0 (/w/crates/mcp-catalog)
tokio v1.48.0
tokio v1.48.0 (*)
hyper v1.7.0
hyper-util v0.1.17
ring v0.17.14

";
        let crates = crates_in(tree);
        assert_eq!(crates.len(), 5);
        assert_eq!(
            denied_found(&crates, DENIED),
            vec!["hyper".to_owned(), "ring".to_owned()]
        );
        assert!(denied_found(&crates_in("tokio v1.48.0\n"), DENIED).is_empty());
    }
}
