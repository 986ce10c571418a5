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
//! (REFERENCE §2 and issue 12 item 8: valid JSON is decoded at any depth);
//! a frame over the cap fails as too large; whatever decodes re-encodes to
//! one line that decodes to the same bytes again.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_fuzz::grammars::{ALWAYS_A_MESSAGE, MESSAGE};
use mcp_fuzz::{Input, document};
use mcp_transport::TransportErrorKind;
use mcp_transport::codec::Codec;

fuzz_target!(|data: &[u8]| {
    let doc = document(&mut Input::new(data), &MESSAGE);
    let bytes = doc.to_text();
    let codec = Codec::default();
    let decoded = codec.decode(&bytes);
    let max = mcp_transport::codec::DEFAULT_MAX_MESSAGE_BYTES;
    if bytes.len() > max {
        assert!(
            matches!(decoded, Err(TransportErrorKind::FrameTooLarge { .. })),
            "a {}-byte frame over the {max}-byte cap was not refused as too large",
            bytes.len()
        );
        return;
    }
    if doc.valid && !doc.bom && ALWAYS_A_MESSAGE.contains(&doc.frame) {
        if let Err(err) = &decoded {
            panic!(
                "valid JSON-RPC ({} bytes, depth {}) was not decoded: {err}",
                bytes.len(),
                doc.depth
            );
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
            assert!(
                codec.encode(&message) == encoded,
                "a message changed in an encode/decode round trip"
            );
        }
    }
});
