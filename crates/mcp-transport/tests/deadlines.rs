//! The deadline table: every way a server can keep a call going (no
//! progress; progress that advances, repeats, or advances then stalls; a
//! task whose status changes, whose status message alone changes, or
//! that stalls after changing; input rounds) × both limits (the total
//! alone, and an inactivity limit inside a longer total) × the three
//! paths a call takes (a plain call, a task polled to its end, input
//! rounds), each row run through [`check`] against an in-process server
//! that never answers on its own. The clock is paused, so a row waits
//! seconds of tokio time in no real time, and ends exactly.
//!
//! The rule under test: only real progress (a progress value above every
//! earlier one, a new task status, an answered input round) restarts the
//! inactivity limit, and nothing extends the total.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mcp_transport::{CallOptions, SessionOptions, TimeoutLimit, TransportErrorKind};
use support::relentless::{Progress, Relentless, Script, Status, connect};
use tokio::time::Instant;

/// Which path the call takes: the tool the server runs it as.
#[derive(Debug, Clone, Copy)]
enum Path {
    /// Never answered; the script's progress meanwhile.
    Plain,
    /// A task, polled every 250 ms; the script's statuses.
    Task,
    /// A first round answered `input_required` after 700 ms, then a retry
    /// treated as a plain call (or more rounds, with `endless_rounds`).
    Rounds,
}

impl Path {
    fn tool(self) -> &'static str {
        match self {
            Path::Plain => "plain",
            Path::Task => "task",
            Path::Rounds => "rounds",
        }
    }
}

/// A total of `.0` seconds, and an inactivity limit of `.1` seconds.
type Limits = (u64, Option<u64>);
/// The total alone: 2 s.
const TOTAL: Limits = (2, None);
/// An inactivity limit of 1 s inside a total of 10 s.
const IDLE: Limits = (10, Some(1));

/// Runs one row: a call on `path` against `script`, with `limits`, must
/// fail with a timeout on `limit` after `ends_ms` (to the millisecond the
/// timer rounds to).
async fn check(
    row: &str,
    path: Path,
    script: Script,
    limits: Limits,
    ends_ms: u64,
    limit: TimeoutLimit,
) {
    let server = Relentless::new(script);
    let options = SessionOptions::default()
        .with_max_input_rounds(1000)
        .with_request_timeout(Duration::from_secs(60));
    let session = connect(&server, options).await;
    let mut call = CallOptions::default()
        .with_progress(|_| {})
        .with_timeout(Duration::from_secs(limits.0));
    if let Some(idle) = limits.1 {
        call = call.with_idle_timeout(Duration::from_secs(idle));
    }
    let started = Instant::now();
    let error = session
        .call_tool_with(path.tool(), None, &call)
        .await
        .expect_err(row);
    let took = started.elapsed();
    let TransportErrorKind::Timeout {
        method,
        limit: ended_on,
        ..
    } = error.kind()
    else {
        panic!("{row}: not a timeout: {error}");
    };
    assert_eq!(method, "tools/call", "{row}");
    assert_eq!(*ended_on, limit, "{row}: {error}");
    let expected = Duration::from_millis(ends_ms);
    assert!(
        took >= expected && took <= expected + Duration::from_millis(5),
        "{row}: ended after {took:?}, not {expected:?}"
    );
}

fn total(seconds: u64) -> TimeoutLimit {
    TimeoutLimit::Total(Duration::from_secs(seconds))
}

fn idle(seconds: u64) -> TimeoutLimit {
    TimeoutLimit::Inactivity(Duration::from_secs(seconds))
}

fn progress(progress: Progress) -> Script {
    Script {
        progress,
        ..Script::default()
    }
}

fn status(status: Status) -> Script {
    Script {
        status,
        ..Script::default()
    }
}

fn rounds(progress: Progress) -> Script {
    Script {
        progress,
        round_ms: 700,
        ..Script::default()
    }
}

