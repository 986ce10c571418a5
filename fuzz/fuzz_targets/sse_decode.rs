//! Feeds arbitrary bytes, split into two chunks at an arbitrary point, to the
//! SSE decoder the HTTP transports use. It must never panic, and where the
//! chunk boundary falls must not change what it decodes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_transport::wire::decode_sse_body;

fuzz_target!(|data: &[u8]| {
    let Some((&split, body)) = data.split_first() else {
        return;
    };
    let at = if body.is_empty() {
        0
    } else {
        usize::from(split) % (body.len() + 1)
    };
    let (a, b) = body.split_at(at);
    let split_up = decode_sse_body(&[a, b]);
    let whole = decode_sse_body(&[body]);
    assert_eq!(format!("{split_up:?}"), format!("{whole:?}"));
});
