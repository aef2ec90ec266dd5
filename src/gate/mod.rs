//! The gate: every stage a message passes through, without a socket.

pub mod distill;
pub mod parse;
