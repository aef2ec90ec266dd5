//! Structured `tools/call` messages through `Gate::check`: ids of every
//! kind, names, `_meta` with right and wrong protocol fields, nested
//! arguments, padding up to and past the body limit, duplicate keys, and
//! headers that agree with the body or not; calls of the test catalog's
//! tools with arguments built from a valid call and then broken, and their
//! `Mcp-Param-*` headers. Same assertions as `parse`, plus the tool
//! dialect's.
#![no_main]

mod common;

use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};

const NAMES: [&str; 6] = ["get_weather", "echo", "", "a/b~c", "naïve", "\u{0}\n"];
const VERSIONS: [&str; 4] = ["2026-07-28", "2025-11-25", "1900-01-01", ""];

#[derive(Debug)]
struct Call {
    message: Vec<u8>,
    headers: Vec<(&'static str, Vec<u8>)>,
}

fn text(u: &mut Unstructured<'_>) -> Result<String> {
    Ok(match u.int_in_range(0..=3)? {
        0 => u.choose(&NAMES)?.to_string(),
        1 => String::arbitrary(u)?,
        // Long texts: past the echo bound.
        2 => "x".repeat(u.int_in_range(100..=300)?),
        _ => "é".repeat(u.int_in_range(60..=70)?),
    })
}

fn value(u: &mut Unstructured<'_>, depth: usize) -> Result<Value> {
    let leaf = depth == 0 || u.ratio(1, 3)?;
    if leaf {
        return Ok(match u.int_in_range(0..=6)? {
            0 => Value::Null,
            1 => Value::Bool(bool::arbitrary(u)?),
            2 => json!(i64::arbitrary(u)?),
            3 => json!(u64::arbitrary(u)?),
            4 => {
                serde_json::Number::from_f64(f64::arbitrary(u)?).map_or(Value::Null, Value::Number)
            }
            _ => Value::String(text(u)?),
        });
    }
    let len = u.int_in_range(0..=4)?;
    if bool::arbitrary(u)? {
        (0..len)
            .map(|_| value(u, depth - 1))
            .collect::<Result<_>>()
            .map(Value::Array)
    } else {
        let mut map = Map::new();
        for _ in 0..len {
            map.insert(text(u)?, value(u, depth - 1)?);
        }
        Ok(Value::Object(map))
    }
}

fn id(u: &mut Unstructured<'_>) -> Result<Option<Value>> {
    Ok(match u.int_in_range(0..=6)? {
        0 => None,
        1 => Some(Value::Null),
        2 => Some(json!(i64::arbitrary(u)?)),
        3 => Some(json!(u64::arbitrary(u)?)),
        4 => Some(json!(1.5)),
        5 => Some(Value::String(text(u)?)),
        _ => Some(json!([1])),
    })
}

fn meta(u: &mut Unstructured<'_>) -> Result<Option<Value>> {
    if u.ratio(1, 8)? {
        return Ok(None);
    }
    let mut meta = Map::new();
    if !u.ratio(1, 8)? {
        let version = if u.ratio(1, 8)? {
            value(u, 1)?
        } else {
            Value::from(*u.choose(&VERSIONS)?)
        };
        meta.insert("io.modelcontextprotocol/protocolVersion".into(), version);
    }
    if !u.ratio(1, 8)? {
        let capabilities = if u.ratio(1, 4)? {
            value(u, 3)?
        } else {
            json!({"sampling": {}, "elicitation": {"form": {}}})
        };
        meta.insert(
            "io.modelcontextprotocol/clientCapabilities".into(),
            capabilities,
        );
    }
    if bool::arbitrary(u)? {
        meta.insert(
            "io.modelcontextprotocol/clientInfo".into(),
            json!({"name": text(u)?, "version": "1.0.0"}),
        );
    }
    if bool::arbitrary(u)? {
        meta.insert("progressToken".into(), value(u, 1)?);
    }
    if u.ratio(1, 4)? {
        meta.insert(text(u)?, value(u, 2)?);
    }
    Ok(Some(Value::Object(meta)))
}

impl<'a> Arbitrary<'a> for Call {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let mut message = Map::new();
        if !u.ratio(1, 16)? {
            message.insert("jsonrpc".into(), json!("2.0"));
        }
        let id = id(u)?;
        if let Some(id) = &id {
            message.insert("id".into(), id.clone());
        }
        let method = if u.ratio(1, 16)? {
            text(u)?
        } else {
            "tools/call".to_owned()
        };
        message.insert("method".into(), json!(method));
        let name = match u.int_in_range(0..=15)? {
            0 => value(u, 1)?,
            1..=5 => Value::String(text(u)?),
            _ => Value::String(u.choose(&common::TOOLS)?.to_string()),
        };
        let mut params = Map::new();
        if let Some(meta) = meta(u)? {
            params.insert("_meta".into(), meta);
        }
        params.insert("name".into(), name.clone());
        let tool = name.as_str().and_then(valid_arguments);
        if !u.ratio(1, 8)? {
            let arguments = match tool {
                Some(valid) if !u.ratio(1, 4)? => broken(u, valid)?,
                _ => {
                    let depth = u.int_in_range(0..=8)?;
                    value(u, depth)?
                }
            };
            params.insert("arguments".into(), arguments);
        }
        // Padding: up to a little past the body limit.
        let pad = match u.int_in_range(0..=7)? {
            0 => common::BODY_LIMIT - 200 + u.int_in_range(0..=400)?,
            1 => u.int_in_range(0..=4096)?,
            _ => 0,
        };
        if pad > 0 {
            params.insert("pad".into(), json!("p".repeat(pad)));
        }
        message.insert("params".into(), Value::Object(params));
        let mut bytes = serde_json::to_vec(&Value::Object(message)).unwrap();
        if u.ratio(1, 16)? {
            // A duplicate key: serde_json cannot write one, so it is
            // spliced in after the opening brace.
            bytes.splice(1..1, br#""method":"tools/list","#.iter().copied());
        }

        let mut headers = Vec::new();
        let modern = !u.ratio(1, 4)?;
        if modern {
            headers.push(("MCP-Protocol-Version", b"2026-07-28".to_vec()));
            if !u.ratio(1, 16)? {
                let sent = if u.ratio(1, 16)? {
                    text(u)?
                } else {
                    method.clone()
                };
                headers.push(("Mcp-Method", common::header_value(&sent)));
            }
            if let Some(name) = name.as_str()
                && !u.ratio(1, 16)?
            {
                let sent = if u.ratio(1, 16)? {
                    text(u)?
                } else {
                    name.to_owned()
                };
                let value = if u.ratio(1, 16)? {
                    // Sent raw, whatever bytes it holds.
                    sent.into_bytes()
                } else {
                    common::header_value(&sent)
                };
                headers.push(("Mcp-Name", value));
            }
        } else if bool::arbitrary(u)? {
            headers.push(("MCP-Protocol-Version", b"2025-11-25".to_vec()));
        }
        if modern {
            // The catalog's `x-mcp-header` parameters: mirrored from the
            // arguments, or not, or wrongly.
            let arguments = params_arguments(&bytes);
            for (header, path) in PARAM_HEADERS {
                let argument = path
                    .iter()
                    .try_fold(&arguments, |v, key| v.get(key))
                    .filter(|v| !v.is_null());
                let sent = match (argument, u.int_in_range(0..=7)?) {
                    (_, 0) => continue,
                    (_, 1) => Some(text(u)?),
                    (Some(Value::String(s)), _) => Some(s.clone()),
                    (Some(other), _) => Some(other.to_string()),
                    (None, _) => None,
                };
                if let Some(sent) = sent {
                    headers.push((header, common::header_value(&sent)));
                }
            }
        }
        Ok(Call {
            message: bytes,
            headers,
        })
    }
}

/// The test catalog's annotated parameters: header and argument path.
const PARAM_HEADERS: [(&str, &[&str]); 4] = [
    ("Mcp-Param-Region", &["region"]),
    ("Mcp-Param-Account-Id", &["accountId"]),
    ("Mcp-Param-Verbose", &["verbose"]),
    ("Mcp-Param-Team", &["owner", "team"]),
];

fn params_arguments(bytes: &[u8]) -> Value {
    serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|m| m.get("params")?.get("arguments").cloned())
        .unwrap_or(Value::Null)
}

