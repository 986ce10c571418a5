//! The workspace's task runner: `cargo xtask check-config`, peer set-up,
//! conformance runs and benchmarks.

// --- network peers and the conformance suite (peers.rs, conformance.rs) ---
mod conformance;
mod peers;

/// Runs `peers` or `conformance` if `args` names one; `None` otherwise.
fn run_network_task(args: &[String]) -> Option<anyhow::Result<()>> {
    match args.first().map(String::as_str) {
        Some("peers") => Some(peers::run(&args[1..])),
        Some("conformance") => Some(conformance::run(&args[1..])),
        _ => None,
    }
}
// --- end of network tasks ---

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(result) = run_network_task(&args) {
        return result;
    }
    Ok(())
}
