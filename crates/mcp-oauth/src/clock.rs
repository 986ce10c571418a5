//! The wall clock in the unit tokens, proofs and assertions use.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch (0 for a clock set before it).
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
