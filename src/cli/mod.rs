//! The `mcpgate` command line.

pub mod check;
mod routes;

use std::process::ExitCode;

use clap::error::{ContextKind, ContextValue};
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::protocol::{SchemaDocument, root_keys};

#[derive(Parser, Debug)]
#[command(
    name = "mcpgate",
    version,
    about = "A validating gateway for the Model Context Protocol"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print what the gateway would answer to each message.
    Check(Box<check::CheckArgs>),
    /// Run the gateway: the MCP endpoint, `/validate`, `/metrics`, `/healthz`.
    Serve(Box<crate::config::Raw>),
    /// List the protocol roots the gateway compiles, per schema revision.
    Roots,
}

/// Runs the command line; usage errors exit 2 (clap's convention).
pub fn main() -> ExitCode {
    // The matches tell a flag from its `MCPGATE_*` variable, for errors.
    let matches = Cli::command()
        .try_get_matches()
        .unwrap_or_else(|e| usage_error(e));
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    match cli.command {
        Command::Check(args) => check::run(*args),
        Command::Serve(args) => serve(*args, matches.subcommand_matches("serve")),
        Command::Roots => {
            for document in SchemaDocument::ALL {
                for key in root_keys(&document.parse()) {
                    println!("{}\t{key}", document.revision());
                }
            }
            ExitCode::SUCCESS
        }
    }
}

/// Exits on a command-line error; a refused value that came from a
/// `MCPGATE_*` variable (clap names only the flag) is said to be its.
fn usage_error(error: clap::Error) -> ! {
    let _ = error.print();
    if let Some(ContextValue::String(arg)) = error.get(ContextKind::InvalidArg) {
        let flag = arg.split(' ').next().unwrap_or_default();
        let given = std::env::args().any(|a| a == flag || a.starts_with(&format!("{flag}=")));
        let key = flag.trim_start_matches("--").replace('-', "_");
        let variable = format!("MCPGATE_{}", key.to_ascii_uppercase());
        if !given && std::env::var_os(&variable).is_some() {
            eprintln!("(the value is {variable}'s)");
        }
    }
    std::process::exit(error.exit_code())
}

/// The log filter `MCPGATE_LOG` gives (`info` when unset or blank): each
/// comma-separated directive a level, or `TARGET=LEVEL`. A bare word that
/// is no level would be read as a target and silence every other line
/// (`warnn`), so it is refused, as is anything the filter cannot parse.
fn log_filter(text: Option<&str>) -> Result<tracing_subscriber::EnvFilter, String> {
    let text = text
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .unwrap_or("info");
    const LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];
    let is_level = |word: &str| LEVELS.iter().any(|l| l.eq_ignore_ascii_case(word.trim()));
    for directive in text.split(',').filter(|d| !d.trim().is_empty()) {
        let level = match directive.rsplit_once('=') {
            Some((_, level)) => level,
            None => directive,
        };
        if !is_level(level) {
            return Err(format!(
                "{directive:?} is not a level ({}) nor TARGET=LEVEL",
                LEVELS.join(", ")
            ));
        }
    }
    tracing_subscriber::EnvFilter::builder()
        .parse(text)
        .map_err(|e| format!("{text:?}: {e}"))
}

fn serve(args: crate::config::Raw, matches: Option<&ArgMatches>) -> ExitCode {
    use std::io::Write as _;
    use std::sync::Arc;

    let filter = match log_filter(std::env::var("MCPGATE_LOG").ok().as_deref()) {
        Ok(filter) => filter,
        Err(error) => {
            eprintln!("mcpgate serve: MCPGATE_LOG: {error}");
            return ExitCode::from(2);
        }
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    let from_cli = |key: &str| match matches.and_then(|m| m.value_source(key)) {
        Some(ValueSource::EnvVariable) => format!("from MCPGATE_{}", key.to_ascii_uppercase()),
        _ => crate::config::flag(key),
    };
    let settings =
        match crate::config::Settings::resolve(&args, from_cli, |name| std::env::var(name).ok()) {
            Ok(settings) => settings,
            Err(error) => {
                eprintln!("mcpgate serve: {error}");
                return ExitCode::from(2);
            }
        };
    // With authentication on, session ids are sealed under this key: the
    // configured one, else one drawn now (kept across reloads).
    let drawn_key = match settings.session_key.clone() {
        Some(key) => key,
        None => match crate::service::session::SessionKey::generate() {
            Ok(key) => {
                if settings.oauth.is_some() || !settings.wire.bearer_tokens.is_empty() {
                    tracing::info!(
                        "no session_key configured: one was drawn at start, so sessions do not survive a restart or span instances"
                    );
                }
                key
            }
            Err(error) => {
                eprintln!(
                    "mcpgate serve: config key `session_key`: none set, and none could be drawn: {error}"
                );
                return ExitCode::from(1);
            }
        },
    };
    let metrics = Arc::new(crate::service::metrics::Metrics::default());
    let routes = match routes::build(&settings, &metrics, &drawn_key, None) {
        Ok(routes) => routes,
        Err(error) => {
            eprintln!("mcpgate serve: {}", error.message);
            return ExitCode::from(error.status);
        }
    };
    let service = Arc::new(crate::service::McpService::new(routes, metrics));
    // SIGHUP reads the same flags, environment and file again.
    let resolve = {
        let (args, matches) = (args.clone(), matches.cloned());
        move || {
            let from_cli = |key: &str| match matches.as_ref().and_then(|m| m.value_source(key)) {
                Some(ValueSource::EnvVariable) => {
                    format!("from MCPGATE_{}", key.to_ascii_uppercase())
                }
                _ => crate::config::flag(key),
            };
            crate::config::Settings::resolve(&args, from_cli, |name| std::env::var(name).ok())
        }
    };
    let reloader = routes::Reloader {
        service: Arc::clone(&service),
        settings: settings.clone(),
        drawn_key,
        resolve: Box::new(resolve),
    };
    if let Err(error) = routes::reload_on_sighup(reloader) {
        eprintln!("mcpgate serve: cannot watch SIGHUP: {error}");
        return ExitCode::from(1);
    }
    let mut server = settings.server.clone();
    // Each route names its upstream to the workers.
    server.upstream = None;
    server.on_listening = Some(Arc::new(|address| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "listening on {address}");
        let _ = out.flush();
    }));
    match crate::server::serve(server, service) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcpgate serve: {error}");
            ExitCode::from(1)
        }
    }
}
