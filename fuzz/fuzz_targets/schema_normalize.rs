//! Feeds any JSON value as a tool's `inputSchema` to schema normalisation
//! and every provider profile (REFERENCE §3.4).
//!
//! Checks: nothing panics; `normalize` is idempotent; the cheap path of
//! `prepare` (a schema already normal is borrowed) agrees with normalising
//! first; whatever a profile accepts obeys that provider's documented rules
//! (the same checks the crate's tests use); and dropping strict mode's
//! optional `null`s never panics on arguments shaped like the schema.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_catalog::ProviderProfile;
use mcp_catalog::schemas::{schema_for_profile, normalize_schema, prepare_schema, strip_optional_nulls};
use serde_json::Value;

#[path = "../../crates/mcp-catalog/tests/support/mod.rs"]
mod support;

fuzz_target!(|data: &[u8]| {
    let Ok(schema) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let once = normalize_schema(&schema);
    let twice = normalize_schema(&once);
    assert_eq!(once, twice, "normalising twice differs from once");

    for profile in ProviderProfile::ALL {
        // Refusals compare by what they say: the path and the reason.
        let prepared = prepare_schema(&schema, profile).map_err(|e| e.to_string());
        let slow = schema_for_profile(&once, profile).map_err(|e| e.to_string());
        assert_eq!(
            prepared,
            slow,
            "prepare and schema_for_profile(normalize) disagree for {}",
            profile.as_str()
        );
        let Ok(out) = prepared else { continue };
        let problems = match profile {
            ProviderProfile::Generic => Vec::new(),
            ProviderProfile::Anthropic => support::anthropic_problems(&out),
            ProviderProfile::OpenAiStrict => support::openai_strict_problems(&out),
            ProviderProfile::Gemini => support::gemini_problems(&out),
            // A profile added later has no checker here yet.
            _ => Vec::new(),
        };
        assert!(
            problems.is_empty(),
            "{} accepted a schema it cannot send: {problems:?}\n{}",
            profile.as_str(),
            serde_json::to_string(&out).unwrap_or_default()
        );
        if profile == ProviderProfile::Generic {
            assert_eq!(out, once, "the generic profile changed a normal schema");
        }
    }

    let mut arguments = schema;
    strip_optional_nulls(&once, &mut arguments);
});
