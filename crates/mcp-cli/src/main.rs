//! `mcp-cli`, the thin reference CLI: it composes `mcp-config`,
//! `mcp-oauth`, `mcp-transport` and `mcp-catalog` and holds no protocol or
//! config logic of its own. It is the only crate (with `xtask`) that talks to
//! the terminal.

fn main() -> anyhow::Result<()> {
    Ok(())
}
