//! What several test files of this crate share.

pub(crate) mod loopback;
pub(crate) mod relentless;
