//! The script of `mcp-misbehaving-server`: the example server over stdio
//! with one fault injected at one protocol step.
//!
//! A [`Script`] names a [`Fault`] and the method it fires at (`initialize`,
//! `notifications/initialized`, `tools/list`, `tools/call`, ...). Faults
//! about the process (crash, hang) fire when that message arrives; faults
//! about the wire (partial line, invalid UTF-8, unknown id, duplicate, huge
//! answer) change the answer to that request; a flood starts when the
//! message arrives and goes on until the process ends.

use std::fmt;
use std::str::FromStr;

/// One way for a stdio server to misbehave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Exit with status 1 (after a line on stderr).
    Crash,
    /// Stop reading, answering and writing; stay alive until killed.
    Hang,
    /// Write the first half of the answer's line, then hang.
    PartialLine,
    /// Answer with a line that is not valid UTF-8 instead of the answer.
    InvalidUtf8,
    /// Answer with the id of a request that was never sent.
    UnknownId,
    /// Send the answer twice.
    DuplicateResponse,
    /// Answer with a text result of this many bytes.
    Huge(usize),
    /// Send this many `notifications/message` per second, from then on.
    Flood(u32),
}

/// A fault and the message it fires at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    /// What goes wrong.
    pub fault: Fault,
    /// The method of the message that triggers it.
    pub at: String,
}

impl Script {
    /// `fault` at `at`.
    pub fn new(fault: Fault, at: &str) -> Self {
        Script {
            fault,
            at: at.to_owned(),
        }
    }

    /// The command-line arguments of `mcp-misbehaving-server`.
    pub fn to_args(&self) -> Vec<String> {
        vec![
            "--fault".to_owned(),
            self.fault.to_string(),
            "--at".to_owned(),
            self.at.clone(),
        ]
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Crash => f.write_str("crash"),
            Fault::Hang => f.write_str("hang"),
            Fault::PartialLine => f.write_str("partial-line"),
            Fault::InvalidUtf8 => f.write_str("invalid-utf8"),
            Fault::UnknownId => f.write_str("unknown-id"),
            Fault::DuplicateResponse => f.write_str("duplicate-response"),
            Fault::Huge(bytes) => write!(f, "huge={bytes}"),
            Fault::Flood(per_second) => write!(f, "flood={per_second}"),
        }
    }
}

impl FromStr for Fault {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (name, value) = match text.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (text, None),
        };
        let number = |what: &str| -> Result<u64, String> {
            value
                .ok_or_else(|| format!("{name} needs ={what}"))?
                .parse()
                .map_err(|e| format!("{name}: invalid {what}: {e}"))
        };
        Ok(match name {
            "crash" => Fault::Crash,
            "hang" => Fault::Hang,
            "partial-line" => Fault::PartialLine,
            "invalid-utf8" => Fault::InvalidUtf8,
            "unknown-id" => Fault::UnknownId,
            "duplicate-response" => Fault::DuplicateResponse,
            "huge" => {
                Fault::Huge(usize::try_from(number("bytes")?).map_err(|e| format!("huge: {e}"))?)
            }
            "flood" => Fault::Flood(
                u32::try_from(number("per-second")?).map_err(|e| format!("flood: {e}"))?,
            ),
            other => return Err(format!("unknown fault {other:?}")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_round_trip_through_their_text() {
        for fault in [
            Fault::Crash,
            Fault::Hang,
            Fault::PartialLine,
            Fault::InvalidUtf8,
            Fault::UnknownId,
            Fault::DuplicateResponse,
            Fault::Huge(50 << 20),
            Fault::Flood(10_000),
        ] {
            assert_eq!(fault.to_string().parse::<Fault>(), Ok(fault));
        }
        assert!("huge".parse::<Fault>().is_err());
        assert!("explode".parse::<Fault>().is_err());
    }
}
