//! Structured `tools/call` messages through `Gate::check`: ids of every
//! kind, names, `_meta` with right and wrong protocol fields, nested
//! arguments, padding up to and past the body limit, duplicate keys, and
//! headers that agree with the body or not. Same assertions as `parse`.
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
        let name = if u.ratio(1, 16)? {
            value(u, 1)?
        } else {
            Value::String(text(u)?)
        };
        let mut params = Map::new();
        if let Some(meta) = meta(u)? {
            params.insert("_meta".into(), meta);
        }
        params.insert("name".into(), name.clone());
        if !u.ratio(1, 8)? {
            let depth = u.int_in_range(0..=8)?;
            params.insert("arguments".into(), value(u, depth)?);
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
        Ok(Call {
            message: bytes,
            headers,
        })
    }
}

fuzz_target!(|call: Call| {
    common::check(call.headers.as_slice(), &call.message);
});
