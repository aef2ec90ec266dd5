//! mcpgate: a validating gateway for the Model Context Protocol.
//!
//! [`gate::Gate`] runs every stage a message passes through (wire limit,
//! parse, classify, lane, header binding, dispatch, message schema) and
//! answers allow or the exact rejection; [`reject`] holds the tables and
//! the one rejection sender; [`protocol`] the schemas in `priv/`.
//!
//! `unsafe` is refused everywhere but in these small audited places:
//! `parse::reuse` (the tape kept across parses), `parse::scan`
//! (the parse's fast path: SSE2 string scanning, slicing between quotes),
//! `sock` (a socket used by its descriptor beside monoio, by the server and the forwarder) and one
//! call in `server::reclaim` (mimalloc's heap collection).
#![deny(unsafe_code)]

pub mod catalog;
pub mod classify;
#[cfg(feature = "server")]
pub mod cli;
#[cfg(feature = "server")]
pub mod config;
pub mod distill;
pub mod gate;
pub mod parse;
pub mod protocol;
pub mod reject;
#[cfg(feature = "server")]
pub mod server;
#[cfg(feature = "server")]
pub mod service;
#[cfg(feature = "server")]
#[allow(unsafe_code)]
mod sock;
#[cfg(feature = "server")]
pub mod upstream;

pub use gate::{Gate, GateConfig, Verdict};
