//! `mcp-cli`, the thin reference CLI: it composes `mcp-config`,
//! `mcp-oauth`, `mcp-transport` and `mcp-catalog` and holds no protocol or
//! config logic of its own. It is the only crate (with `xtask`) that talks to
//! the terminal.
//!
//! Every verb reads the global options into a [`context::Context`], asks the
//! library crates for the work, and prints the answer: human lines by
//! default, one JSON document with `--json`. Errors go to stderr as
//! `error: <message>`; the exit status is 0 when all is well, 1 when a
//! failure was found and 2 for a usage error.

#![forbid(unsafe_code)]
// The doc comments of `cli.rs` are clap's help text, read on a terminal
// where `<home>` is a placeholder, not an HTML tag, and a url is text.
#![allow(rustdoc::invalid_html_tags, rustdoc::bare_urls)]

mod approve;
mod auth;
mod browse;
mod cli;
mod connecting;
mod context;
mod diagnostics;
mod entry_args;
mod host;
mod import;
mod output;
mod probe;
mod read;
mod secret;
mod serve;
mod session;
mod target;
mod telemetry;
mod token_store;
mod tools;
mod wait;
mod write;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use crate::cli::{Cli, Command};
use crate::context::Context;
use crate::output::{Outcome, errln};

fn main() -> ExitCode {
    let parsed = Cli::command()
        .try_get_matches()
        .and_then(|matches| Ok((Cli::from_arg_matches(&matches)?, matches)));
    let (cli, verb) = match parsed {
        Ok((cli, matches)) => (cli, matches.subcommand_name().unwrap_or("").to_owned()),
        Err(err) => {
            // Help and version go to stdout with status 0, usage errors to
            // stderr with status 2; uncoloured, as every byte passes the
            // one writer, which would show clap's colours as escapes.
            let text = err.render().to_string();
            let text = text.trim_end_matches('\n');
            if err.use_stderr() {
                errln!("{text}");
            } else {
                output::outln!("{text}");
            }
            return ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2));
        }
    };
    init_tracing(cli.global.verbose);
    let telemetry = telemetry::start();
    // One trace per run: every session's spans are the run's children.
    let run_span = telemetry.run(&verb);
    let outcome = Context::new(&cli.global).and_then(|context| run(&context, cli.command));
    run_span.end(
        outcome
            .as_ref()
            .map_or(true, |outcome| *outcome != Outcome::Ok),
    );
    // Flushed before the exit status is known to the shell.
    drop(telemetry);
    output::finish();
    match outcome {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Failed) => ExitCode::from(1),
        Err(err) => {
            errln!("error: {}", output::shown(&output::error_chain(&err)));
            ExitCode::from(output::exit_status(&err))
        }
    }
}

fn run(context: &Context, command: Command) -> anyhow::Result<Outcome> {
    match command {
        Command::List => read::list(context),
        Command::Get(args) => read::get(context, &args),
        Command::CheckConfig(args) => read::check_config(context, &args),
        Command::Probe(args) => probe::probe(context, &args),
        Command::Tools(args) => tools::tools(context, &args),
        Command::Serve(args) => serve::serve(context, &args),
        Command::Call(args) => tools::call(context, &args),
        Command::Resources(args) => browse::resources(context, &args),
        Command::Prompts(args) => browse::prompts(context, &args),
        Command::Read(args) => browse::read(context, &args),
        Command::Prompt(args) => browse::prompt(context, &args),
        Command::Login(args) => auth::login(context, &args),
        Command::Logout(args) => auth::logout(context, &args),
        Command::AuthStatus => auth::auth_status(context),
        Command::Add(args) => write::add(context, &args),
        Command::AddJson(args) => write::add_json(context, &args),
        Command::Remove(args) => write::remove(context, &args),
        Command::Enable(args) => write::set_enabled(context, &args, true),
        Command::Disable(args) => write::set_enabled(context, &args, false),
        Command::Approve(args) => approve::approve(context, &args),
        Command::Deny(args) => approve::deny(context, &args),
        Command::ResetProjectChoices => approve::reset(context),
        Command::Trust => approve::trust(context, true),
        Command::Untrust => approve::trust(context, false),
        Command::Import(args) => import::import(context, &args),
        Command::Secret(args) => secret::secret(context, args.command),
    }
}

/// `-v` shows info, `-vv` debug, `-vvv` trace; `RUST_LOG` overrides.
fn init_tracing(verbose: u8) {
    let level = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    // No colours: the writer escapes every control character, the
    // subscriber's own included.
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(output::LogWriter)
        .with_ansi(false)
        .with_target(false)
        .init();
}
