//! Feeds arbitrary server and tool names through materialisation in both
//! naming styles (REFERENCE §3.2).
//!
//! Input: lines (UTF-8, invalid bytes replaced). `@NAME` starts a server;
//! `%r` / `%p` give the current server resources / prompts (so it gets
//! utility tools); `#NAME` reserves a host tool name; any other line is a
//! tool of the current server (a server named `srv` when none started).
//!
//! Checks: nothing panics; every name matches `^[A-Za-z0-9_-]{1,64}$`;
//! names are unique (case-insensitively in `openclaw` style, which
//! compares that way) and never a reserved name; the catalog is sorted and
//! does not depend on the order the servers are given in; every name maps
//! back to a server and tool that were listed.

#![no_main]

use std::collections::{BTreeSet, HashSet};

use libfuzzer_sys::fuzz_target;
use mcp_catalog::tools::{MAX_NAME_LEN, is_valid_name};
use mcp_catalog::{
    MaterializeOptions, NamingStyle, ServerFeatures, ServerTools, ToolTarget, materialize,
};
use mcp_transport::Tool;
use serde_json::json;

struct Listing {
    server: String,
    tools: Vec<String>,
    features: ServerFeatures,
}

fn parse(text: &str) -> (Vec<Listing>, BTreeSet<String>) {
    let mut listings: Vec<Listing> = Vec::new();
    let mut reserved = BTreeSet::new();
    for line in text.split('\n') {
        if let Some(name) = line.strip_prefix('@') {
            // Server names are unique (config keys, runtime slots): a name
            // seen again goes on with the listing it already has.
            let listing = match listings.iter().position(|l| l.server == name) {
                Some(index) => listings.remove(index),
                None => Listing {
                    server: name.to_owned(),
                    tools: Vec::new(),
                    features: ServerFeatures::default(),
                },
            };
            listings.push(listing);
            continue;
        }
        if let Some(name) = line.strip_prefix('#') {
            reserved.insert(name.to_owned());
            continue;
        }
        if listings.is_empty() {
            listings.push(Listing {
                server: "srv".to_owned(),
                tools: Vec::new(),
                features: ServerFeatures::default(),
            });
        }
        let Some(current) = listings.last_mut() else {
            continue;
        };
        match line {
            "%r" => current.features.resources = true,
            "%p" => current.features.prompts = true,
            tool => current.tools.push(tool.to_owned()),
        }
    }
    (listings, reserved)
}

fn server_tools(listing: &Listing) -> ServerTools {
    let tools: Vec<Tool> = listing
        .tools
        .iter()
        .map(|name| Tool {
            name: name.clone(),
            title: None,
            description: None,
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: None,
            execution: None,
        })
        .collect();
    ServerTools::new(listing.server.clone(), tools).with_features(listing.features)
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (listings, reserved) = parse(&text);
    let servers: Vec<ServerTools> = listings.iter().map(server_tools).collect();
    let mut reversed = servers.clone();
    reversed.reverse();

    for style in [NamingStyle::OpenClaw, NamingStyle::Claw] {
        let options = MaterializeOptions::default().with_style(style).with_reserved_names(reserved.clone());
        let catalog = materialize(&servers, &options);
        // OpenClaw compares names without case; every other style as
        // written.
        let key = |name: &str| match style {
            NamingStyle::OpenClaw => name.to_ascii_lowercase(),
            _ => name.to_owned(),
        };
        let reserved_keys: HashSet<String> = reserved.iter().map(|n| key(n)).collect();
        let mut seen = HashSet::new();
        for tool in catalog.tools() {
            let name = tool.name();
            assert!(
                is_valid_name(name) && name.len() <= MAX_NAME_LEN,
                "{} name {name:?} breaks the naming rule",
                style.as_str()
            );
            assert!(
                seen.insert(key(name)),
                "{} name {name:?} is given twice",
                style.as_str()
            );
            assert!(
                !reserved_keys.contains(&key(name)),
                "{} name {name:?} is reserved",
                style.as_str()
            );
            let origin = tool.origin();
            let listed = listings.iter().any(|l| {
                l.server == origin.server
                    && match &origin.target {
                        ToolTarget::Tool { name } => l.tools.contains(name),
                        ToolTarget::Utility { .. } => l.features.resources || l.features.prompts,
                        // A target added later: a name the listing cannot vouch for.
                        _ => false,
                    }
            });
            assert!(listed, "{name:?} maps to {origin:?}, which was not listed");
        }
        assert!(
            catalog
                .tools()
                .windows(2)
                .all(|w| w[0].name() < w[1].name()),
            "the catalog is not sorted"
        );

        let again = materialize(&reversed, &options);
        assert_eq!(
            serde_json::to_string(&catalog).ok(),
            serde_json::to_string(&again).ok(),
            "the {} catalog depends on server order",
            style.as_str()
        );
        assert_eq!(
            format!("{:?}", catalog.diagnostics()),
            format!("{:?}", again.diagnostics()),
            "the {} diagnostics depend on server order",
            style.as_str()
        );
    }
});
