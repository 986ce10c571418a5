//! Time as the runtime sees it, behind a trait so idle eviction and
//! failure backoff can be tested without waiting.

use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use mcp_transport::time::{later, later_wall};

/// A source of the current time.
pub trait Clock: Send + Sync + fmt::Debug {
    /// Monotonic now, for TTLs and pauses.
    fn now(&self) -> Instant;

    /// Wall-clock now, only for messages that name a time.
    fn wall_now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// The real clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that moves only when told to.
#[derive(Debug)]
pub struct ManualClock {
    start: Instant,
    wall_start: SystemTime,
    elapsed: Mutex<Duration>,
}

impl ManualClock {
    /// A clock standing at the moment it was made.
    pub fn new() -> Self {
        ManualClock {
            start: Instant::now(),
            wall_start: later_wall(SystemTime::UNIX_EPOCH, Duration::from_secs(1_800_000_000)),
            elapsed: Mutex::new(Duration::ZERO),
        }
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        let mut elapsed = self.elapsed.lock().unwrap_or_else(|e| e.into_inner());
        *elapsed = elapsed.saturating_add(by);
    }

    fn elapsed(&self) -> Duration {
        *self.elapsed.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        ManualClock::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        later(self.start, self.elapsed())
    }

    fn wall_now(&self) -> SystemTime {
        later_wall(self.wall_start, self.elapsed())
    }
}

/// RFC 3339 UTC rendering of a wall-clock time, to the second.
pub fn rfc3339(time: SystemTime) -> String {
    let secs = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_vectors() {
        for (secs, expect) in [
            (0, "1970-01-01T00:00:00Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (1_800_000_000, "2027-01-15T08:00:00Z"),
            (4_107_542_399, "2100-02-28T23:59:59Z"),
        ] {
            assert_eq!(
                rfc3339(SystemTime::UNIX_EPOCH + Duration::from_secs(secs)),
                expect
            );
        }
    }

    #[test]
    fn manual_clock_moves_only_when_told() {
        let clock = ManualClock::new();
        let before = clock.now();
        assert_eq!(clock.now(), before);
        clock.advance(Duration::from_secs(5));
        assert_eq!(clock.now() - before, Duration::from_secs(5));
    }
}