/// A valid call's arguments for a tool of the test catalog.
fn valid_arguments(tool: &str) -> Option<Value> {
    Some(match tool {
        "search_orders" => json!({"marketplaceIds": ["ATVPDKIKX0DER"], "region": "NA",
            "createdAfter": "2026-01-01T00:00:00Z", "statuses": ["Pending"],
            "buyerEmail": "a@example.com", "filters": {"currency": "USD", "minTotal": 1},
            "pageSize": 10, "includeItems": false}),
        "create_shipment" => json!({"orderId": "123-1234567-1234567",
            "lines": [{"sku": "A", "quantity": 1, "packSize": 6}],
            "shipTo": {"name": "A", "line1": "B", "city": "C", "country": "DE"},
            "carrier": {"type": "ups", "service": "air"}, "insured": true, "shipDate": "2026-12-01"}),
        "get_account" => {
            json!({"accountId": 42, "verbose": true, "owner": {"team": "ops"}, "fields": ["a"]})
        }
        "send_message" => {
            json!({"to": "a@example.com", "subject": "s", "text": "t", "priority": 1})
        }
        "echo" => json!({"any": "thing"}),
        _ => return None,
    })
}

/// `valid` with some of its members replaced, removed, renamed or added.
fn broken(u: &mut Unstructured<'_>, mut valid: Value) -> Result<Value> {
    let edits = u.int_in_range(0..=4)?;
    for _ in 0..edits {
        let Some(object) = valid.as_object_mut() else {
            break;
        };
        let keys: Vec<String> = object.keys().cloned().collect();
        match u.int_in_range(0..=3)? {
            0 if !keys.is_empty() => {
                let key = u.choose(&keys)?.clone();
                let depth = u.int_in_range(0..=3)?;
                object.insert(key, value(u, depth)?);
            }
            1 if !keys.is_empty() => {
                let key = u.choose(&keys)?.clone();
                object.remove(&key);
            }
            2 if !keys.is_empty() => {
                // A near miss: the key with one letter changed or cased.
                let key = u.choose(&keys)?.clone();
                let moved = object.remove(&key).unwrap_or(Value::Null);
                let renamed = if bool::arbitrary(u)? {
                    key.to_uppercase()
                } else {
                    format!("{key}x")
                };
                object.insert(renamed, moved);
            }
            _ => {
                let key = text(u)?;
                let depth = u.int_in_range(0..=3)?;
                object.insert(key, value(u, depth)?);
            }
        }
    }
    Ok(valid)
}

fuzz_target!(|call: Call| {
    common::check(call.headers.as_slice(), &call.message);
});
