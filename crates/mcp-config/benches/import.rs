//! Import of other hosts' files holding many values on one line: 100,000
//! and 400,000 array items on one line in each reader's format (Codex's
//! TOML, Goose's YAML, VS Code's JSONC), and 200,000 keys on one line.
//! Work is linear in the input: 400,000 items take about four times what
//! 100,000 take (counting columns from the line's start, as the readers
//! once did, made it sixteen times, and 20 s for the Codex file). The
//! baseline parses the same JSON text with `serde_json` alone.

// Benchmark set-up unwraps: a broken fixture should stop the run loudly.
#![allow(clippy::unwrap_used, missing_docs)]

use std::path::Path;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mcp_config::import::{Host, ImportContext, import_text};

/// A file of one server whose `args` are `items` strings on one line, the
/// last of them a table (so the entry is refused with a diagnostic
/// positioned at the end of the line).
fn file(host: Host, items: usize) -> String {
    let (item, table) = match host {
        Host::Codex => ("\"a\"", "{t = 1}"),
        Host::Goose => ("a", "{t: 1}"),
        _ => ("\"a\"", "{\"t\":1}"),
    };
    let mut args = vec![item; items - 1];
    args.push(table);
    let args = args.join(",");
    match host {
        Host::Codex => format!("[mcp_servers.big]\ncommand = \"x\"\nargs = [{args}]\n"),
        Host::Goose => {
            format!("extensions:\n  big:\n    type: stdio\n    cmd: x\n    args: [{args}]\n")
        }
        _ => format!("{{\"servers\":{{\"big\":{{\"command\":\"x\",\"args\":[{args}]}}}}}}"),
    }
}

/// A Codex file of one server whose `env` holds `keys` keys on one line.
fn many_keys(keys: usize) -> String {
    let env: Vec<String> = (0..keys).map(|i| format!("K{i} = \"v\"")).collect();
    format!(
        "[mcp_servers.big]\ncommand = \"x\"\nenv = {{{}}}\n",
        env.join(",")
    )
}

fn long_lines(c: &mut Criterion) {
    let cx = ImportContext::default();
    let mut group = c.benchmark_group("import one long line");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for host in [Host::Codex, Host::Goose, Host::VsCode] {
        for items in [100_000, 400_000] {
            let text = file(host, items);
            let imported = import_text(host, &text, Path::new("f"), &cx);
            assert_eq!(imported.diagnostics.len(), 1, "{host}");
            group.bench_with_input(
                BenchmarkId::new(host.id(), format!("{items} items")),
                &text,
                |b, text| b.iter(|| import_text(host, text, Path::new("f"), &cx)),
            );
        }
    }
    let text = many_keys(200_000);
    group.bench_function("codex/200000 keys", |b| {
        b.iter(|| import_text(Host::Codex, &text, Path::new("f"), &cx))
    });
    let text = file(Host::VsCode, 400_000);
    group.bench_function(
        "baseline: serde_json parse of the vscode 400000 items",
        |b| b.iter(|| serde_json::from_str::<serde_json::Value>(&text).unwrap()),
    );
    group.finish();
}

criterion_group!(benches, long_lines);
criterion_main!(benches);
