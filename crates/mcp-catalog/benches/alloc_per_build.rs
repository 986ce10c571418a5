//! Heap allocations per catalog build, counted by a global allocator
//! that wraps the system one: what one `materialize` of 10,000 tools (100
//! servers × the same 100 realistic schemas, as in the `catalog` bench)
//! allocates, per profile, and what a cached rebuild allocates after one
//! server changed. A count is exact where a time on a shared machine is
//! not, so it shows what a change to the build saves. Prints one line per
//! case; no criterion groups (a count needs no statistics).

#![allow(clippy::print_stdout)]

mod support;

use std::sync::Arc;

use mcp_catalog::{
    Catalog, MaterializeOptions, ProviderProfile, SchemaCache, materialize, materialize_cached,
};
use mcp_test_peers::counting::{Counting, allocated};
use support::{listings, listings_numbered, realistic_schema};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations and bytes `build` makes, with the catalog it returns.
fn counted(build: impl FnOnce() -> Catalog) -> (u64, u64, Catalog) {
    let (allocations, bytes) = allocated();
    let catalog = build();
    let (allocations_after, bytes_after) = allocated();
    (
        allocations_after - allocations,
        bytes_after - bytes,
        catalog,
    )
}

fn report(case: &str, (allocations, bytes, catalog): (u64, u64, Catalog)) {
    let tools = catalog.tools().len().max(1) as u64;
    println!(
        "{case}: {allocations} allocations, {bytes} B for {tools} tools ({:.2} allocations, {} B per tool)",
        allocations as f64 / tools as f64,
        bytes / tools
    );
}

fn main() {
    let input = listings(100, 100);
    for profile in ProviderProfile::ALL {
        let options = MaterializeOptions::default().with_profile(profile);
        report(
            &format!("materialise 10,000 tools, {}", profile.as_str()),
            counted(|| materialize(&input, &options)),
        );
    }

    let options = MaterializeOptions::default();
    let mut cache = SchemaCache::default();
    materialize_cached(&input, &options, &mut cache);
    let mut changed = input.clone();
    changed[0].tools = changed[0].tools.to_vec().into();
    report(
        "rebuild after one server changed, same content",
        counted(|| materialize_cached(&changed, &options, &mut cache)),
    );
    let fresh = listings_numbered(1, 100, realistic_schema, |_, t| 1_000_000 + t);
    changed[0].tools = Arc::clone(&fresh[0].tools);
    report(
        "rebuild after one server changed, 100 new schemas",
        counted(|| materialize_cached(&changed, &options, &mut cache)),
    );
}
