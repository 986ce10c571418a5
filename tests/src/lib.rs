//! Workspace-level integration tests live in `tests/`; this library is empty.
