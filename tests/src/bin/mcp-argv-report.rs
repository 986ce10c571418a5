//! `mcp-argv-report`: writes what it was started with, exactly as the
//! operating system handed it over, to the file named by `ARGV_REPORT` (or,
//! when that is unset, by its first argument): one JSON object `{"args": [...], "env": {...}}` (arguments after the
//! program name, every environment variable). Then it prints `{}` on
//! stdout, which a `headersHelper` reads as "no extra headers", and exits.
//!
//! Security tests start it as a stdio server and as a `headersHelper` to see
//! whether an argument such as `$(touch FILE)` arrived literally (no shell)
//! and which variables a child received.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    let env: BTreeMap<String, String> = std::env::vars_os()
        .map(|(key, value)| {
            (
                key.to_string_lossy().into_owned(),
                value.to_string_lossy().into_owned(),
            )
        })
        .collect();
    let report = serde_json::json!({"args": args, "env": env});
    let path = std::env::var("ARGV_REPORT")
        .ok()
        .or_else(|| args.first().cloned());
    if let Some(path) = path
        && std::fs::write(&path, report.to_string()).is_err()
    {
        return ExitCode::FAILURE;
    }
    let mut stdout = std::io::stdout();
    if stdout
        .write_all(b"{}\n")
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
