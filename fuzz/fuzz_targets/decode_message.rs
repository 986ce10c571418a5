//! Fuzzes the JSON-RPC message decoder: any bytes must decode or fail with
//! an error, never panic (at any depth: the first byte, when it is `#`,
//! asks for the rest to be wrapped in up to 2,550 arrays), and whatever
//! decodes must survive an encode/decode round trip unchanged. What
//! `decode_salvaging` saves from a frame it refuses must round-trip too,
//! and the answer scan must find the same ids however the frame is split.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_transport::wire::{Codec, Decoded};
use mcp_transport::wire::AnswerScan;

fn round_trip(codec: &Codec, message: &mcp_transport::JsonRpcMessage) {
    let bytes = codec.encode(message);
    assert!(
        !bytes.contains(&b'\n'),
        "encoded message contains a newline"
    );
    match codec.decode(&bytes) {
        Ok(Decoded::Single(again)) => assert_eq!(&again, message),
        other => panic!("re-decoding an encoded message gave {other:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let codec = Codec::new(1024 * 1024);
    let wrapped;
    let data = match data.split_first() {
        Some((b'#', rest)) if !rest.is_empty() => {
            let levels = usize::from(rest[0]) * 10;
            let mut frame = vec![b'['; levels];
            frame.extend_from_slice(&rest[1..]);
            frame.extend(std::iter::repeat_n(b']', levels));
            wrapped = frame;
            &wrapped[..]
        }
        _ => data,
    };
    match codec.decode_salvaging(data) {
        Ok(decoded) => {
            for message in decoded {
                round_trip(&codec, &message);
            }
        }
        Err(undecodable) => {
            for message in &undecodable.salvaged {
                round_trip(&codec, message);
            }
        }
    }
    let at = data.len() / 2;
    let mut scan = AnswerScan::new();
    scan.feed(&data[..at]);
    scan.feed(&data[at..]);
    assert_eq!(scan.finish(), AnswerScan::answers_in(data));
});
