//! Where a member sits in the bytes of a body the parser took: so that a
//! message can be forwarded with one value replaced and every other byte as
//! sent. Reads only JSON the parser accepted (no second check of it), with
//! no recursion and no allocation beyond a key that holds an escape.

use std::ops::Range;

/// One member of an object, as byte ranges of the body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawMember {
    /// The key, quotes included.
    pub key: Range<usize>,
    /// The value.
    pub value: Range<usize>,
}

/// The members of the object whose opening brace is at `at`, in document
/// order; `None` when `at` does not hold an object (or it has no end).
pub fn members(body: &[u8], at: usize) -> Option<RawMembers<'_>> {
    (body.get(at) == Some(&b'{')).then_some(RawMembers {
        body,
        at: at + 1,
        done: false,
    })
}

/// The value at `path` (a member name at each step) under the body's
/// root: its byte range.
pub fn value_at(body: &[u8], path: &[&str]) -> Option<Range<usize>> {
    let start = skip_space(body, 0);
    let mut range = start..skip_value(body, start)?;
    for name in path {
        let member = members(body, range.start)?.find(|m| key_is(body, &m.key, name))?;
        range = member.value;
    }
    Some(range)
}

/// `body` with the member `name` (its JSON text `value`) added to the
/// object at `path` under the root, the objects missing on the path made;
/// every other byte as it was. `None` when a step of the path is not an
/// object, or `name` is there already.
#[cfg(feature = "server")]
pub fn insert_member(body: &[u8], path: &[&str], name: &str, value: &[u8]) -> Option<Vec<u8>> {
    let start = skip_space(body, 0);
    let mut at = start..skip_value(body, start)?;
    let mut found = 0;
    for step in path {
        match members(body, at.start)?.find(|m| key_is(body, &m.key, step)) {
            Some(member) => {
                at = member.value;
                found += 1;
            }
            None => break,
        }
    }
    let mut present = members(body, at.start)?;
    let empty = match present.next() {
        None => true,
        Some(first) => {
            if found == path.len()
                && (key_is(body, &first.key, name) || present.any(|m| key_is(body, &m.key, name)))
            {
                return None;
            }
            false
        }
    };
    let missing = &path[found..];
    let mut out = Vec::with_capacity(body.len() + value.len() + name.len() + 16);
    out.extend_from_slice(&body[..=at.start]);
    for step in missing {
        serde_json::to_writer(&mut out, step).ok()?;
        out.extend_from_slice(b":{");
    }
    serde_json::to_writer(&mut out, name).ok()?;
    out.push(b':');
    out.extend_from_slice(value);
    out.extend(std::iter::repeat_n(b'}', missing.len()));
    if !empty {
        out.push(b',');
    }
    out.extend_from_slice(&body[at.start + 1..]);
    Some(out)
}

/// Whether the key (quotes included) reads as `name`.
fn key_is(body: &[u8], key: &Range<usize>, name: &str) -> bool {
    let raw = &body[key.start + 1..key.end - 1];
    if !raw.contains(&b'\\') {
        return raw == name.as_bytes();
    }
    serde_json::from_slice::<String>(&body[key.clone()]).is_ok_and(|k| k == name)
}

/// See [`members`].
pub struct RawMembers<'b> {
    body: &'b [u8],
    at: usize,
    done: bool,
}

impl Iterator for RawMembers<'_> {
    type Item = RawMember;

    fn next(&mut self) -> Option<RawMember> {
        if self.done {
            return None;
        }
        let body = self.body;
        let mut at = skip_space(body, self.at);
        if body.get(at) == Some(&b',') {
            at = skip_space(body, at + 1);
        }
        if body.get(at) != Some(&b'"') {
            self.done = true;
            return None;
        }
        let key = at..skip_string(body, at)?;
        at = skip_space(body, key.end);
        if body.get(at) != Some(&b':') {
            self.done = true;
            return None;
        }
        let start = skip_space(body, at + 1);
        let value = start..skip_value(body, start)?;
        self.at = value.end;
        Some(RawMember { key, value })
    }
}

