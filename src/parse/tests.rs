use serde_json::{Value, json};

use super::*;

fn parse(body: &[u8]) -> Result<Value, ParseError> {
    let mut parser = Parser::new();
    parser
        .parse(body, ParseLimits::default())
        .map(|document| document.root().to_value())
}

fn parse_with_depth(body: &[u8], max_depth: usize) -> Result<Value, ParseError> {
    let mut parser = Parser::new();
    parser
        .parse(body, ParseLimits { max_depth })
        .map(|document| document.root().to_value())
}

#[test]
fn a_request_parses_to_its_value() {
    let body = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2.5,-3,true,null,"s"]}}}"#;
    let expected: Value = serde_json::from_slice(body).unwrap();
    assert_eq!(parse(body), Ok(expected));
}

#[test]
fn scalars_parse_at_the_top_level() {
    assert_eq!(parse(b"1"), Ok(json!(1)));
    assert_eq!(parse(b" \"s\" "), Ok(json!("s")));
    assert_eq!(parse(b"null"), Ok(Value::Null));
    assert_eq!(parse(b"true"), Ok(json!(true)));
    assert_eq!(parse(b"-2.5e1"), Ok(json!(-25.0)));
}

#[test]
fn duplicate_keys_are_refused_at_any_depth() {
    assert_eq!(parse(br#"{"a":1,"a":2}"#), Err(ParseError::DuplicateKey));
    assert_eq!(
        parse(br#"{"x":[{"y":{"b":1,"c":2,"b":3}}]}"#),
        Err(ParseError::DuplicateKey)
    );
    assert_eq!(
        parse(br#"[1,{"k":{}},{"k":{"z":0,"z":[]}}]"#),
        Err(ParseError::DuplicateKey)
    );
    // The same key in different objects is fine.
    assert!(parse(br#"{"a":{"a":1},"b":{"a":2}}"#).is_ok());
}

#[test]
fn duplicate_keys_are_refused_in_big_objects() {
    for size in [9, 10, 33, 500] {
        let members: Vec<String> = (0..size).map(|i| format!("\"k{i}\":{i}")).collect();
        let unique = format!("{{{}}}", members.join(","));
        assert!(parse(unique.as_bytes()).is_ok(), "{size} unique keys");
        for duplicate in [0, size / 2, size - 1] {
            let body = format!("{{{},\"k{duplicate}\":null}}", members.join(","));
            assert_eq!(
                parse(body.as_bytes()),
                Err(ParseError::DuplicateKey),
                "{size} keys, k{duplicate} twice"
            );
        }
    }
}

#[test]
fn escaped_duplicate_keys_are_refused() {
    assert_eq!(
        parse(br#"{"a":1,"\u0061":2}"#),
        Err(ParseError::DuplicateKey)
    );
    assert_eq!(
        parse(r#"{"\u00e9":1,"\u00c3\u00a9":2,"é":3}"#.as_bytes()),
        Err(ParseError::DuplicateKey)
    );
    assert_eq!(
        parse(br#"{"a\/b":1,"a/b":2}"#),
        Err(ParseError::DuplicateKey)
    );
    // "\u00c3\u00a9" is two characters, not "é": distinct from it.
    assert!(parse(br#"{"\u00c3\u00a9":2,"x":3}"#).is_ok());
}

#[test]
fn trailing_bytes_are_malformed() {
    for body in [
        &b"{} x"[..],
        b"{}{}",
        b"[1] ]",
        b"1 2",
        b"\"a\" \"b\"",
        b"{\"a\":1},",
        b"null null",
    ] {
        assert_eq!(parse(body), Err(ParseError::Malformed), "{body:?}");
    }
    assert!(parse(b"{} \n\t ").is_ok());
}

#[test]
fn empty_and_blank_bodies_are_malformed() {
    assert_eq!(parse(b""), Err(ParseError::Malformed));
    assert_eq!(parse(b"   \n"), Err(ParseError::Malformed));
}

#[test]
fn syntax_errors_are_malformed() {
    for body in [
        &b"{"[..],
        b"[1,]",
        b"{\"a\"}",
        b"{\"a\":}",
        b"{a:1}",
        b"'a'",
        b"[01]",
        b"[1.]",
        b"[.5]",
        b"[+1]",
        b"nul",
        b"[NaN]",
        b"[\"a\nb\"]",
        b"\"\\x\"",
        b"[\"unterminated]",
    ] {
        assert_eq!(parse(body), Err(ParseError::Malformed), "{body:?}");
    }
}

#[test]
fn depth_over_the_limit_is_too_deep() {
    let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    assert!(parse(nested(64).as_bytes()).is_ok());
    assert_eq!(
        parse(nested(65).as_bytes()),
        Err(ParseError::TooDeep { limit: 64 })
    );
    assert!(parse_with_depth(nested(3).as_bytes(), 3).is_ok());
    assert_eq!(
        parse_with_depth(nested(4).as_bytes(), 3),
        Err(ParseError::TooDeep { limit: 3 })
    );
    assert_eq!(
        parse_with_depth(br#"{"a":{"b":[{}]}}"#, 3),
        Err(ParseError::TooDeep { limit: 3 })
    );
    assert!(parse_with_depth(br#"{"a":{"b":[1]}}"#, 3).is_ok());
    assert_eq!(parse_with_depth(b"7", 0), Ok(json!(7)));
    assert_eq!(
        parse_with_depth(b"[]", 0),
        Err(ParseError::TooDeep { limit: 0 })
    );
}

#[test]
fn a_parser_follows_a_changed_depth_limit() {
    let mut parser = Parser::new();
    let body = b"[[[[1]]]]";
    assert!(parser.parse(body, ParseLimits { max_depth: 4 }).is_ok());
    assert_eq!(
        parser.parse(body, ParseLimits { max_depth: 3 }).err(),
        Some(ParseError::TooDeep { limit: 3 })
    );
    assert!(parser.parse(body, ParseLimits::default()).is_ok());
}

#[test]
fn hundred_thousand_open_brackets_are_refused_without_overflow() {
    let started = std::time::Instant::now();
    let body = "[".repeat(100_000);
    assert_eq!(
        parse(body.as_bytes()),
        Err(ParseError::TooDeep { limit: 64 })
    );
    let balanced = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_eq!(
        parse(balanced.as_bytes()),
        Err(ParseError::TooDeep { limit: 64 })
    );
    let objects = "{\"a\":".repeat(100_000);
    assert_eq!(
        parse(objects.as_bytes()),
        Err(ParseError::TooDeep { limit: 64 })
    );
    // Even with the limit lifted, nothing recurses: the tape and the value
    // are built with explicit stacks.
    let mut parser = Parser::new();
    let document = parser
        .parse(balanced.as_bytes(), ParseLimits { max_depth: 200_000 })
        .expect("deep but well-formed");
    assert_eq!(document.node_count(), 100_000);
    let mut node = document.root();
    let mut depth = 0;
    while let Some(inner) = node.elements().next() {
        node = inner;
        depth += 1;
    }
    assert_eq!(depth, 99_999);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn invalid_utf8_is_malformed() {
    for body in [
        &b"\"\xff\""[..],
        b"{\"a\xc3\":1}",
        b"[\"\xed\xa0\x80\"]",   // an encoded surrogate
        b"\"\xf4\x90\x80\x80\"", // beyond U+10FFFF
        b"[1] \xff",
        b"\xef\xbb\xbf{}", // a byte order mark is not JSON
    ] {
        assert_eq!(parse(body), Err(ParseError::Malformed), "{body:?}");
    }
    assert_eq!(parse("\"é🦀\"".as_bytes()), Ok(json!("é🦀")));
}

#[test]
fn lone_surrogate_escape_is_malformed() {
    for body in [
        &br#""\ud800""#[..],
        br#""\ud800x""#,
        br#""\ud800\u0041""#,
        br#""\udc00""#,
        br#"{"\udfff":1}"#,
        br#""\ud800\ud800""#,
    ] {
        assert_eq!(parse(body), Err(ParseError::Malformed), "{body:?}");
    }
    assert_eq!(parse(br#""\ud83e\udd80""#), Ok(json!("🦀")));
}

#[test]
fn big_integers_parse_as_numbers() {
    let digits = "9".repeat(300);
    let mut parser = Parser::new();
    let document = parser
        .parse(digits.as_bytes(), ParseLimits::default())
        .expect("a 300-digit integer is a number");
    let root = document.root();
    assert_eq!(root.kind(), NodeKind::Number);
    assert_eq!(root.as_u64(), None);
    assert_eq!(root.as_i64(), None);
    assert_eq!(root.as_f64(), Some(1e300));
    assert!(root.is_integer());
    // As serde_json reads it.
    let serde: Value = serde_json::from_str(&digits).unwrap();
    assert_eq!(root.to_value(), serde);

    let negative = format!("[-{digits}, 18446744073709551616, 18446744073709551615]");
    let document = parser
        .parse(negative.as_bytes(), ParseLimits::default())
        .unwrap();
    let items: Vec<TapeNode<'_>> = document.root().elements().collect();
    assert_eq!(items[0].as_f64(), Some(-1e300));
    assert!(items[0].is_integer());
    assert_eq!(items[1].as_u64(), None);
    assert_eq!(items[1].as_f64(), Some(18446744073709551616.0));
    assert_eq!(items[2].as_u64(), Some(u64::MAX));
    assert_eq!(items[2].as_i64(), None);
}

#[test]
fn numbers_beyond_f64_are_malformed() {
    assert_eq!(parse(b"1e400"), Err(ParseError::Malformed));
    assert_eq!(parse(b"[-1e400]"), Err(ParseError::Malformed));
    let digits = "9".repeat(400);
    assert_eq!(parse(digits.as_bytes()), Err(ParseError::Malformed));
    // serde_json agrees.
    assert!(serde_json::from_str::<Value>("1e400").is_err());
    assert!(serde_json::from_str::<Value>(&digits).is_err());
}

#[test]
fn numbers_answer_like_serde_json() {
    let body = b"[0, 1, -1, 1.0, 1e2, 2.5, 9223372036854775807, 9223372036854775808, -9223372036854775808, 0.1]";
    let serde: Value = serde_json::from_slice(body).unwrap();
    let mut parser = Parser::new();
    let document = parser.parse(body, ParseLimits::default()).unwrap();
    for (node, value) in document.root().elements().zip(serde.as_array().unwrap()) {
        assert_eq!(node.as_u64(), value.as_u64(), "{value}");
        assert_eq!(node.as_i64(), value.as_i64(), "{value}");
        assert_eq!(node.as_f64(), value.as_f64(), "{value}");
    }
    let integers: Vec<bool> = document.root().elements().map(|n| n.is_integer()).collect();
    assert_eq!(
        integers,
        [true, true, true, true, true, false, true, true, true, false]
    );
}

#[test]
fn accessors_read_the_tape() {
    let mut parser = Parser::new();
    let body = br#"{"s":"h\u00e9","n":3,"b":false,"z":null,"a":[1,[2,3],{"x":4}],"o":{"p":{"q":[]}},"last":1}"#;
    let document = parser.parse(body, ParseLimits::default()).unwrap();
    let root = document.root();
    assert_eq!(root.kind(), NodeKind::Object);
    assert_eq!(root.len(), 7);
    assert_eq!(root.get("s").and_then(|n| n.as_str()), Some("hé"));
    assert_eq!(root.get("n").and_then(|n| n.as_u64()), Some(3));
    assert_eq!(root.get("b").and_then(|n| n.as_bool()), Some(false));
    assert_eq!(root.get("z").map(|n| n.kind()), Some(NodeKind::Null));
    // Lookups skip whole subtrees.
    assert_eq!(root.get("last").and_then(|n| n.as_u64()), Some(1));
    assert!(root.get("missing").is_none());
    let array = root.get("a").unwrap();
    assert_eq!(array.len(), 3);
    assert!(array.get("x").is_none());
    assert_eq!(array.members().count(), 0);
    let kinds: Vec<NodeKind> = array.elements().map(|n| n.kind()).collect();
    assert_eq!(kinds, [NodeKind::Number, NodeKind::Array, NodeKind::Object]);
    let names: Vec<&str> = root.members().map(|(name, _)| name).collect();
    assert_eq!(names, ["s", "n", "b", "z", "a", "o", "last"]);
    assert_eq!(root.get("n").unwrap().len(), 0);
    assert_eq!(root.get("n").unwrap().elements().count(), 0);
    assert_eq!(
        root.get("o").and_then(|o| o.get("p")).map(|p| p.to_value()),
        Some(json!({"q": []}))
    );
    let expected: Value = serde_json::from_slice(body).unwrap();
    assert_eq!(root.to_value(), expected);
    // key nodes count: 7 keys + 7 values + 1 root + nested ones.
    assert!(document.node_count() > 15);
}

#[test]
fn parser_reuse_gives_identical_results() {
    let bodies: [&[u8]; 6] = [
        br#"{"a":[1,2,{"b":"c\n"}],"d":"\u00e9"}"#,
        b"[]",
        br#"{"a":1,"a":2}"#,
        br#"{"k":"a much longer string than before, with escapes \" \\ \/ and more"}"#,
        b"{",
        br#"{"a":[1,2,{"b":"c\n"}],"d":"\u00e9"}"#,
    ];
    let mut reused = Parser::new();
    for _ in 0..3 {
        for body in bodies {
            let fresh = parse(body);
            let again = reused
                .parse(body, ParseLimits::default())
                .map(|document| document.root().to_value());
            assert_eq!(fresh, again, "{body:?}");
        }
    }
}

#[test]
fn the_original_body_is_not_modified() {
    let body = br#"{"escaped":"\u00e9\n\t\"\\","arr":[1,"\ud83e\udd80"]}"#.to_vec();
    let copy = body.clone();
    let mut parser = Parser::new();
    let document = parser.parse(&body, ParseLimits::default()).unwrap();
    assert_eq!(
        document.root().get("escaped").and_then(|n| n.as_str()),
        Some("é\n\t\"\\")
    );
    assert_eq!(body, copy);
}

#[test]
fn equality_follows_json_schema() {
    let mut parser = Parser::new();
    let document = parser
        .parse(
            br#"[1, 1.0, {"a":[1,{"b":2}],"c":null}, {"c":null,"a":[1.0,{"b":2.0}]}, "x", 2]"#,
            ParseLimits::default(),
        )
        .unwrap();
    let items: Vec<TapeNode<'_>> = document.root().elements().collect();
    assert!(items[0].equals_node(&items[1]));
    assert!(items[2].equals_node(&items[3]));
    assert!(!items[0].equals_node(&items[5]));
    assert!(!items[4].equals_node(&items[0]));
    assert!(items[0].equals_value(&json!(1.0)));
    assert!(items[3].equals_value(&json!({"a": [1, {"b": 2}], "c": null})));
    assert!(!items[3].equals_value(&json!({"a": [1, {"b": 3}], "c": null})));
    assert!(!items[3].equals_value(&json!({"a": [1, {"b": 2}]})));
    assert!(!items[4].equals_value(&json!("y")));
}

#[test]
fn negative_zero_is_the_integer_zero() {
    // simd-json reads `-0` as the integer 0 where serde_json reads the float
    // -0.0; both are integers equal to 0, so no schema tells them apart.
    let mut parser = Parser::new();
    let document = parser.parse(b"-0", ParseLimits::default()).unwrap();
    let root = document.root();
    assert!(root.is_integer());
    assert_eq!(root.as_f64(), Some(0.0));
    assert!(root.equals_value(&json!(0)));
    assert!(root.equals_value(&json!(-0.0)));
}

#[test]
fn an_element_by_index_is_the_one_the_elements_reach() {
    let mut parser = Parser::new();
    for body in [
        &br#"[1,"a",null,2.5]"#[..],
        br#"[1,{"a":[2,3]},[4],"b"]"#,
        b"[]",
        b"{}",
    ] {
        let document = parser.parse(body, ParseLimits::default()).unwrap();
        let root = document.root();
        for index in 0..5 {
            assert_eq!(
                root.element(index).map(|e| e.to_value()),
                root.elements().nth(index).map(|e| e.to_value()),
                "{index} of {}",
                String::from_utf8_lossy(body)
            );
        }
    }
}
