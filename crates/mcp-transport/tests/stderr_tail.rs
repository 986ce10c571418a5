//! The stderr ring buffer keeps the last 64 KiB, whatever the write sizes.

use mcp_transport::kinds::{STDERR_TAIL_BYTES, StderrTail};
use proptest::prelude::*;

#[test]
fn keeps_only_the_newest_bytes() {
    let tail = StderrTail::default();
    tail.push(b"first line\n");
    assert_eq!(tail.snapshot(), "first line\n");
    tail.push(&vec![b'a'; STDERR_TAIL_BYTES]);
    tail.push(b"last line\n");
    let snapshot = tail.snapshot();
    assert_eq!(snapshot.len(), STDERR_TAIL_BYTES);
    assert!(snapshot.ends_with("aaaalast line\n"));
    assert!(!snapshot.contains("first"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn equals_the_suffix_of_everything_written(chunks in prop::collection::vec(prop::collection::vec(b'a'..=b'z', 0..40_000), 0..6)) {
        let tail = StderrTail::default();
        let mut all = Vec::new();
        for chunk in &chunks {
            tail.push(chunk);
            all.extend_from_slice(chunk);
        }
        let start = all.len().saturating_sub(STDERR_TAIL_BYTES);
        prop_assert_eq!(tail.snapshot().into_bytes(), all[start..].to_vec());
    }
}
