//! Keeps the CPUs out of deep idle states for the length of a run.
//!
//! A sequential round trip sleeps twice (client and server each wait for
//! the other), so on an idle machine it also measures how long a core takes
//! to wake: on this project's virtual machines (the `haltpoll` idle driver)
//! a pipe round trip through `cat` took 2.8 µs while other work kept the
//! cores busy and 72 µs on an otherwise idle machine. Linux's PM QoS
//! interface holds every core to an exit latency of 0 µs (it then polls
//! instead of halting) for as long as `/dev/cpu_dma_latency` stays open
//! with that value written, so a run measures the clients and not the
//! machine's idle depth, whatever else the machine is doing.

use std::fs::{File, OpenOptions};
use std::io::Write;

const PM_QOS: &str = "/dev/cpu_dma_latency";

/// The request, held while this lives; `None` when it could not be made.
pub(super) struct IdleHold {
    _request: Option<File>,
    description: String,
}

impl IdleHold {
    /// Asks for 0 µs exit latency; says in [`IdleHold::describe`] whether
    /// it was granted.
    pub(super) fn acquire() -> IdleHold {
        let request = OpenOptions::new()
            .write(true)
            .open(PM_QOS)
            .and_then(|mut file| file.write_all(&0i32.to_ne_bytes()).map(|()| file));
        match request {
            Ok(file) => IdleHold {
                _request: Some(file),
                description: format!("CPU idle: held to polling ({PM_QOS} at 0 µs)."),
            },
            Err(error) => IdleHold {
                _request: None,
                description: format!(
                    "CPU idle: not held ({PM_QOS}: {error}); sequential rows include waking idle cores."
                ),
            },
        }
    }

    /// One line for the run's header.
    pub(super) fn describe(&self) -> &str {
        &self.description
    }
}
