//! Deep and hostile JSON through the message decoder (`Codec::decode`,
//! what the stdio transport runs on each line, batches included).
//!
//! Input: one `mcp_fuzz` program over [`MESSAGE`]: frames are responses,
//! notifications, errors and batches with the generated value in a
//! result, a schema, `params` or an id; chains nest arrays, objects,
//! schemas and batch-like arrays up to 65,535 levels.
//!
//! Checks: nothing panics or overflows the stack; a frame of
//! [`ALWAYS_A_MESSAGE`] holding valid JSON within the size cap decodes
//! when it nests at most [`MAX_DEPTH`] levels, well past `serde_json`'s
//! default of 128 (REFERENCE §2), and is refused as too deep past it (the
//! ceiling that keeps a 16 MiB frame from building eight million levels;
//! `decode_message` checks that such a frame still fails the request it
//! answers); a frame over the cap fails as too large; whatever decodes
//! re-encodes to one line that decodes to the same bytes again.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_fuzz::grammars::{ALWAYS_A_MESSAGE, MESSAGE};
use mcp_fuzz::{Input, document};
use mcp_transport::TransportErrorKind;
use mcp_transport::wire::{Codec, MAX_DEPTH};

fuzz_target!(|data: &[u8]| {
    let doc = document(&mut Input::new(data), &MESSAGE);
    let bytes = doc.to_text();
    let codec = Codec::default();
    let decoded = codec.decode(&bytes);
    let max = mcp_transport::wire::DEFAULT_MAX_MESSAGE_BYTES;
    if bytes.len() > max {
        assert!(
            matches!(decoded, Err(TransportErrorKind::FrameTooLarge { .. })),
            "a {}-byte frame over the {max}-byte cap was not refused as too large",
            bytes.len()
        );
        return;
    }
    if doc.valid && !doc.bom && ALWAYS_A_MESSAGE.contains(&doc.frame) {
        match &decoded {
            Err(err) if doc.depth <= MAX_DEPTH => panic!(
                "valid JSON-RPC ({} bytes, depth {}) was not decoded: {err}",
                bytes.len(),
                doc.depth
            ),
            Ok(_) if doc.depth > MAX_DEPTH => panic!(
                "JSON-RPC {} levels deep, past the {MAX_DEPTH}-level ceiling, was decoded",
                doc.depth
            ),
            _ => {}
        }
    }
    let Ok(decoded) = decoded else { return };
    for message in decoded {
        let encoded = codec.encode(&message);
        assert!(
            !encoded.contains(&b'\n'),
            "encoded message contains a newline"
        );
        let again = codec
            .decode(&encoded)
            .unwrap_or_else(|err| panic!("an encoded message does not decode: {err}"));
        for message in again {
            let twice = codec.encode(&message);
            assert!(
                twice == encoded,
                "a message changed in an encode/decode round trip: {} became {}",
                String::from_utf8_lossy(&encoded[..encoded.len().min(300)]),
                String::from_utf8_lossy(&twice[..twice.len().min(300)])
            );
        }
    }
});
