//! Request deadlines: what a request may wait, decided once for every
//! path, and one timer per session instead of one per request.
//!
//! # The rule
//!
//! A request has one [`Deadline`] with two parts:
//!
//! - a **total** limit that nothing extends: [`CallOptions::timeout`], or
//!   the session's default for the method (a `tools/call` gets the entry's
//!   tool-call timeout);
//! - an **inactivity** limit, [`CallOptions::idle_timeout`] (the total when
//!   not set), that only real progress restarts.
//!
//! Real progress is decided in [`Deadline::observe`] and nowhere else: a
//! `notifications/progress` whose `progress` is above every value seen so
//! far, a task status other than the last one, or an input round the host
//! answered. A progress value that repeats or goes back, and a task whose
//! `statusMessage` changes while its status stays, restart nothing: free
//! text can change on every poll while the work stands still, and neither
//! can move the total. The plain call, the task poll loop and the input
//! rounds all carry the same value; the request each of them sends gets
//! its part of it ([`Deadline::within`]).
//!
//! # The timer
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

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::error::{TimeoutLimit, TransportError, TransportErrorKind};
use crate::lock;
use crate::task::TaskStatus;
use crate::time::{FAR_FUTURE, later_tokio as later};

use super::pending::{PendingTable, Reply};
use super::{CallOptions, Shared};

/// Something that happened to a request, which may count as progress.
#[derive(Debug, Clone, Copy)]
pub(super) enum Activity<'a> {
    /// A `notifications/progress` with this `progress` value.
    Progress(f64),
    /// A task status read by a poll.
    Status(&'a TaskStatus),
    /// The host answered the server's input requests, and the request
    /// goes on.
    InputAnswered,
}

/// When a request times out: a total limit nothing extends, and an
/// inactivity limit that real progress restarts (see the module docs).
#[derive(Debug, Clone)]
pub(super) struct Deadline {
    started: Instant,
    total: Duration,
    /// `started + total`, saturated.
    total_at: Instant,
    idle: Duration,
    /// The last real progress plus `idle`, saturated.
    idle_at: Instant,
    /// The highest progress value seen since the last input round.
    progress: Option<f64>,
    /// The last task status seen.
    status: Option<TaskStatus>,
}

impl Deadline {
    /// A deadline starting at `now`: `total` at most, and `idle` (when
    /// shorter than the total) without real progress.
    pub(super) fn new(now: Instant, total: Duration, idle: Option<Duration>) -> Self {
        let idle = idle.map_or(total, |idle| idle.min(total));
        Deadline {
            started: now,
            total,
            total_at: later(now, total),
            idle,
            idle_at: later(now, idle),
            progress: None,
            status: None,
        }
    }

    /// The deadline of a call with `options`, whose total is `default`
    /// unless the caller set one.
    pub(super) fn for_call(now: Instant, options: &CallOptions, default: Duration) -> Self {
        Deadline::new(
            now,
            options.timeout.unwrap_or(default),
            options.idle_timeout,
        )
    }

    /// When the request times out, unless real progress comes first.
    pub(super) fn at(&self) -> Instant {
        self.total_at.min(self.idle_at)
    }

    /// Records `activity` at `now`; real progress restarts the inactivity
    /// limit (never past the total). Answers whether it did.
    pub(super) fn observe(&mut self, now: Instant, activity: Activity<'_>) -> bool {
        let real = match activity {
            Activity::Progress(value) => {
                let advances = self.progress.is_none_or(|seen| value > seen);
                if advances {
                    self.progress = Some(value);
                }
                advances
            }
            Activity::Status(status) => {
                let new = self.status.as_ref() != Some(status);
                if new {
                    self.status = Some(status.clone());
                }
                new
            }
            Activity::InputAnswered => {
                // The retry is a new request: its progress counts afresh.
                self.progress = None;
                true
            }
        };
        if real {
            self.idle_at = later(now, self.idle);
        }
        real
    }

    /// Which limit has run out at `now`, if one has.
    pub(super) fn expired(&self, now: Instant) -> Option<TimeoutLimit> {
        if now >= self.total_at {
            Some(TimeoutLimit::Total(self.total))
        } else if now >= self.idle_at {
            Some(TimeoutLimit::Inactivity(self.idle))
        } else {
            None
        }
    }

