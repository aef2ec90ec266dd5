//! The `mcpgate` command line.

pub mod check;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    Check(check::CheckArgs),
    /// List the protocol roots the gateway compiles, per schema revision.
    Roots,
}

/// Runs the command line; usage errors exit 2 (clap's convention).
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check(args) => check::run(args),
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
