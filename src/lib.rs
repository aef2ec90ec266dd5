//! mcpgate: a validating gateway for the Model Context Protocol.
//!
//! The pipeline (wire, parse, classify, lane, header binding, dispatch,
//! message schema, value gate, forward) is built stage by stage; this crate
//! currently holds the protocol schemas every stage selects its roots from.

pub mod gate;
pub mod protocol;
