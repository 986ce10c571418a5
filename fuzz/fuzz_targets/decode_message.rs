//! Fuzzes the JSON-RPC message decoder: any bytes must decode or fail with
//! an error, never panic, and whatever decodes must survive an
//! encode/decode round trip unchanged.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_transport::codec::{Codec, Decoded};

fuzz_target!(|data: &[u8]| {
    let codec = Codec::new(1024 * 1024);
    let Ok(decoded) = codec.decode(data) else {
        return;
    };
    for message in decoded {
        let bytes = codec.encode(&message);
        assert!(
            !bytes.contains(&b'\n'),
            "encoded message contains a newline"
        );
        match codec.decode(&bytes) {
            Ok(Decoded::Single(again)) => assert_eq!(again, message),
            other => panic!("re-decoding an encoded message gave {other:?}"),
        }
    }
});
