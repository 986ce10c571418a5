//! Deep and hostile JSON through schema normalisation, every provider
//! profile, materialisation and argument validation (REFERENCE §3.4).
//!
//! Input: three `mcp_fuzz` programs, read one after the other: the
//! tool's `inputSchema` (over [`SCHEMA`]: `$ref` chains and cycles,
//! `anyOf`/`oneOf`/`not`/`allOf`, properties and items chains up to
//! 65,535 levels, hostile strings as keys and values), then a byte that
//! picks the tool's name, then the call's arguments (over [`ARGUMENTS`]).
//! Values are built as `serde_json` values without recursion, as the
//! decoder would hand them over; the harness drops them without
//! recursion too, so a stack overflow is the catalog's.
//!
//! Checks: nothing panics or overflows the stack, for `normalize`,
//! `prepare` in every profile, `materialize` in both naming styles,
//! `prepare_arguments` and `validate` of every materialised tool, and
//! `strip_optional_nulls`; a listed tool with a plain name either reaches
//! the catalog or a diagnostic names it (issue 12 items 7 and 19).

#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use mcp_catalog::schemas::{normalize_schema, prepare_schema, strip_optional_nulls};
use mcp_catalog::{
    MaterializeOptions, NamingStyle, ProviderProfile, ServerTools, materialize,
};
use mcp_fuzz::grammars::{ARGUMENTS, SCHEMA};
use mcp_fuzz::{HOSTILE_STRINGS, Input, document, drop_value};
use mcp_transport::Tool;

/// Tool names: plain ones first (the catalog keeps or names them), then
/// the hostile strings.
const PLAIN_NAMES: &[&str] = &["tool", "t", "read_file", "a-b"];

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let schema = document(&mut input, &SCHEMA).to_value();
    let pick = usize::from(input.byte());
    let (name, plain) = match pick % (PLAIN_NAMES.len() + HOSTILE_STRINGS.len()) {
        n if n < PLAIN_NAMES.len() => (PLAIN_NAMES[n].to_owned(), true),
        n => (HOSTILE_STRINGS[n - PLAIN_NAMES.len()].to_owned(), false),
    };
    // Kept as a program: `Value::clone` recurses, so each copy the checks
    // need is built again without recursion.
    let arguments_doc = document(&mut input, &ARGUMENTS);
    let arguments = arguments_doc.to_value();

    let normal = normalize_schema(&schema);
    for profile in ProviderProfile::ALL {
        if let Ok(prepared) = prepare_schema(&schema, profile) {
            drop_value(prepared);
        }
    }

    let listing = ServerTools::new("srv".to_owned(), Arc::from(vec![Tool {
            name: name.clone(),
            title: None,
            description: Some(HOSTILE_STRINGS[pick % HOSTILE_STRINGS.len()].to_owned()),
            input_schema: schema,
            output_schema: None,
            annotations: None,
            execution: None,
        }]));
    for (profile, style) in ProviderProfile::ALL
        .into_iter()
        .map(|p| (p, NamingStyle::Claw))
        .chain([(ProviderProfile::OpenAiStrict, NamingStyle::OpenClaw)])
    {
        let catalog = materialize(
            std::slice::from_ref(&listing),
            &MaterializeOptions::default().with_style(style).with_profile(profile),
        );
        for tool in catalog.tools() {
            let _ = tool.validate(&arguments);
            if let Ok(prepared) = tool.prepare_arguments(arguments_doc.to_value()) {
                drop_value(prepared);
            }
        }
        if plain {
            let listed = catalog.tools().iter().any(|tool| {
                matches!(&tool.origin().target, mcp_catalog::ToolTarget::Tool { name: raw } if *raw == name)
            });
            let named = catalog
                .diagnostics()
                .iter()
                .any(|d| d.message.contains(&name));
            assert!(
                listed || named,
                "{}: tool {name:?} left the catalog and no diagnostic names it: {:?}",
                profile.as_str(),
                catalog.diagnostics()
            );
        }
    }

    let mut stripped = arguments_doc.to_value();
    strip_optional_nulls(&normal, &mut stripped);
    drop_value(stripped);
    drop_value(normal);
    drop_value(arguments);
    let mut tools = listing.tools;
    if let Some(tools) = Arc::get_mut(&mut tools) {
        for tool in tools {
            drop_value(std::mem::take(&mut tool.input_schema));
        }
    }
});
