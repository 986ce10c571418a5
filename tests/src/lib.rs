//! Workspace-level integration tests live in `tests/`. The library holds
//! what the conformance client shares with them: the auth provider built
//! for the suite's `auth/*` scenarios.

pub mod conformance_auth;
