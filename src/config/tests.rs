use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use clap::{Args, FromArgMatches};

use super::*;
use crate::gate::RefusalStatus;
use crate::server::IoDriver;
use crate::service::oauth::keys::JwksSource;

/// The command line `serve ARGS` (its `MCPGATE_*` variables as this
/// process has them: none in a test run).
fn try_flags(args: &[&str]) -> Result<Raw, clap::Error> {
    let command = Raw::augment_args(clap::Command::new("serve"));
    let matches =
        command.try_get_matches_from(std::iter::once("serve").chain(args.iter().copied()))?;
    Raw::from_arg_matches(&matches)
}

fn flags(args: &[&str]) -> Raw {
    try_flags(args).unwrap()
}

/// A file of its own in a directory of its own.
fn write_file(name: &str, text: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("mcpgate-config-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `flags` over a file holding `text` (none when empty) over the
/// contract's variables `contract`.
fn build_with(flags: &Raw, text: &str, contract: &[(&str, &str)]) -> Result<Settings, ConfigError> {
    let mut flags = flags.clone();
    if !text.is_empty() {
        flags.config = Some(write_file("c.toml", text));
    }
    let var = |name: &str| {
        let found = contract.iter().find(|(n, _)| *n == name);
        found.map(|(_, value)| (*value).to_owned())
    };
    Settings::resolve(&flags, flag, var)
}

fn build(flags: &Raw, text: &str) -> Result<Settings, ConfigError> {
    build_with(flags, text, &[])
}

fn contract(normalization: &str, meta: &str, strict: &str) -> [(&'static str, String); 3] {
    [
        (
            "MCP_SCHEMA_KEY_NORMALIZATION_ENABLED",
            normalization.to_owned(),
        ),
        ("MCP_SCHEMA_KEY_NORMALIZATION_META", meta.to_owned()),
        ("MCP_STRICT_UNKNOWN_FIELDS", strict.to_owned()),
    ]
}

fn build_contract(
    flags: &Raw,
    text: &str,
    vars: &[(&'static str, String)],
) -> Result<Settings, ConfigError> {
    let vars: Vec<(&str, &str)> = vars.iter().map(|(n, v)| (*n, v.as_str())).collect();
    build_with(flags, text, &vars)
}

#[test]
fn refusal_status_is_rpc_unless_the_file_or_a_flag_says_http() {
    let defaults = build(&Raw::default(), "").unwrap();
    assert_eq!(defaults.gate.refusal_status, RefusalStatus::Rpc);
    let settings = build(&Raw::default(), "refusal_status = \"http\"").unwrap();
    assert_eq!(settings.gate.refusal_status, RefusalStatus::Http);
    let args = flags(&["--refusal-status", "rpc"]);
    let settings = build(&args, "refusal_status = \"http\"").unwrap();
    assert_eq!(settings.gate.refusal_status, RefusalStatus::Rpc);
}

#[test]
fn normalization_switches_come_from_flags_then_the_contracts_variables_then_the_file() {
    let defaults = build(&Raw::default(), "").unwrap();
    assert!(defaults.gate.normalization);
    assert!(!defaults.gate.normalization_meta);
    assert!(defaults.gate.catalog.close_objects);
    let file_on = "normalization = true\nnormalization_meta = false\nstrict_unknown_fields = true";
    // The contract's variables win over the file.
    let settings =
        build_contract(&Raw::default(), file_on, &contract("false", "True", "0")).unwrap();
    assert!(!settings.gate.normalization);
    assert!(settings.gate.normalization_meta);
    assert!(!settings.gate.catalog.close_objects);
    // A flag (or its MCPGATE_ variable) wins over the contract's.
    let args = flags(&["--normalization", "true", "--strict-unknown-fields", "true"]);
    let settings = build_contract(&args, "", &contract("false", "true", "false")).unwrap();
    assert!(settings.gate.normalization);
    assert!(settings.gate.catalog.close_objects);
    let error =
        build_contract(&Raw::default(), file_on, &contract("nope", "true", "true")).unwrap_err();
    assert_eq!(error.key, "normalization");
    assert!(
        error
            .to_string()
            .contains("MCP_SCHEMA_KEY_NORMALIZATION_ENABLED")
    );
    // The older name of strict_unknown_fields still works, and may not
    // say the opposite.
    let settings = build(&Raw::default(), "close_tool_schemas = false").unwrap();
    assert!(!settings.gate.catalog.close_objects);
    let error = build(
        &Raw::default(),
        "close_tool_schemas = false\nstrict_unknown_fields = true",
    )
    .unwrap_err();
    assert_eq!(error.key, "strict_unknown_fields");
    // A flag over the older name in the file is no disagreement.
    let args = flags(&["--strict-unknown-fields", "1"]);
    let settings = build(&args, "close_tool_schemas = false").unwrap();
    assert!(settings.gate.catalog.close_objects);
}

#[test]
fn defaults_apply_without_file_or_flags() {
    let settings = build(&Raw::default(), "").unwrap();
    assert_eq!(settings.server.listen, "127.0.0.1:8080".parse().unwrap());
    assert_eq!(settings.endpoint, "/mcp");
    assert_eq!(settings.gate.body_limit, settings.server.body_limit);
    assert!(settings.wire.bearer_tokens.is_empty());
    assert!(settings.server.upstream.is_none());
    assert!(!settings.bench_noop_route);
}

#[test]
fn the_noop_route_is_served_only_when_asked_for() {
    let on = "bench_noop_route = true";
    assert!(build(&Raw::default(), on).unwrap().bench_noop_route);
    assert!(
        build(&flags(&["--bench-noop-route", "true"]), "")
            .unwrap()
            .bench_noop_route
    );
    // The flag alone is `true`.
    assert!(
        build(&flags(&["--bench-noop-route"]), "")
            .unwrap()
            .bench_noop_route
    );
    // The flag wins over the file.
    assert!(
        !build(&flags(&["--bench-noop-route", "false"]), on)
            .unwrap()
            .bench_noop_route
    );
    let error = try_flags(&["--bench-noop-route", "yes"]).unwrap_err();
    assert!(error.to_string().contains("--bench-noop-route"), "{error}");
}

#[test]
fn the_driver_defaults_to_io_uring_where_the_kernel_offers_it() {
    let gateway = flags(&["--upstream", "http://127.0.0.1:9001/mcp"]);
    let expected = if IoDriver::uring_offered() {
        IoDriver::Uring
    } else {
        IoDriver::Epoll
    };
    // The verdict service and a gateway alike.
    for args in [&Raw::default(), &gateway] {
        let settings = build(args, "").unwrap();
        assert_eq!(settings.server.io_driver, expected);
    }
    // A driver that is set wins, from a flag or from the file.
    let epoll = flags(&[
        "--io-driver",
        "epoll",
        "--upstream",
        "http://127.0.0.1:9001/mcp",
    ]);
    let settings = build(&epoll, "").unwrap();
    assert_eq!(settings.server.io_driver, IoDriver::Epoll);
    let settings = build(&gateway, "io_driver = \"epoll\"").unwrap();
    assert_eq!(settings.server.io_driver, IoDriver::Epoll);
}

#[test]
fn the_upstream_takes_its_timeouts_from_file_and_flags() {
    let args = flags(&[
        "--upstream",
        "http://127.0.0.1:9001/mcp",
        "--upstream-first-byte-timeout-ms",
        "1500",
    ]);
    let settings = build(&args, "upstream_connect_timeout_ms = 250").unwrap();
    let upstream = settings.server.upstream.unwrap();
    assert_eq!(upstream.path, "/mcp");
    assert_eq!(upstream.connect_timeout, Duration::from_millis(250));
    assert_eq!(upstream.first_byte_timeout, Duration::from_millis(1500));
    assert_eq!(upstream.idle_timeout, crate::upstream::DEFAULT_IDLE_TIMEOUT);
}

#[test]
fn flags_win_over_the_file() {
    let args = flags(&["--listen", "127.0.0.1:9000", "--body-limit", "2048"]);
    let settings = build(
        &args,
        "listen = \"127.0.0.1:7000\"\nbody_limit = 1024\nworkers = 3",
    )
    .unwrap();
    assert_eq!(settings.server.listen.port(), 9000);
    assert_eq!(settings.gate.body_limit, 2048);
    assert_eq!(settings.server.workers, 3);
    assert_eq!(settings.server.max_connections, 4096);
    let args = flags(&["--max-connections", "100"]);
    let settings = build(&args, "max_connections = 50").unwrap();
    assert_eq!(settings.server.max_connections, 100);
    // Lists: comma-separated in a flag, spaces and blanks dropped.
    let args = flags(&["--bearer-tokens", " a, b,,"]);
    let settings = build(&args, "bearer_tokens = [\"c\"]").unwrap();
    assert_eq!(settings.wire.bearer_tokens, ["a", "b"]);
}

#[test]
fn a_wrong_value_names_its_key() {
    for (args, file_text, key) in [
        (&["--listen", "nowhere"][..], "", "listen"),
        (&[], "io_driver = \"kqueue\"", "io_driver"),
        (&[], "revisions = [\"2024-11-05\"]", "revisions"),
        (&[], "endpoint = \"mcp\"", "endpoint"),
        (&["--upstream", "ftp://127.0.0.1:9/mcp"], "", "upstream"),
        (
            &[],
            "upstream = \"http://127.0.0.1:9/mcp\"\nupstream_idle_timeout_ms = 0",
            "upstream_idle_timeout_ms",
        ),
        (&[], "read_timeout_ms = 0", "read_timeout_ms"),
        (&[], "unknown_tools = \"drop\"", "unknown_tools"),
        (&[], "refusal_status = \"400\"", "refusal_status"),
        (&[], "max_connections = 0", "max_connections"),
        (&["--workers", "0"], "", "workers"),
    ] {
        let error = build(&flags(args), file_text).unwrap_err();
        assert_eq!(error.key, key, "{error}");
        assert!(error.to_string().contains(key));
        // And where it was set.
        let source = error.origin.clone().unwrap();
        match args.is_empty() {
            true => assert!(
                source.starts_with("in ") && source.ends_with(".toml"),
                "{error}"
            ),
            false => assert_eq!(
                source,
                format!("from --{}", key.replace('_', "-")),
                "{error}"
            ),
        }
    }
    // A flag (or variable) that is not even of its type: the command line
    // refuses it, naming it.
    for (args, flag) in [
        (&["--workers", "many"][..], "--workers"),
        (&["--max-connections", "lots"], "--max-connections"),
    ] {
        let error = try_flags(args).unwrap_err();
        assert!(error.to_string().contains(flag), "{error}");
    }
}

#[test]
fn an_unknown_or_mistyped_file_key_is_named() {
    for (text, key) in [
        ("body_limt = 5\n", "body_limt"),
        ("workers = \"two\"\n", "workers"),
        ("normalization = \"yes\"\n", "normalization"),
    ] {
        let error = build(&Raw::default(), text).unwrap_err();
        assert!(error.to_string().contains(key), "{error}");
        assert_eq!(error.key, key, "{error}");
    }
}

/// `mcpgate.example.toml` in the repository.
fn example_path() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/mcpgate.example.toml"))
}

#[test]
fn the_example_file_holds_the_built_in_defaults() {
    let args = Raw {
        config: Some(example_path()),
        ..Raw::default()
    };
    let from_file = build(&args, "").unwrap();
    let built_in = build(&Raw::default(), "").unwrap();
    assert_eq!(format!("{from_file:?}"), format!("{built_in:?}"));
}

#[test]
fn relative_paths_in_the_file_are_read_from_its_directory() {
    let text = "catalog = \"tools.json\"\noauth_issuer = \"https://auth.example\"\n\
                oauth_resource = \"https://mcp.example/mcp\"\noauth_jwks_file = \"keys/jwks.json\"";
    let settings = build(&Raw::default(), text).unwrap();
    let catalog = settings.catalog.unwrap();
    assert!(
        catalog.is_absolute() && catalog.ends_with("tools.json"),
        "{catalog:?}"
    );
    let dir = catalog.parent().unwrap();
    let Some(JwksSource::File(jwks)) = settings.oauth.map(|o| o.jwks) else {
        panic!("a JWKS file");
    };
    assert_eq!(jwks, dir.join("keys/jwks.json"));
    // A flag's path stays relative to the working directory.
    let settings = build(&flags(&["--catalog", "tools.json"]), text).unwrap();
    assert_eq!(settings.catalog.unwrap(), PathBuf::from("tools.json"));
    // An absolute path stays as it is.
    let settings = build(&Raw::default(), "catalog = \"/srv/tools.json\"").unwrap();
    assert_eq!(settings.catalog.unwrap(), PathBuf::from("/srv/tools.json"));
}

#[test]
fn listen_takes_a_host_name() {
    let settings = build(&flags(&["--listen", "localhost:8080"]), "").unwrap();
    assert!(settings.server.listen.ip().is_loopback());
    assert_eq!(settings.server.listen.port(), 8080);
    let error = build(&flags(&["--listen", "localhost"]), "").unwrap_err();
    assert_eq!(error.key, "listen");
}

#[test]
fn oauth_keys_from_the_file_and_flags_build_one_resource_server() {
    let toml = r#"
        oauth_issuer = "https://auth.example"
        oauth_resource = "https://mcp.example/mcp"
        oauth_jwks_url = "https://auth.example/jwks.json"
        oauth_scopes_required = ["mcp"]
        oauth_tool_scopes = { send_message = ["messages:send"] }
        oauth_subject_header = "X-Auth-Subject"
        "#;
    let args = flags(&["--oauth-tool-scopes", "echo=tools:echo extra; ping="]);
    let oauth = build(&args, toml).unwrap().oauth.unwrap();
    assert_eq!(
        oauth.jwks,
        JwksSource::Url("https://auth.example/jwks.json".into())
    );
    assert_eq!(oauth.jwks_refresh, Duration::from_secs(300));
    assert_eq!(oauth.scopes_required, ["mcp"]);
    // The flag's table wins over the file's.
    assert_eq!(
        oauth.tool_scopes,
        BTreeMap::from([
            (
                "echo".to_owned(),
                vec!["tools:echo".to_owned(), "extra".to_owned()]
            ),
            ("ping".to_owned(), vec![]),
        ])
    );
    assert_eq!(oauth.subject_header.as_deref(), Some("X-Auth-Subject"));
    assert!(!oauth.forward_authorization);
}

#[test]
fn a_wrong_oauth_setting_names_its_key() {
    let base = [
        "--oauth-issuer",
        "https://auth.example",
        "--oauth-resource",
        "https://mcp.example/mcp",
        "--oauth-jwks-file",
        "jwks.json",
    ];
    let with = |extra: &[&str]| flags(&[&base[..], extra].concat());
    let mut no_resource = with(&[]);
    no_resource.oauth_resource = None;
    let mut no_jwks = with(&[]);
    no_jwks.oauth_jwks_file = None;
    let mut ftp = with(&["--oauth-jwks-url", "ftp://auth.example/jwks"]);
    ftp.oauth_jwks_file = None;
    let mut no_host = with(&[]);
    no_host.oauth_issuer = Some("https://".into());
    for (args, key) in [
        (no_resource, "oauth_resource"),
        (no_jwks, "oauth_jwks_file"),
        (ftp, "oauth_jwks_url"),
        (no_host, "oauth_issuer"),
        (
            with(&["--oauth-scopes-header", "Content-Length"]),
            "oauth_scopes_header",
        ),
        (
            with(&["--oauth-subject-header", "X_Auth_Subject"]),
            "oauth_subject_header",
        ),
        (
            with(&["--oauth-jwks-refresh-secs", "0"]),
            "oauth_jwks_refresh_secs",
        ),
    ] {
        let error = build(&args, "").unwrap_err();
        assert_eq!(error.key, key, "{error}");
    }
    let error = try_flags(&[&base[..], &["--oauth-tool-scopes", "echo"]].concat()).unwrap_err();
    assert!(error.to_string().contains("--oauth-tool-scopes"), "{error}");
}

#[test]
fn a_session_key_is_hex_or_base64_of_32_bytes_and_a_wrong_one_names_its_key() {
    let settings = |key: &str| build(&flags(&["--session-key", key]), "");
    let hex = "ab".repeat(32);
    assert!(settings(&hex).unwrap().session_key.is_some());
    let from_file = build(&Raw::default(), &format!("session_key = \"{hex}\"")).unwrap();
    assert_eq!(from_file.session_key, settings(&hex).unwrap().session_key);
    for bad in ["ab".repeat(31), "secret".to_owned()] {
        let error = settings(&bad).unwrap_err();
        assert_eq!(error.key, "session_key", "{error}");
        // The key is never repeated back.
        assert!(!error.to_string().contains(&bad), "{error}");
    }
    assert!(build(&Raw::default(), "").unwrap().session_key.is_none());
}

#[test]
fn the_example_file_names_every_key() {
    let text = std::fs::read_to_string(example_path()).unwrap();
    // Its commented keys, set, are keys too.
    let all: String = text
        .lines()
        .map(|line| match line.strip_prefix("# ") {
            Some(rest)
                if rest.split_once(" = ").is_some_and(|(key, _)| {
                    key.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                }) =>
            {
                rest
            }
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut settings: Raw = toml::from_str(&all).unwrap();
    // The one key that is no key of the file.
    settings.config = Some(example_path());
    let shown = format!("{settings:?}");
    assert!(!shown.contains("None"), "a key is missing: {shown}");
}

#[test]
fn an_https_upstream_takes_its_ca_file_and_a_bad_one_names_the_key() {
    let key = rcgen::KeyPair::generate().unwrap();
    let ca = rcgen::CertificateParams::new(vec!["ca.test".to_owned()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let pem = write_file("ca.pem", &ca.pem());
    let https = ["--upstream", "https://127.0.0.1:9/mcp"];
    let args = flags(&[&https[..], &["--upstream-ca-file", pem.to_str().unwrap()]].concat());
    let upstream = build(&args, "").unwrap().server.upstream.unwrap();
    let tls = upstream.tls.as_ref().unwrap();
    assert_eq!(tls.ca.as_ref().map(|c| c.len()), Some(1));
    // Without the file: Mozilla's roots.
    let upstream = build(&flags(&https), "").unwrap().server.upstream.unwrap();
    assert!(upstream.tls.as_ref().unwrap().ca.is_none());

    let empty = write_file("empty.pem", "");
    let not_pem = write_file("key.pem", &key.serialize_pem());
    let missing = empty.with_file_name("missing.pem");
    for (upstream, file) in [
        ("https://127.0.0.1:9/mcp", &empty),
        ("https://127.0.0.1:9/mcp", &not_pem),
        ("https://127.0.0.1:9/mcp", &missing),
        ("http://127.0.0.1:9/mcp", &pem),
    ] {
        let args = [
            "--upstream",
            upstream,
            "--upstream-ca-file",
            file.to_str().unwrap(),
        ];
        let error = build(&flags(&args), "").unwrap_err();
        assert_eq!(error.key, "upstream_ca_file", "{error}");
    }
}

#[test]
fn tls_cert_and_tls_key_go_together_and_a_bad_one_names_its_key() {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let cert_pem = write_file("gw.crt", &cert.pem());
    let key_pem = write_file("gw.key", &key.serialize_pem());
    let (c, k) = (cert_pem.to_str().unwrap(), key_pem.to_str().unwrap());
    let settings = build(&flags(&["--tls-cert", c, "--tls-key", k]), "").unwrap();
    assert!(settings.server.tls.is_some());
    // Relative paths in the file are read from its directory.
    let dir = key_pem.parent().unwrap().to_owned();
    std::fs::copy(&cert_pem, dir.join("gw2.crt")).unwrap();
    let text = "tls_cert = \"gw2.crt\"\ntls_key = \"gw.key\"";
    let mut args = flags(&[]);
    args.config = Some(dir.join("c.toml"));
    std::fs::write(dir.join("c.toml"), text).unwrap();
    assert!(build(&args, "").unwrap().server.tls.is_some());

    let other = rcgen::KeyPair::generate().unwrap().serialize_pem();
    let other = write_file("other.key", &other);
    let missing = cert_pem.with_file_name("missing.crt");
    for (args, key) in [
        (vec!["--tls-cert", c], "tls_key"),
        (vec!["--tls-key", k], "tls_cert"),
        (vec!["--tls-cert", k, "--tls-key", k], "tls_cert"),
        (
            vec!["--tls-cert", missing.to_str().unwrap(), "--tls-key", k],
            "tls_cert",
        ),
        (vec!["--tls-cert", c, "--tls-key", c], "tls_key"),
        (
            vec!["--tls-cert", c, "--tls-key", other.to_str().unwrap()],
            "tls_key",
        ),
    ] {
        let error = build(&flags(&args), "").unwrap_err();
        assert_eq!(error.key, key, "{args:?}: {error}");
    }
}

#[test]
fn route_tables_make_one_route_each_with_the_top_level_keys_as_defaults() {
    let text = r#"
        body_limit = 2048
        upstream_first_byte_timeout_ms = 700
        allowed_origins = ["https://app.example"]

        [[route]]
        path = "/github"
        upstream = "http://127.0.0.1:9001/mcp"
        catalog = "github.json"
        body_limit = 65536

        [[route]]
        path = "/files"
        upstream = "http://127.0.0.1:9002/"
        upstream_first_byte_timeout_ms = 900
        allowed_origins = []
        "#;
    let settings = build(&Raw::default(), text).unwrap();
    assert!(settings.labelled);
    let paths: Vec<&str> = settings.routes.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        ["/github", "/files"],
        "no shorthand route without its keys"
    );
    let (github, files) = (&settings.routes[0], &settings.routes[1]);
    assert_eq!(github.gate.body_limit, 65536);
    assert_eq!(files.gate.body_limit, 2048);
    // The server frames up to the largest; each gate holds its own.
    assert_eq!(settings.server.body_limit, 65536);
    let catalog = github.catalog.as_ref().unwrap();
    assert!(catalog.is_absolute() && catalog.ends_with("github.json"));
    assert!(files.catalog.is_none() && files.gate.await_catalog);
    assert!(!github.gate.await_catalog);
    let timeout = |r: &RouteSettings| r.upstream.as_ref().unwrap().first_byte_timeout;
    assert_eq!(timeout(github), Duration::from_millis(700));
    assert_eq!(timeout(files), Duration::from_millis(900));
    assert_eq!(github.allowed_origins, ["https://app.example"]);
    assert!(files.allowed_origins.is_empty());
}

#[test]
fn without_route_tables_the_top_level_keys_make_the_one_unlabelled_route() {
    let settings = build(&flags(&["--upstream", "http://127.0.0.1:9001/mcp"]), "").unwrap();
    assert!(!settings.labelled);
    assert_eq!(settings.routes.len(), 1);
    assert_eq!(settings.routes[0].path, "/mcp");
    assert_eq!(settings.routes[0].upstream, settings.server.upstream);
    // Beside tables, the shorthand's keys make a route of their own, first.
    let text = "[[route]]\npath = \"/files\"\nupstream = \"http://127.0.0.1:9002/\"";
    let settings = build(&flags(&["--upstream", "http://127.0.0.1:9001/mcp"]), text).unwrap();
    let paths: Vec<&str> = settings.routes.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["/mcp", "/files"]);
    assert!(settings.labelled);
}

#[test]
fn a_route_that_collides_names_the_key_at_fault() {
    let route = |path: &str| format!("[[route]]\npath = \"{path}\"\n");
    for (args, text, key) in [
        // The shorthand's route and a table on one path.
        (
            flags(&["--upstream", "http://127.0.0.1:9001/mcp"]),
            route("/mcp"),
            "upstream",
        ),
        (
            Raw::default(),
            format!("catalog = \"t.json\"\nendpoint = \"/x\"\n{}", route("/x")),
            "endpoint",
        ),
        (Raw::default(), route("/a") + &route("/a"), "route.path"),
        (Raw::default(), route("/metrics"), "route.path"),
        (Raw::default(), route("/validate"), "route.path"),
        (Raw::default(), route("/healthz"), "route.path"),
        (Raw::default(), route("/.well-known/x"), "route.path"),
        (Raw::default(), route("github"), "route.path"),
        (
            flags(&["--endpoint", "/metrics"]),
            String::new(),
            "endpoint",
        ),
        (
            Raw::default(),
            route("/a") + "upstream = \"https://x.example/\"\n",
            "route.upstream",
        ),
        (
            Raw::default(),
            route("/a") + "upstream_idle_timeout_ms = 0\n",
            "route.upstream_idle_timeout_ms",
        ),
        (
            Raw::default(),
            route("/a") + "body_limit = 0\n",
            "route.body_limit",
        ),
        (Raw::default(), route("/a") + "colour = 1\n", "route"),
    ] {
        let error = build(&args, &text).unwrap_err();
        assert_eq!(error.key, key, "{text}: {error}");
    }
}

#[test]
fn each_route_has_its_own_oauth_resource_and_tool_scopes() {
    let text = r#"
        oauth_issuer = "https://auth.example"
        oauth_jwks_file = "jwks.json"
        oauth_scopes_required = ["mcp"]

        [[route]]
        path = "/github"
        oauth_resource = "https://mcp.example/github"
        oauth_tool_scopes = { create_issue = ["issues:write"] }

        [[route]]
        path = "/files"
        oauth_resource = "https://mcp.example/files"
        "#;
    let settings = build(&Raw::default(), text).unwrap();
    let oauth = |i: usize| settings.routes[i].oauth.clone().unwrap();
    assert_eq!(oauth(0).resource, "https://mcp.example/github");
    assert_eq!(oauth(0).tool_scopes["create_issue"], ["issues:write"]);
    assert_eq!(oauth(1).resource, "https://mcp.example/files");
    assert!(oauth(1).tool_scopes.is_empty());
    assert_eq!(
        oauth(1).scopes_required,
        ["mcp"],
        "the issuer's keys are global"
    );
    let without = text.replace("oauth_resource = \"https://mcp.example/files\"", "");
    let error = build(&Raw::default(), &without).unwrap_err();
    assert_eq!(error.key, "route.oauth_resource", "{error}");
    let no_issuer = "[[route]]\npath = \"/a\"\noauth_resource = \"https://mcp.example/a\"";
    let error = build(&Raw::default(), no_issuer).unwrap_err();
    assert_eq!(error.key, "route.oauth_resource", "{error}");
    let bad_scope = text.replace("\"issues:write\"", "\"two words\"");
    let error = build(&Raw::default(), &bad_scope).unwrap_err();
    assert_eq!(error.key, "route.oauth_tool_scopes", "{error}");
}