fn skip_space(body: &[u8], mut at: usize) -> usize {
    while matches!(body.get(at), Some(b' ' | b'\t' | b'\r' | b'\n')) {
        at += 1;
    }
    at
}

/// The position after the string whose opening quote is at `at`.
fn skip_string(body: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 1;
    loop {
        match body.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// The position after the value that starts at `at`.
fn skip_value(body: &[u8], at: usize) -> Option<usize> {
    match body.get(at)? {
        b'"' => skip_string(body, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            loop {
                match body.get(i)? {
                    b'"' => {
                        i = skip_string(body, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let mut i = at;
            while !matches!(
                body.get(i),
                None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n')
            ) {
                i += 1;
            }
            (i > at).then_some(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_is_found_by_its_decoded_name_with_its_bytes_as_sent() {
        let body = br#" { "id" : 1, "p\u0061rams": {"a": [1, {"}": "]"}], "b" :"x\"y" } } "#;
        let params = value_at(body, &["params"]).unwrap();
        assert!(body[params.clone()].starts_with(b"{\"a\""));
        let found: Vec<(&[u8], &[u8])> = members(body, params.start)
            .unwrap()
            .map(|m| (&body[m.key], &body[m.value]))
            .collect();
        assert_eq!(
            found,
            [
                (&b"\"a\""[..], &br#"[1, {"}": "]"}]"#[..]),
                (b"\"b\"", br#""x\"y""#)
            ]
        );
        assert_eq!(
            value_at(body, &["params", "b"]).map(|r| &body[r]),
            Some(&br#""x\"y""#[..])
        );
        assert_eq!(value_at(body, &["nothing"]), None);
        assert_eq!(value_at(body, &["id", "deeper"]), None);
        assert_eq!(members(b"{}", 0).unwrap().count(), 0);
        assert!(members(b"[]", 0).is_none());
    }

    #[test]
    #[cfg(feature = "server")]
    fn a_member_is_inserted_where_the_path_leads_making_what_is_missing() {
        let insert = |body: &str, path: &[&str], name: &str| {
            insert_member(body.as_bytes(), path, name, b"[1]")
                .map(|b| String::from_utf8(b).unwrap())
        };
        assert_eq!(
            insert(
                r#"{"id":1, "result": {"a" : 2}}"#,
                &["result", "_meta"],
                "n"
            )
            .as_deref(),
            Some(r#"{"id":1, "result": {"_meta":{"n":[1]},"a" : 2}}"#)
        );
        assert_eq!(
            insert(r#"{"result":{"_meta":{ }}}"#, &["result", "_meta"], "n").as_deref(),
            Some(r#"{"result":{"_meta":{"n":[1] }}}"#)
        );
        assert_eq!(
            insert(r#"{"result":{"_meta":{"k":0}}}"#, &["result", "_meta"], "n").as_deref(),
            Some(r#"{"result":{"_meta":{"n":[1],"k":0}}}"#)
        );
        // Already there, or a step that is not an object: left alone.
        assert_eq!(
            insert(r#"{"result":{"_meta":{"n":0}}}"#, &["result", "_meta"], "n"),
            None
        );
        assert_eq!(insert(r#"{"result":[]}"#, &["result", "_meta"], "n"), None);
        assert_eq!(
            insert(r#"{"result":{"_meta":5}}"#, &["result", "_meta"], "n"),
            None
        );
        for result in [
            insert(
                r#"{"id":1, "result": {"a" : 2}}"#,
                &["result", "x", "y"],
                "n",
            ),
            insert(r#"{"result":{}}"#, &["result", "_meta"], "n"),
        ] {
            serde_json::from_str::<serde_json::Value>(&result.unwrap()).unwrap();
        }
    }

    #[test]
    fn a_cut_body_ends_the_walk_without_a_panic() {
        for body in [&b"{\"a\": [1, 2"[..], b"{\"a", b"{\"a\" 1}", b"{\"a\":\"\\"] {
            let _ = value_at(body, &["a"]);
            let _ = members(body, 0).map(|m| m.count());
        }
    }
}