#[tokio::test(start_paused = true)]
async fn only_real_progress_extends_a_call_and_nothing_its_total() {
    use Progress::{Advancing, Repeated, ThenStalled};
    let endless = Script {
        endless_rounds: true,
        ..rounds(Progress::None)
    };
    let rows: Vec<(&str, Path, Script, Limits, u64, TimeoutLimit)> = vec![
        // Progress every 300 ms on a call never answered. The first value
        // counts; 1, 2, ... up to 5 at 1.5 s, then 5 again and again.
        (
            "plain, none, total",
            Path::Plain,
            progress(Progress::None),
            TOTAL,
            2_000,
            total(2),
        ),
        (
            "plain, none, idle",
            Path::Plain,
            progress(Progress::None),
            IDLE,
            1_000,
            idle(1),
        ),
        (
            "plain, advancing, total",
            Path::Plain,
            progress(Advancing),
            TOTAL,
            2_000,
            total(2),
        ),
        (
            "plain, advancing, idle",
            Path::Plain,
            progress(Advancing),
            IDLE,
            10_000,
            total(10),
        ),
        (
            "plain, repeated, total",
            Path::Plain,
            progress(Repeated),
            TOTAL,
            2_000,
            total(2),
        ),
        (
            "plain, repeated, idle",
            Path::Plain,
            progress(Repeated),
            IDLE,
            1_300,
            idle(1),
        ),
        (
            "plain, stalled, total",
            Path::Plain,
            progress(ThenStalled),
            TOTAL,
            2_000,
            total(2),
        ),
        (
            "plain, stalled, idle",
            Path::Plain,
            progress(ThenStalled),
            IDLE,
            2_500,
            idle(1),
        ),
        // Polls every 250 ms from the task's creation at 0; a poll that
        // would come at or after the deadline is not sent.
        (
            "task, same, total",
            Path::Task,
            status(Status::Same),
            TOTAL,
            2_000,
            total(2),
        ),
        (
            "task, same, idle",
            Path::Task,
            status(Status::Same),
            IDLE,
            1_000,
            idle(1),
        ),
        (
            "task, changing, total",
            Path::Task,
            status(Status::Changing),
            TOTAL,
            2_000,
            total(2),
        ),
        (
            "task, changing, idle",
            Path::Task,
            status(Status::Changing),
            IDLE,
            10_000,
            total(10),
        ),
        (
            "task, message only, total",
            Path::Task,
            status(Status::MessageOnly),
            TOTAL,
            2_000,
            total(2),
        ),
        (
            "task, message only, idle",
            Path::Task,
            status(Status::MessageOnly),
            IDLE,
            1_000,
            idle(1),
        ),
        // The last new status at the third poll (0.75 s).
        (
            "task, stalled, idle",
            Path::Task,
            status(Status::ThenStalled),
            IDLE,
            1_750,
            idle(1),
        ),
        // The first round answered at 0.7 s restarts the inactivity
        // limit and the retry's progress counts afresh; the total runs
        // from the first round.
        (
            "rounds, none, total",
            Path::Rounds,
            rounds(Progress::None),
            TOTAL,
            2_000,
            total(2),
        ),
        (
            "rounds, none, idle",
            Path::Rounds,
            rounds(Progress::None),
            IDLE,
            1_700,
            idle(1),
        ),
        (
            "rounds, advancing, total",
            Path::Rounds,
            rounds(Advancing),
            TOTAL,
            2_000,
            total(2),
        ),
        (
            "rounds, advancing, idle",
            Path::Rounds,
            rounds(Advancing),
            IDLE,
            10_000,
            total(10),
        ),
        (
            "rounds, repeated, total",
            Path::Rounds,
            rounds(Repeated),
            TOTAL,
            2_000,
            total(2),
        ),
        (
            "rounds, repeated, idle",
            Path::Rounds,
            rounds(Repeated),
            IDLE,
            2_000,
            idle(1),
        ),
        (
            "rounds, stalled, idle",
            Path::Rounds,
            rounds(ThenStalled),
            IDLE,
            3_200,
            idle(1),
        ),
        // A round every 0.7 s for ever: each restarts the inactivity
        // limit, none the total.
        (
            "rounds, endless, total",
            Path::Rounds,
            endless.clone(),
            TOTAL,
            2_000,
            total(2),
        ),
        (
            "rounds, endless, idle",
            Path::Rounds,
            endless,
            IDLE,
            10_000,
            total(10),
        ),
    ];
    for (row, path, script, limits, ends_ms, limit) in rows {
        check(row, path, script, limits, ends_ms, limit).await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_call_answered_in_time_is_not_cut_short() {
    // The same server answers at once: no limit comes into it.
    let server = Relentless::new(Script::default());
    let session = connect(&server, SessionOptions::default()).await;
    let call = CallOptions::default()
        .with_timeout(Duration::from_secs(1))
        .with_idle_timeout(Duration::from_millis(10));
    let result = session.call_tool_with("done", None, &call).await.unwrap();
    assert!(result.content.is_empty());
    // A limit past the clock's range waits (a century), never panics.
    let endless = CallOptions::default()
        .with_timeout(Duration::MAX)
        .with_idle_timeout(Duration::MAX);
    session
        .call_tool_with("done", None, &endless)
        .await
        .unwrap();
}
