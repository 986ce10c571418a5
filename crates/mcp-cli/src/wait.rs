//! Waiting on servers. While a verb waits for servers to connect and list,
//! a terminal shows which ones it is waiting on and for how long (redrawn
//! in place on stderr); afterwards every server it waited on for long is
//! named in a note, on a terminal or not, so a slow answer always says
//! whose it was.

use std::collections::BTreeMap;
use std::future::Future;

use std::time::Duration;

use mcp_catalog::SessionRuntime;

use crate::output::{Frame, Stream, errln, shown};

/// How often the waiting line is redrawn.
const TICK: Duration = Duration::from_millis(100);

/// A wait shorter than this shows nothing live.
const SHOW_AFTER: Duration = Duration::from_millis(500);

/// A server waited on this long is named in a note afterwards.
pub(crate) const SLOW: Duration = Duration::from_secs(2);

/// Runs `work`, showing on a terminal which of `runtime`'s servers it is
/// waiting on, then noting every server it waited on for [`SLOW`] or more.
pub(crate) async fn showing<F: Future>(runtime: &SessionRuntime, work: F) -> F::Output {
    let live = Stream::Stderr.is_terminal();
    let mut longest: BTreeMap<String, Duration> = BTreeMap::new();
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut work = std::pin::pin!(work);
    let mut frame = 0usize;
    let mut drawn = false;
    let output = loop {
        tokio::select! {
            output = &mut work => break output,
            _ = ticker.tick() => {
                let waiting = runtime.waiting();
                for (server, waited) in &waiting {
                    let entry = longest.entry(server.clone()).or_default();
                    *entry = (*entry).max(*waited);
                }
                if live && waiting.iter().any(|(_, waited)| *waited >= SHOW_AFTER) {
                    frame += 1;
                    draw(&waiting, frame);
                    drawn = true;
                }
            }
        }
    };
    if drawn {
        Frame::default().clear_line().draw(Stream::Stderr);
    }
    for (server, waited) in longest {
        if waited >= SLOW {
            errln!(
                "note: waited {:.1} s for server `{}`",
                waited.as_secs_f64(),
                shown(&server)
            );
        }
    }
    output
}

/// One line: the servers still being waited on, longest first.
fn draw(waiting: &[(String, Duration)], frame: usize) {
    const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
    let mut waiting: Vec<&(String, Duration)> = waiting.iter().collect();
    waiting.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let shown_servers: Vec<String> = waiting
        .iter()
        .take(4)
        .map(|(server, waited)| format!("{} ({:.1} s)", shown(server), waited.as_secs_f64()))
        .collect();
    let more = waiting.len().saturating_sub(shown_servers.len());
    let mut text = format!(
        "{} waiting for {}",
        SPINNER[frame % SPINNER.len()],
        shown_servers.join(", ")
    );
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    Frame::default()
        .clear_line()
        .text(&text)
        .draw(Stream::Stderr);
}
