//! The one place an `Instant` is moved by a `Duration`.
//!
//! A timeout, grace period, pause or poll interval can be any size: a
//! host's `Duration::MAX` for "never", a configuration file's timeout of
//! 1e19 seconds, a server's `pollIntervalMs` or `ttlMs`. `Instant + d`
//! panics once the sum leaves the platform's clock range (a `u64` count of
//! milliseconds already does on some platforms), so every deadline of this
//! crate and of `mcp-catalog` is computed by [`later`], which caps the sum
//! at a century: waited, in practice forever, never a panic. A tidy test
//! (`tests/tests/tidy.rs`) fails on instant arithmetic anywhere else.

use std::time::{Duration, Instant, SystemTime};

/// As far ahead as a deadline goes: a century.
pub const FAR_FUTURE: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

/// `at + by`, or [`FAR_FUTURE`] after `at` when the sum does not fit an
/// `Instant` (and `at` itself when not even that fits).
pub fn later(at: Instant, by: Duration) -> Instant {
    at.checked_add(by)
        .or_else(|| at.checked_add(FAR_FUTURE))
        .unwrap_or(at)
}

/// [`later`] on the wall clock, for messages that name a time.
pub fn later_wall(at: SystemTime, by: Duration) -> SystemTime {
    at.checked_add(by)
        .or_else(|| at.checked_add(FAR_FUTURE))
        .unwrap_or(at)
}

/// [`later`] on tokio's clock (paused and advanced in tests).
pub fn later_tokio(at: tokio::time::Instant, by: Duration) -> tokio::time::Instant {
    tokio::time::Instant::from_std(later(at.into_std(), by))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_past_the_clocks_range_is_a_century_away() {
        let now = Instant::now();
        for (by, want) in [
            (Duration::ZERO, Some(Duration::ZERO)),
            (Duration::from_nanos(1), Some(Duration::from_nanos(1))),
            (Duration::from_secs(5), Some(Duration::from_secs(5))),
            (FAR_FUTURE, Some(FAR_FUTURE)),
            (Duration::from_millis(u64::MAX), None),
            (Duration::from_secs(u64::MAX / 2), None),
            (Duration::MAX, None),
        ] {
            // `None`: past the clock's range here (u64::MAX ms fits
            // Linux's clock, not every platform's: the sum, or a century).
            let want = want.unwrap_or_else(|| now.checked_add(by).map_or(FAR_FUTURE, |_| by));
            assert_eq!(later(now, by).duration_since(now), want, "{by:?}");
            let tokio_now = tokio::time::Instant::from_std(now);
            assert_eq!(
                later_tokio(tokio_now, by).duration_since(tokio_now),
                want,
                "{by:?}"
            );
            let wall = SystemTime::now();
            assert_eq!(
                later_wall(wall, by).duration_since(wall).ok(),
                Some(want),
                "{by:?}"
            );
        }
    }
}
