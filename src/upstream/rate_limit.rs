//! The contract's `_meta.rate_limit` from an upstream answer's
//! `RateLimit-*` or `X-RateLimit-*` headers: only what they hold, never a
//! value of the gateway's own.

/// The members, each with the headers it is read from (the first present
/// wins), and whether a number is written as one.
const MEMBERS: [(&str, [&str; 2], bool); 3] = [
    (
        "limit_per_second",
        ["RateLimit-Limit", "X-RateLimit-Limit"],
        true,
    ),
    (
        "remaining",
        ["RateLimit-Remaining", "X-RateLimit-Remaining"],
        true,
    ),
    ("reset_at", ["RateLimit-Reset", "X-RateLimit-Reset"], false),
];

/// The `rate_limit` object for an answer's end-to-end headers (each
/// `Name: value\r\n`), or `None` when none of them is there with a value.
pub fn rate_limit_meta(headers: &[u8]) -> Option<Vec<u8>> {
    let value_of = |name: &str| {
        headers.split(|&b| b == b'\n').find_map(|line| {
            let line = std::str::from_utf8(line).ok()?.trim_end_matches('\r');
            let (field, value) = line.split_once(':')?;
            let value = value.trim();
            (field.trim().eq_ignore_ascii_case(name) && !value.is_empty()).then_some(value)
        })
    };
    let mut object = serde_json::Map::new();
    for (member, names, numeric) in MEMBERS {
        let Some(text) = names.iter().find_map(|name| value_of(name)) else {
            continue;
        };
        let number = text
            .parse::<i64>()
            .map(serde_json::Value::from)
            .ok()
            .or_else(|| {
                text.parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map(serde_json::Value::Number)
            });
        let value = match number {
            Some(number) if numeric => number,
            _ => serde_json::Value::from(text),
        };
        object.insert(member.to_owned(), value);
    }
    (!object.is_empty()).then(|| serde_json::Value::Object(object).to_string().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn meta(headers: &str) -> Option<Value> {
        rate_limit_meta(headers.as_bytes()).map(|b| serde_json::from_slice(&b).unwrap())
    }

    #[test]
    fn only_the_headers_present_are_told_numbers_as_numbers() {
        assert_eq!(
            meta(
                "Content-Type: application/json\r\nx-ratelimit-limit: 0.0167\r\nX-RateLimit-Remaining: 0\r\nX-RateLimit-Reset: 2026-04-25T17:42:33Z\r\n"
            ),
            Some(
                json!({"limit_per_second": 0.0167, "remaining": 0, "reset_at": "2026-04-25T17:42:33Z"})
            )
        );
        assert_eq!(
            meta("RateLimit-Limit: 100, 100;w=60\r\n"),
            Some(json!({"limit_per_second": "100, 100;w=60"}))
        );
        assert_eq!(
            meta("RateLimit-Reset: 30\r\n"),
            Some(json!({"reset_at": "30"}))
        );
        assert_eq!(
            meta("Content-Type: application/json\r\nRateLimit-Remaining:\r\n"),
            None
        );
    }
}
