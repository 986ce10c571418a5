//! Heap allocations per catalog build, counted by a global allocator
//! that wraps the system one: what one `materialize` of 10,000 tools (100
//! servers × the same 100 realistic schemas, as in the `catalog` bench)
//! allocates, per profile, and what a cached rebuild allocates after one
//! server changed. A count is exact where a time on a shared machine is
//! not, so it shows what a change to the build saves. Prints one line per
//! case; no criterion groups (a count needs no statistics).

#![allow(clippy::print_stdout)]

mod support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_catalog::{
    Catalog, MaterializeOptions, ProviderProfile, SchemaCache, materialize, materialize_cached,
};
use support::{listings, listings_numbered, realistic_schema};

/// Counts allocations (and reallocations, which may move) and their bytes.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the
// counters are plain atomics and allocate nothing.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` through `alloc`/`realloc` here.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        // SAFETY: as for `dealloc`; `new_size` is the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations and bytes `build` makes, with the catalog it returns.
fn counted(build: impl FnOnce() -> Catalog) -> (u64, u64, Catalog) {
    let allocations = ALLOCATIONS.load(Ordering::Relaxed);
    let bytes = BYTES.load(Ordering::Relaxed);
    let catalog = build();
    (
        ALLOCATIONS.load(Ordering::Relaxed) - allocations,
        BYTES.load(Ordering::Relaxed) - bytes,
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
