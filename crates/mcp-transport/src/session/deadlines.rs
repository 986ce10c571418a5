//! Request timeouts: one timer per session instead of one per request.
//!
//! Each request in flight carries its deadline in the pending table. The
//! session's deadline task sleeps until the earliest deadline it knows of,
//! fails every request past its own, and sleeps again until the next. A
//! request wakes the task only when its deadline is earlier than the one
//! the task sleeps towards; one that comes later (the usual case: requests
//! with the same timeout, one after another) costs a comparison under the
//! table's lock, with no timer to register and none to cancel when its
//! answer arrives first. Progress moves an entry's deadline later, which
//! needs no wake-up either: the task finds the new deadline when it wakes.
//!
//! The task is not the driver, so a driver stuck writing to a peer that
//! stopped reading still lets its callers time out.

use super::*;

use super::pending::Reply;
use crate::time::{FAR_FUTURE, later_tokio as later};

/// When a request times out: its deadline, moved by progress within its
/// hard limit.
#[derive(Debug, Clone, Copy)]
pub(super) struct Deadline {
    /// Now plus `timeout`, or the hard limit if that comes first.
    pub(super) at: Instant,
    /// How far progress moves the deadline.
    pub(super) timeout: Duration,
    /// The limit progress cannot move past (`max_total_timeout`).
    pub(super) hard: Option<Instant>,
}

impl Deadline {
    pub(super) fn new(now: Instant, timeout: Duration, hard: Option<Instant>) -> Self {
        let mut deadline = Deadline {
            at: now,
            timeout,
            hard,
        };
        deadline.restart(now);
        deadline
    }

    /// Progress arrived at `now`: the timeout starts over, within the hard
    /// limit.
    pub(super) fn restart(&mut self, now: Instant) {
        let idle = later(now, self.timeout);
        self.at = self.hard.map_or(idle, |hard| hard.min(idle));
    }
}

impl PendingTable {
    /// Whether the deadline task must wake to see `deadline`: it is earlier
    /// than the one the task sleeps towards (or the task sleeps without
    /// one). Then the task's target becomes `deadline`.
    pub(super) fn arm(&mut self, deadline: Instant) -> bool {
        if self.armed.is_some_and(|armed| armed <= deadline) {
            return false;
        }
        self.armed = Some(deadline);
        true
    }
}

/// The deadline task of one session: runs until aborted with the session.
pub(super) async fn watch(shared: Arc<Shared>) {
    let sleep = tokio::time::sleep_until(later(Instant::now(), FAR_FUTURE));
    tokio::pin!(sleep);
    loop {
        let armed = lock(&shared.pending).armed;
        match armed {
            Some(at) => {
                sleep.as_mut().reset(at);
                tokio::select! {
                    () = &mut sleep => expire(&shared),
                    () = shared.deadlines.notified() => {}
                }
            }
            None => shared.deadlines.notified().await,
        }
    }
}

/// Fails every request past its deadline, and sets the next target.
fn expire(shared: &Shared) {
    let now = Instant::now();
    let expired: Vec<_> = {
        let mut table = lock(&shared.pending);
        let ids: Vec<i64> = table
            .entries
            .iter()
            .filter(|(_, pending)| pending.deadline.at <= now)
            .map(|(id, _)| *id)
            .collect();
        let expired: Vec<_> = ids
            .into_iter()
            .filter_map(|id| table.entries.remove(&id))
            .collect();
        table.armed = table
            .entries
            .values()
            .map(|pending| pending.deadline.at)
            .min();
        expired
    };
    // Each caller reports its own timeout and tells the server.
    for pending in expired {
        let _ = pending.reply.send(Reply::TimedOut);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_moves_a_deadline_within_its_hard_limit() {
        let now = Instant::now();
        let second = Duration::from_secs(1);
        let mut deadline = Deadline::new(now, 10 * second, Some(now + 15 * second));
        assert_eq!(deadline.at, now + 10 * second);
        deadline.restart(now + 3 * second);
        assert_eq!(deadline.at, now + 13 * second);
        deadline.restart(now + 8 * second);
        assert_eq!(deadline.at, now + 15 * second, "the hard limit holds");
        let endless = Deadline::new(now, Duration::MAX, None);
        assert!(endless.at > now + 365 * 24 * 3600 * second);
        let capped = Deadline::new(now, Duration::MAX, Some(later(now, Duration::MAX)));
        assert!(capped.at > now + 365 * 24 * 3600 * second);
    }

    #[test]
    fn only_an_earlier_deadline_wakes_the_task() {
        let now = Instant::now();
        let second = Duration::from_secs(1);
        let mut table = PendingTable::default();
        assert!(table.arm(now + 60 * second), "nothing armed yet");
        assert!(!table.arm(now + 61 * second), "a later one waits its turn");
        assert!(!table.arm(now + 60 * second));
        assert!(table.arm(now + 5 * second), "an earlier one wakes the task");
        assert_eq!(table.armed, Some(now + 5 * second));
    }
}
