//! Properties of the merge: read order within the documented precedence
//! does not matter, a higher layer always wins by name, and the result is
//! deterministic to the byte.

// Test helpers outside `#[test]` functions unwrap too.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::path::PathBuf;

use mcp_config::{
    Contribution, EntryOutcome, ParsedEntry, Scope, ServerConfig, StdioConfig, TransportConfig,
    merge,
};
use proptest::prelude::*;
use serde_json::json;

const SCOPES: [Scope; 5] = [
    Scope::Plugin,
    Scope::OpenClaw,
    Scope::User,
    Scope::Project,
    Scope::Local,
];
const NAMES: [&str; 4] = ["a", "b", "c", "d"];
const COMMANDS: [&str; 3] = ["uvx", "node", "python"];

fn entry(scope: Scope, rank: usize, name: &str, outcome: u8, command: &str) -> ParsedEntry {
    let outcome = match outcome {
        0 => EntryOutcome::Tombstone,
        1 => EntryOutcome::Invalid,
        _ => EntryOutcome::Server(
            ServerConfig::new(name, TransportConfig::Stdio(StdioConfig::new(command)))
                .with_enabled(outcome != 3),
        ),
    };
    ParsedEntry {
        name: name.to_owned(),
        outcome,
        raw: json!({"command": command}),
        source: PathBuf::from(format!("/{scope}/{rank}.json")),
        line: 1,
        column: 1,
        plugin: (scope == Scope::Plugin).then(|| format!("p{rank}")),
    }
}

/// Contributions with distinct (scope, rank) and distinct names per file.
fn contributions() -> impl Strategy<Value = Vec<Contribution>> {
    let file = (
        0..5usize,
        0..3usize,
        prop::collection::vec((0..4usize, 0..5u8, 0..3usize), 0..5),
    );
    prop::collection::vec(file, 0..10).prop_map(|files| {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for (scope, rank, entries) in files {
            if !seen.insert((scope, rank)) {
                continue;
            }
            let scope = SCOPES[scope];
            let mut names = BTreeSet::new();
            let entries = entries
                .into_iter()
                .filter(|(n, _, _)| names.insert(*n))
                .map(|(n, o, c)| entry(scope, rank, NAMES[n], o, COMMANDS[c]))
                .collect();
            out.push(Contribution {
                scope,
                rank,
                entries,
                settings: Some(
                    json!({"from": format!("{scope}/{rank}"), scope.as_str(): {"rank": rank}}),
                ),
            });
        }
        out
    })
}

fn render(contributions: Vec<Contribution>) -> String {
    let merged = merge(contributions, false);
    serde_json::to_string(&json!({
        "servers": merged.servers,
        "raw": merged.raw_entries,
        "settings": merged.settings,
        "diagnostics": merged.diagnostics,
    }))
    .unwrap()
}

proptest! {
    #[test]
    fn read_order_does_not_matter(
        (files, shuffled) in contributions().prop_flat_map(|v| (Just(v.clone()), Just(v).prop_shuffle()))
    ) {
        prop_assert_eq!(render(files), render(shuffled));
    }

    #[test]
    fn merging_is_deterministic(files in contributions()) {
        prop_assert_eq!(render(files.clone()), render(files));
    }

    #[test]
    fn the_highest_layer_wins_by_name(files in contributions()) {
        let merged = merge(files.clone(), false);
        for name in NAMES {
            let top = files
                .iter()
                .filter_map(|c| c.entries.iter().find(|e| e.name == name).map(|e| (c.scope, c.rank, e)))
                .max_by_key(|(scope, rank, _)| (*scope, *rank));
            let got = merged.servers.iter().find(|s| s.config.name == name);
            match top {
                None => prop_assert!(got.is_none()),
                Some((scope, _, e)) => match &e.outcome {
                    EntryOutcome::Server(config) => {
                        if scope == Scope::Plugin && got.is_none() {
                            // dropped by signature dedupe: some configured or
                            // earlier plugin server reaches the same endpoint
                            let has_twin = merged.servers.iter().any(|s| {
                                mcp_config::signature(&s.config) == mcp_config::signature(config)
                            });
                            prop_assert!(has_twin);
                        } else {
                            let got = got.expect("the top entry must win");
                            prop_assert_eq!(&got.config, config);
                            prop_assert_eq!(got.scope, scope);
                            prop_assert_eq!(&got.source, &e.source);
                        }
                    }
                    EntryOutcome::Tombstone | EntryOutcome::Invalid => prop_assert!(got.is_none()),
                },
            }
        }
    }
}
