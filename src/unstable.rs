//! Internals for the crate's own tests, benches and fuzz targets, behind
//! the `unstable-internals` feature.
//!
//! **Outside semver.** Nothing here is promised to stay, to keep its name
//! or to keep its meaning from one version to the next, whatever the
//! crate's version says. It exists so that the crate's tests, benches,
//! fuzz targets and examples can reach the internals they drive or
//! measure; an embedder uses the crate root, which holds everything a
//! frontend needs.
//!
//! Each submodule mirrors the crate module of the same name and re-exports
//! only what those users name, so that
//! `crate::gate::dispatch::gate_root_schema` inside the crate is
//! `mcpgate::unstable::gate::dispatch::gate_root_schema` outside it. What
//! the crate root exports is not repeated here, and two functions stand
//! for methods the crate keeps to itself ([`catalog::tool`],
//! [`reject::row`]). With `default-features = false` only the gate's
//! layers are here; the server's come with the `server` feature.

/// The tool catalog (`crate::catalog`).
pub mod catalog {
    use crate::catalog::{Catalog, Tool};

    /// The registered tool `name` of `catalog`, its roots compiled: what
    /// the value gate checks a call against (`Catalog::get`, which the
    /// crate keeps to itself).
    pub fn tool<'c>(catalog: &'c Catalog, name: &str) -> Option<&'c Tool> {
        catalog.get(name)
    }
}

/// The explainer of refused instances (`crate::distill`).
pub mod distill {
    pub use crate::distill::{
        Collector, Distilled, ECHO_BOUND, ExplainOptions, Explainer, Keyword, MAX_LOCATIONS,
        MAX_PROBLEMS, PathToken, compares_wide_integers, summary_line,
    };
}

/// The gate's stages (`crate::gate`).
pub mod gate {
    /// Header binding (`crate::gate::binding`).
    pub mod binding {
        pub use crate::gate::binding::name_member;
    }

    /// Dispatch to the compiled roots (`crate::gate::dispatch`).
    pub mod dispatch {
        pub use crate::gate::dispatch::{Prechecks, Reads, gate_root_schema, what_it_reads};
    }

    /// The lane and the protocol fields in `_meta` (`crate::gate::lane`).
    pub mod lane {
        pub use crate::gate::lane::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
    }

    /// Server-sent events in a relayed answer (`crate::gate::sse`).
    pub mod sse {
        pub use crate::gate::sse::event_data;
    }

    /// The value gate (`crate::gate::value`).
    pub mod value {
        pub use crate::gate::value::{ExplainCost, ValueGate, explain_counted};
    }
}

/// The parser and its tape (`crate::parse`).
pub mod parse {
    pub use crate::parse::{ParseLimits, Parser, TapeJson, TapeNode};
}

/// The protocol schemas and their roots (`crate::protocol`).
pub mod protocol {
    pub use crate::protocol::{
        RootKind, SchemaDocument, compile_root, compile_root_as_written, compile_schema,
        parse_root_key, root_keys, root_schema,
    };
}

/// The rejection table and envelopes (`crate::reject`).
pub mod reject {
    use crate::reject::{Reason, Row};

    pub use crate::reject::{Dialect, Rejecter, TABLE};

    /// The row of the rejection table `reason` is answered by
    /// (`Reason::row`, which the crate keeps to itself).
    pub fn row(reason: Reason) -> &'static Row {
        reason.row()
    }

    /// Codes and data keys (`crate::reject::codes`).
    pub mod codes {
        pub use crate::reject::codes::{DataKey, TOOL_ERROR_CODES, TOOL_ERROR_FALLBACK};
    }

    /// The tool dialect's bounds (`crate::reject::dialect`).
    pub mod dialect {
        pub use crate::reject::dialect::{MAX_EXAMPLE_BYTES, MAX_EXAMPLES, MAX_HINTS};
    }

    /// `_meta.normalized` (`crate::reject::normalized`).
    pub mod normalized {
        pub use crate::reject::normalized::{EventKind, MAX_EVENTS};
    }

    /// The error envelope's bounds (`crate::reject::envelope`).
    pub mod envelope {
        pub use crate::reject::envelope::MAX_MESSAGE_BYTES;
    }
}

/// The HTTP/1.1 server (`crate::server`).
#[cfg(feature = "server")]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub mod server {
    pub use crate::server::{
        Head, HttpError, IoDriver, Reply, Response, ServerConfig, Service, ShutdownSignal,
        serve_until,
    };

    /// The connection layer's framing (`crate::server::http`).
    pub mod http {
        pub use crate::server::http::{FrameLimits, frame_request};
    }
}

/// The routes around the gate (`crate::service`).
#[cfg(feature = "server")]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub mod service {
    pub use crate::service::http_error_reason;

    /// The wire checks (`crate::service::wire`).
    pub mod wire {
        pub use crate::service::wire::WirePolicy;
    }
}

/// The forwarder (`crate::upstream`).
#[cfg(feature = "server")]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub mod upstream {
    pub use crate::upstream::is_hop_by_hop;

    /// Reading the upstream's answers (`crate::upstream::answer`).
    pub mod answer {
        pub use crate::upstream::answer::{BodyFraming, BodyState, Malformed, Parsed, parse_head};
    }
}
