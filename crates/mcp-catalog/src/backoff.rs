//! Failure backoff of one server (REFERENCE §3.1): after 3 consecutive
//! failures the server is paused for 60 s and calls fail at once; a
//! success clears the count; after the pause one trial is let through.

use std::time::{Duration, Instant};

use mcp_transport::time::later;

/// When a server is paused and for how long.
/// Made from [`BackoffPolicy::default`] (3 failures, 60 s) and the
/// `with_*` methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BackoffPolicy {
    /// Consecutive failures that pause a server.
    pub threshold: u32,
    /// How long a pause lasts.
    pub pause: Duration,
}

impl Default for BackoffPolicy {
    fn default() -> Self {
        BackoffPolicy {
            threshold: 3,
            pause: Duration::from_secs(60),
        }
    }
}

impl BackoffPolicy {
    /// The same policy, pausing after `threshold` consecutive failures
    /// (zero never pauses).
    pub fn with_threshold(mut self, threshold: u32) -> Self {
        self.threshold = threshold;
        self
    }

    /// The same policy, with pauses lasting `pause`.
    pub fn with_pause(mut self, pause: Duration) -> Self {
        self.pause = pause;
        self
    }
}

/// A refusal: the server is paused until `until`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Paused {
    pub(crate) until: Instant,
    pub(crate) failures: u32,
}

/// The backoff state of one server.
#[derive(Debug, Clone, Default)]
pub(crate) struct Backoff {
    failures: u32,
    paused_until: Option<Instant>,
    /// The trial let through after a pause, and when it started. A trial
    /// whose caller vanished expires after one pause length.
    trial_started: Option<Instant>,
}

impl Backoff {
    /// Whether an attempt may go ahead now.
    pub(crate) fn admit(&mut self, now: Instant, policy: BackoffPolicy) -> Result<(), Paused> {
        let Some(until) = self.paused_until else {
            return Ok(());
        };
        if now < until {
            return Err(Paused {
                until,
                failures: self.failures,
            });
        }
        match self
            .trial_started
            .map(|started| later(started, policy.pause))
        {
            Some(until) if now < until => Err(Paused {
                until,
                failures: self.failures,
            }),
            _ => {
                self.trial_started = Some(now);
                Ok(())
            }
        }
    }

    pub(crate) fn succeed(&mut self) {
        *self = Backoff::default();
    }

    pub(crate) fn fail(&mut self, now: Instant, policy: BackoffPolicy) {
        self.failures = self.failures.saturating_add(1);
        self.trial_started = None;
        if self.failures >= policy.threshold {
            self.paused_until = Some(later(now, policy.pause));
        }
    }

    /// Consecutive failures so far.
    pub(crate) fn failures(&self) -> u32 {
        self.failures
    }

    /// The end of the current pause, if paused at `now`.
    pub(crate) fn paused_until(&self, now: Instant) -> Option<Instant> {
        self.paused_until.filter(|until| now < *until)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_of_any_length_holds_without_overflowing() {
        let policy = BackoffPolicy::default()
            .with_threshold(1)
            .with_pause(Duration::MAX);
        let t0 = Instant::now();
        let mut backoff = Backoff::default();
        backoff.fail(t0, policy);
        let year = Duration::from_secs(365 * 24 * 3600);
        let paused = backoff.admit(t0 + year, policy).unwrap_err();
        assert!(paused.until > t0 + 50 * year, "{:?}", paused.until - t0);
        assert_eq!(backoff.paused_until(t0 + year), Some(paused.until));
    }

    #[test]
    fn three_failures_pause_and_a_trial_follows() {
        let policy = BackoffPolicy::default();
        let t0 = Instant::now();
        let mut backoff = Backoff::default();
        for _ in 0..2 {
            assert!(backoff.admit(t0, policy).is_ok());
            backoff.fail(t0, policy);
        }
        assert!(
            backoff.admit(t0, policy).is_ok(),
            "two failures do not pause"
        );
        backoff.fail(t0, policy);
        let paused = backoff
            .admit(t0 + Duration::from_secs(59), policy)
            .unwrap_err();
        assert_eq!(paused.until, t0 + policy.pause);
        assert_eq!(paused.failures, 3);
        let after = t0 + policy.pause;
        assert!(
            backoff.admit(after, policy).is_ok(),
            "one trial after the pause"
        );
        assert!(
            backoff.admit(after, policy).is_err(),
            "only one trial at a time"
        );
        backoff.fail(after, policy);
        assert!(
            backoff
                .admit(after + Duration::from_secs(1), policy)
                .is_err(),
            "a failed trial pauses again"
        );
        let later = after + policy.pause;
        assert!(backoff.admit(later, policy).is_ok());
        backoff.succeed();
        assert!(backoff.admit(later, policy).is_ok());
        assert!(
            backoff.admit(later, policy).is_ok(),
            "success clears the pause"
        );
    }

    #[test]
    fn success_resets_the_count() {
        let policy = BackoffPolicy::default();
        let t0 = Instant::now();
        let mut backoff = Backoff::default();
        backoff.fail(t0, policy);
        backoff.fail(t0, policy);
        backoff.succeed();
        backoff.fail(t0, policy);
        backoff.fail(t0, policy);
        assert!(backoff.admit(t0, policy).is_ok());
    }

    #[test]
    fn an_abandoned_trial_expires() {
        let policy = BackoffPolicy::default();
        let t0 = Instant::now();
        let mut backoff = Backoff::default();
        for _ in 0..3 {
            backoff.fail(t0, policy);
        }
        let after = t0 + policy.pause;
        assert!(backoff.admit(after, policy).is_ok());
        assert!(backoff.admit(after + policy.pause, policy).is_ok());
    }
}
