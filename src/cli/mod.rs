//! The `mcpgate` command line.

pub mod check;

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

fn serve(args: crate::config::Raw, matches: Option<&ArgMatches>) -> ExitCode {
    use std::io::Write as _;
    use std::sync::Arc;

    let filter = tracing_subscriber::EnvFilter::try_from_env("MCPGATE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
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
    let gate = match crate::gate::Gate::new(settings.gate.clone()) {
        Ok(gate) => gate,
        Err(error) => {
            eprintln!("mcpgate serve: {error}");
            return ExitCode::from(1);
        }
    };
    if let Some(path) = &settings.catalog {
        match crate::catalog::Catalog::from_file(path, &settings.gate.catalog) {
            Ok(catalog) => {
                catalog.log_in_service("catalog loaded");
                gate.set_catalog(catalog);
            }
            Err(error) => {
                eprintln!("mcpgate serve: config key `catalog`: {error}");
                return ExitCode::from(2);
            }
        }
    }
    // Without a file, the catalog is the upstream's: asked for now (within
    // the connect timeout and at most 5 s for the answer: an upstream that
    // is slow to come up does not hold the start) and again on its own
    // thread.
    let learn_from = settings
        .server
        .upstream
        .clone()
        .filter(|_| settings.catalog.is_none() && settings.gate.learn_catalog);
    let mut first_refresh = crate::upstream::learn::DEFAULT_REFRESH;
    if let Some(upstream) = &learn_from {
        let timeout = upstream
            .connect_timeout
            .max(std::time::Duration::from_secs(5).min(upstream.first_byte_timeout));
        match crate::upstream::learn::learn(upstream, &settings.gate.catalog, timeout) {
            Ok((catalog, next)) => {
                catalog.log_in_service("catalog learned from the upstream");
                gate.set_catalog(catalog);
                first_refresh = next;
            }
            Err(reason) => {
                tracing::warn!(
                    target: "mcpgate::catalog",
                    reason = %reason,
                    "the upstream's tools/list could not be read; tools/call is refused (503) until it can, or forwarded unchecked with unknown_tools = \"forward\""
                );
                first_refresh = std::time::Duration::from_secs(1);
            }
        }
    }
    let mut wire = settings.wire.clone();
    if let Some(config) = settings.oauth.clone() {
        match crate::service::oauth::OAuth::start(config) {
            Ok(oauth) => wire.oauth = Some(Arc::new(oauth)),
            Err(error) => {
                eprintln!(
                    "mcpgate serve: config key `{}`: {}",
                    error.key, error.message
                );
                return ExitCode::from(2);
            }
        }
    }
    // With authentication on, session ids are sealed to their caller.
    let sessions = if wire.oauth.is_some() || !wire.bearer_tokens.is_empty() {
        let key = match settings.session_key.clone() {
            Some(key) => key,
            None => match crate::service::session::SessionKey::generate() {
                Ok(key) => {
                    tracing::info!(
                        "no session_key configured: one was drawn at start, so sessions do not survive a restart or span instances"
                    );
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
        let issuer = wire
            .oauth
            .as_ref()
            .map(|oauth| oauth.config.issuer.as_str());
        Some(crate::service::session::Sessions::new(
            &key,
            issuer,
            &wire.bearer_tokens,
        ))
    } else {
        None
    };
    let service = Arc::new(crate::service::McpService {
        gate,
        endpoint: settings.endpoint.clone(),
        wire,
        metrics: Default::default(),
        forwarding: settings.server.upstream.is_some(),
        noop_route: settings.bench_noop_route,
        sessions,
    });
    if let Some(upstream) = learn_from {
        let learner = Arc::clone(&service);
        let timeout = upstream.connect_timeout.max(upstream.first_byte_timeout);
        if let Err(error) = crate::upstream::learn::keep_learning(
            (*upstream).clone(),
            settings.gate.catalog,
            timeout,
            first_refresh,
            Arc::clone(service.gate.relearn()),
            move |catalog| learner.gate.set_catalog(catalog),
        ) {
            eprintln!("mcpgate serve: {error}");
            return ExitCode::from(1);
        }
    }
    let mut server = settings.server.clone();
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
