//! The `mcpgate` command.

use std::process::ExitCode;

use mcpgate::protocol::{SchemaDocument, root_keys};

const USAGE: &str = "usage: mcpgate roots    list the protocol roots per schema revision";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["roots"] => {
            for document in SchemaDocument::ALL {
                for key in root_keys(&document.parse()) {
                    println!("{}\t{key}", document.revision());
                }
            }
            ExitCode::SUCCESS
        }
        ["--version"] | ["-V"] => {
            println!("mcpgate {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}