    /// The limit that ends the request if nothing happens: the total when
    /// it comes first, else the inactivity limit.
    pub(super) fn next_limit(&self) -> TimeoutLimit {
        if self.total_at <= self.idle_at {
            TimeoutLimit::Total(self.total)
        } else {
            TimeoutLimit::Inactivity(self.idle)
        }
    }

    /// How long the request has run at `now`.
    pub(super) fn elapsed(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.started)
    }

    /// The deadline of one request sent on the way (a task poll, an
    /// update): this one's limits as they stand at `now`, cut to `bound`
    /// when that comes first.
    pub(super) fn within(&self, now: Instant, bound: Duration) -> Deadline {
        let left = self.at().saturating_duration_since(now);
        Deadline::new(now, left.min(bound), None)
    }

    /// The timeout error of `method` on `server` at `now`, naming `limit`.
    pub(super) fn error(
        &self,
        server: &str,
        method: &str,
        now: Instant,
        limit: TimeoutLimit,
    ) -> TransportError {
        TransportError::new(
            server,
            TransportErrorKind::Timeout {
                method: method.to_owned(),
                after: self.elapsed(now),
                limit,
            },
        )
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
        let ids: Vec<(i64, TimeoutLimit)> = table
            .entries
            .iter()
            .filter_map(|(id, pending)| Some((*id, pending.deadline.expired(now)?)))
            .collect();
        let expired: Vec<_> = ids
            .into_iter()
            .filter_map(|(id, limit)| Some((table.entries.remove(&id)?, limit)))
            .collect();
        table.armed = table
            .entries
            .values()
            .map(|pending| pending.deadline.at())
            .min();
        expired
    };
    // Each caller reports its own timeout and tells the server.
    for (pending, limit) in expired {
        let _ = pending.reply.send(Reply::TimedOut(limit));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What happens to a request in one row of the table.
    #[derive(Debug, Clone, Copy)]
    enum Event {
        Progress(f64),
        Status(&'static str),
        Input,
    }

    /// Runs `events` (each at its millisecond) on a deadline of `total`
    /// and `idle` seconds, stopping where the deadline passes, and checks
    /// the request ends at `ends` ms on `limit`.
    fn check(
        row: &str,
        (total, idle): (u64, Option<u64>),
        events: &[(u64, Event)],
        ends: u64,
        limit: TimeoutLimit,
    ) {
        let start = Instant::now();
        let at = |ms: u64| later(start, Duration::from_millis(ms));
        let mut deadline = Deadline::new(
            start,
            Duration::from_secs(total),
            idle.map(Duration::from_secs),
        );
        for &(ms, event) in events {
            if deadline.expired(at(ms)).is_some() {
                break;
            }
            let status;
            let activity = match event {
                Event::Progress(value) => Activity::Progress(value),
                Event::Status(text) => {
                    status = TaskStatus::parse(text);
                    Activity::Status(&status)
                }
                Event::Input => Activity::InputAnswered,
            };
            deadline.observe(at(ms), activity);
        }
        assert_eq!(deadline.at(), at(ends), "{row}: when it ends");
        assert_eq!(deadline.expired(at(ends - 1)), None, "{row}: before");
        assert_eq!(
            deadline.expired(at(ends)),
            Some(limit),
            "{row}: which limit"
        );
        assert_eq!(deadline.next_limit(), limit, "{row}: the next limit");
    }

    /// A row: its name, total and inactivity seconds, events by the
    /// millisecond, when it ends and on which limit.
    type Row<'a> = (
        &'a str,
        (u64, Option<u64>),
        &'a [(u64, Event)],
        u64,
        TimeoutLimit,
    );

    /// Every `step` ms from `from` to `to`, the event `make(i)`.
    fn every(from: u64, to: u64, step: u64, make: impl Fn(u64) -> Event) -> Vec<(u64, Event)> {
        (0..)
            .map(|i| (from + i * step, make(i)))
            .take_while(|(ms, _)| *ms <= to)
            .collect()
    }

    #[test]
    fn only_real_progress_restarts_the_inactivity_limit_and_nothing_the_total() {
        use Event::{Input, Progress, Status};
        let total = |s: u64| TimeoutLimit::Total(Duration::from_secs(s));
        let idle = |s: u64| TimeoutLimit::Inactivity(Duration::from_secs(s));
        let advancing = every(300, 60_000, 300, |i| Progress(i as f64 + 1.0));
        let repeated = every(300, 60_000, 300, |_| Progress(1.0));
        let backwards = every(300, 60_000, 300, |i| Progress(100.0 - i as f64));
        let then_stalled: Vec<_> = every(300, 3_000, 300, |i| Progress(i as f64))
            .into_iter()
            .chain(every(3_300, 60_000, 300, |_| Progress(9.0)))
            .collect();
        let statuses = [
            (500, Status("working")),
            (1_400, Status("input_required")),
            (2_300, Status("working")),
            (3_200, Status("input_required")),
        ];
        let same_status = every(300, 60_000, 300, |_| Status("working"));
        let inputs = every(1_000, 60_000, 1_000, |_| Input);
        let rows: [Row<'_>; 16] = [
            ("nothing, total only", (2, None), &[], 2_000, total(2)),
            ("nothing, idle 1 of 2", (2, Some(1)), &[], 1_000, idle(1)),
            ("idle longer than total", (2, Some(9)), &[], 2_000, total(2)),
            (
                "advancing, total only",
                (2, None),
                &advancing,
                2_000,
                total(2),
            ),
            (
                "advancing, idle 1 of 5",
                (5, Some(1)),
                &advancing,
                5_000,
                total(5),
            ),
            (
                "repeated, total only",
                (2, None),
                &repeated,
                2_000,
                total(2),
            ),
            // The first value counts once; repeats never.
            (
                "repeated, idle 1 of 5",
                (5, Some(1)),
                &repeated,
                1_300,
                idle(1),
            ),
            (
                "backwards, idle 1 of 5",
                (5, Some(1)),
                &backwards,
                1_300,
                idle(1),
            ),
            (
                "advancing then stalled",
                (20, Some(1)),
                &then_stalled,
                4_000,
                idle(1),
            ),
            (
                "advancing then stalled, total",
                (2, Some(1)),
                &then_stalled,
                2_000,
                total(2),
            ),
            ("status changes", (10, Some(1)), &statuses, 4_200, idle(1)),
            (
                "status changes, total",
                (3, Some(1)),
                &statuses,
                3_000,
                total(3),
            ),
            (
                "same status every poll",
                (10, Some(1)),
                &same_status,
                1_300,
                idle(1),
            ),
            (
                "same status, total only",
                (2, None),
                &same_status,
                2_000,
                total(2),
            ),
            ("inputs answered", (5, Some(2)), &inputs, 5_000, total(5)),
            ("inputs, total only", (3, None), &inputs, 3_000, total(3)),
        ];
        for (row, limits, events, ends, limit) in rows {
            check(row, limits, events, ends, limit);
        }
    }

    #[test]
    fn an_input_round_counts_progress_afresh_and_limits_saturate() {
        let start = Instant::now();
        let second = Duration::from_secs(1);
        let mut deadline = Deadline::new(start, 60 * second, Some(second));
        assert!(deadline.observe(start, Activity::Progress(5.0)));
        assert!(!deadline.observe(start, Activity::Progress(5.0)));
        assert!(deadline.observe(start, Activity::InputAnswered));
        assert!(
            deadline.observe(start, Activity::Progress(1.0)),
            "a new round"
        );
        for huge in [Duration::MAX, Duration::from_secs(u64::MAX / 2)] {
            let endless = Deadline::new(start, huge, Some(huge));
            assert!(endless.at() > later(start, 365 * 24 * 3600 * second));
            assert_eq!(endless.expired(later(start, 3600 * second)), None);
        }
        let part =
            Deadline::new(start, 10 * second, None).within(later(start, 8 * second), 5 * second);
        assert_eq!(
            part.at(),
            later(start, 10 * second),
            "a part ends with the whole"
        );
        let part = Deadline::new(start, 10 * second, None).within(start, 5 * second);
        assert_eq!(part.at(), later(start, 5 * second), "or at its own bound");
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
