//! Benches named `area/case/operation`: compiling the protocol roots and
//! validating a 2026-07-28 `tools/call` against its root with serde_json
//! input (the baseline later stages are measured against).

use criterion::{Criterion, black_box, criterion_group, criterion_main};
use mcpgate::unstable::protocol::{RootKind, SchemaDocument, compile_root, root_keys};

fn tools_call_body() -> Vec<u8> {
    br#"{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}},"name":"get_weather","arguments":{"location":"New York","units":"metric"}}}"#.to_vec()
}

fn protocol(c: &mut Criterion) {
    let document = SchemaDocument::Mcp2026_07_28.parse();
    c.bench_function("protocol/all_roots_2026/compile", |b| {
        b.iter(|| {
            for key in root_keys(&document) {
                black_box(compile_root(&document, &key).unwrap());
            }
        })
    });
    let root = compile_root(&document, &RootKind::Request("tools/call").key()).unwrap();
    let body = tools_call_body();
    c.bench_function("protocol/tools_call_valid/serde_parse_and_is_valid", |b| {
        b.iter(|| {
            let value: serde_json::Value = serde_json::from_slice(black_box(&body)).unwrap();
            black_box(root.is_valid(&value))
        })
    });
}

criterion_group!(benches, protocol);
criterion_main!(benches);
