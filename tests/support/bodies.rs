//! Bodies shared by the heap and value-gate tests and the benches.
#![allow(dead_code)]

/// The headers a 2026-07-28 client sends with a `subscriptions/listen`.
pub fn listen_headers() -> Vec<(String, String)> {
    vec![
        ("MCP-Protocol-Version".to_owned(), "2026-07-28".to_owned()),
        ("Mcp-Method".to_owned(), "subscriptions/listen".to_owned()),
    ]
}

/// A `subscriptions/listen` whose `resourceSubscriptions` holds `count`
/// integers where strings belong: 100,000 of them make about 1 MiB.
pub fn wrong_items_body(count: usize) -> Vec<u8> {
    let mut body = String::from(
        r#"{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"resourceSubscriptions":["#,
    );
    for n in 0..count {
        if n > 0 {
            body.push(',');
        }
        body.push_str(&(100_000_000 + n).to_string());
    }
    body.push_str("]}}}");
    body.into_bytes()
}

/// `gate/invalid_small`: a 2026-07-28 `tools/call` whose `arguments` is an
/// array, refused by the protocol schema with one problem (the headers of
/// [`tools_call_body`] go with it).
pub const INVALID_SMALL: &[u8] = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"get_weather","arguments":[1,2]}}"#;

/// A valid 2026-07-28 `tools/call` of exactly `size` bytes, with its
/// headers: past the 516-byte base, the arguments grow by rows of small
/// records (as a real payload does), and a note string pads the rest.
pub fn tools_call_body(size: usize) -> (Vec<(String, String)>, Vec<u8>) {
    let head = r#"{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench-client","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{"sampling":{},"elicitation":{"form":{}}},"progressToken":"p-1"},"name":"get_weather","arguments":{"location":"New York","units":"metric","days":3,"include":["hourly","alerts"],"rows":["#;
    let middle = r#"],"note":""#;
    let tail = r#""}}}"#;
    let mut rows = String::new();
    let mut n = 0;
    loop {
        let row = format!(
            r#"{}{{"id":{n},"name":"row-{n}","ok":true,"score":{n}.5}}"#,
            if n > 0 { "," } else { "" }
        );
        if head.len() + rows.len() + row.len() + middle.len() + tail.len() + 64 > size {
            break;
        }
        rows.push_str(&row);
        n += 1;
    }
    let fixed = head.len() + rows.len() + middle.len() + tail.len();
    assert!(fixed <= size, "{size} is too small");
    let body = format!("{head}{rows}{middle}{}{tail}", "n".repeat(size - fixed));
    assert_eq!(body.len(), size);
    let headers = vec![
        ("MCP-Protocol-Version".to_owned(), "2026-07-28".to_owned()),
        ("Mcp-Method".to_owned(), "tools/call".to_owned()),
        ("Mcp-Name".to_owned(), "get_weather".to_owned()),
    ];
    (headers, body.into_bytes())
}

/// Valid arguments for `search_orders` of `tests/catalog/tools.json`: ten
/// properties, two levels (the value gate's bench case).
pub fn search_orders_arguments() -> serde_json::Value {
    serde_json::json!({
        "marketplaceIds": ["ATVPDKIKX0DER", "A2EUQ1WTGCTBG2"],
        "region": "NA",
        "createdAfter": "2026-01-01T00:00:00Z",
        "createdBefore": "2026-02-01T00:00:00Z",
        "statuses": ["Pending", "Shipped"],
        "buyerEmail": "buyer@example.com",
        "filters": {"minTotal": 10.5, "currency": "USD", "fulfillment": "AFN"},
        "pageSize": 50,
        "nextToken": "abc",
        "includeItems": true
    })
}

/// [`search_orders_arguments`] with the two wrong values
/// `benches/refusal-load.sh` sends over HTTP (`pageSize` a string, a
/// status outside the enum): refused, answered in the tool dialect.
pub fn search_orders_refused_arguments() -> serde_json::Value {
    let mut arguments = search_orders_arguments();
    arguments["pageSize"] = serde_json::json!("fifty");
    arguments["statuses"] = serde_json::json!(["Pending", "Open"]);
    arguments
}

/// A `tools/list` result of the shapes where one branch of an `anyOf`
/// admits a value's type: `tag`, an array of optional strings (as Pydantic
/// writes `Optional`), and `tree`, nodes holding optional child nodes (a
/// recursive `$ref` under an `anyOf`).
pub fn shaped_tools() -> serde_json::Value {
    let node = serde_json::json!({"type": "object", "properties": {"children": {"type": "array",
        "items": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}}}});
    serde_json::json!({"tools": [
        {"name": "tag", "inputSchema": {"type": "object", "properties": {"tags": {"type": "array",
            "items": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}}},
        {"name": "tree", "inputSchema": {"type": "object", "$defs": {"node": node},
            "properties": {"root": {"$ref": "#/$defs/node"}}}},
    ]})
}
