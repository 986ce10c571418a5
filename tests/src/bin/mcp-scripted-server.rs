//! `mcp-scripted-server`: the scripted answers of
//! `mcp_integration_tests::scripted` over stdio, one per line, for the
//! hostile transport suite (deep, undecodable and huge messages).

use std::io::{BufRead, Write};

use mcp_integration_tests::scripted::{Answer, answer};
use serde_json::Value;

fn main() {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { return };
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(answer) = answer(&request) else {
            continue;
        };
        let written = match answer {
            Answer::Frame(bytes) => stdout.write_all(&bytes),
            Answer::Huge { head, filler, tail } => {
                let chunk = vec![b'x'; 1 << 20];
                let mut left = filler;
                let mut written = stdout.write_all(&head);
                while left > 0 && written.is_ok() {
                    let n = left.min(chunk.len());
                    written = stdout.write_all(&chunk[..n]);
                    left -= n;
                }
                written.and_then(|()| stdout.write_all(&tail))
            }
        };
        if written
            .and_then(|()| stdout.write_all(b"\n"))
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return;
        }
    }
}
