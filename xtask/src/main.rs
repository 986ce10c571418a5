//! The workspace's task runner: `cargo xtask check-config`, peer set-up,
//! conformance runs and benchmarks.

fn main() -> anyhow::Result<()> {
    Ok(())
}
