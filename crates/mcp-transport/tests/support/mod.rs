//! What several test files of this crate share.

pub(crate) mod loopback;
#[allow(dead_code)]
pub(crate) mod queued;
pub(crate) mod relentless;
