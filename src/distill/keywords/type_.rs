//! `type`.

use jsonschema::json::{Json, JsonNumber, Node};
use jsonschema::types::JsonType;
use serde_json::{Map, Value};

use super::super::Keyword;
use super::super::texts::Msg;
use super::super::walk::Walker;

/// A set of JSON types, `integer` apart from `number`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct TypeMask(pub u8);

const NAMES: [(u8, &str); 7] = [
    (1, "null"),
    (2, "boolean"),
    (4, "integer"),
    (8, "number"),
    (16, "string"),
    (32, "array"),
    (64, "object"),
];

impl TypeMask {
    pub const NULL: u8 = 1;
    pub const BOOLEAN: u8 = 2;
    pub const INTEGER: u8 = 4;
    pub const NUMBER: u8 = 8;
    pub const STRING: u8 = 16;
    pub const ARRAY: u8 = 32;
    pub const OBJECT: u8 = 64;
    pub const ALL: TypeMask = TypeMask(127);

    pub fn from_name(name: &str) -> Option<u8> {
        NAMES.iter().find(|(_, n)| *n == name).map(|(bit, _)| *bit)
    }

    /// The types of `type`'s value (`None` when it names none it knows).
    pub fn from_keyword(value: &Value) -> Option<TypeMask> {
        match value {
            Value::String(name) => Self::from_name(name).map(TypeMask),
            Value::Array(names) => {
                let mut mask = 0;
                for name in names {
                    mask |= Self::from_name(name.as_str()?)?;
                }
                Some(TypeMask(mask))
            }
            _ => None,
        }
    }

    /// The type of a schema value (for `const`/`enum` analysis).
    pub fn of_value(value: &Value) -> TypeMask {
        TypeMask(match value {
            Value::Null => Self::NULL,
            Value::Bool(_) => Self::BOOLEAN,
            Value::Number(n) if n.is_i64() || n.is_u64() => Self::INTEGER,
            Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => Self::INTEGER,
            Value::Number(_) => Self::NUMBER,
            Value::String(_) => Self::STRING,
            Value::Array(_) => Self::ARRAY,
            Value::Object(_) => Self::OBJECT,
        })
    }

    /// Whether a value of fine type `found` (one bit) is admitted.
    pub fn admits(self, found: u8) -> bool {
        if found == Self::INTEGER {
            self.0 & (Self::INTEGER | Self::NUMBER) != 0
        } else {
            self.0 & found != 0
        }
    }

    pub fn union(self, other: TypeMask) -> TypeMask {
        TypeMask(self.0 | other.0)
    }

    pub fn intersect(self, other: TypeMask) -> TypeMask {
        // `number` admits integers.
        let mut mask = self.0 & other.0;
        if self.0 & Self::NUMBER != 0 && other.0 & Self::INTEGER != 0 {
            mask |= Self::INTEGER;
        }
        if other.0 & Self::NUMBER != 0 && self.0 & Self::INTEGER != 0 {
            mask |= Self::INTEGER;
        }
        TypeMask(mask)
    }

    /// Names in canonical order (`integer` left out beside `number`).
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        let mask = if self.0 & Self::NUMBER != 0 {
            self.0 & !Self::INTEGER
        } else {
            self.0
        };
        NAMES
            .iter()
            .filter(move |(bit, _)| mask & bit != 0)
            .map(|(_, name)| *name)
    }
}

/// The fine type bit of an instance node.
pub(crate) fn type_bit<'a, F: Json>(node: &F::Node<'a>) -> u8 {
    match node.json_type() {
        JsonType::Null => TypeMask::NULL,
        JsonType::Boolean => TypeMask::BOOLEAN,
        JsonType::Integer => TypeMask::INTEGER,
        JsonType::Number => match node.as_number() {
            Some(number) if number.is_integer() => TypeMask::INTEGER,
            _ => TypeMask::NUMBER,
        },
        JsonType::String => TypeMask::STRING,
        JsonType::Array => TypeMask::ARRAY,
        JsonType::Object => TypeMask::OBJECT,
    }
}

/// The JSON type name found at a location.
pub(crate) fn received_type<'a, F: Json>(node: &F::Node<'a>) -> &'static str {
    type_name(type_bit::<F>(node))
}

/// The name of a fine type bit.
#[inline]
pub(crate) fn type_name(bit: u8) -> &'static str {
    match bit {
        TypeMask::BOOLEAN => "boolean",
        TypeMask::INTEGER => "integer",
        TypeMask::NUMBER => "number",
        TypeMask::STRING => "string",
        TypeMask::ARRAY => "array",
        TypeMask::OBJECT => "object",
        _ => "null",
    }
}

pub(crate) struct TypeKw {
    pub mask: TypeMask,
}

impl TypeKw {
    pub fn compile(schema: &Map<String, Value>) -> Option<TypeKw> {
        let mask = TypeMask::from_keyword(schema.get("type")?)?;
        Some(TypeKw { mask })
    }

    /// Reports a mismatch; true when the type is admitted.
    pub fn check<'a, F: Json>(&self, w: &mut Walker<'_, 'a, F>, instance: &F::Node<'a>) -> bool {
        let found = type_bit::<F>(instance);
        if self.mask.admits(found) {
            return true;
        }
        let found = received_type::<F>(instance);
        w.report(
            instance,
            Keyword::Type,
            Msg::Type {
                expected: self.mask,
                found,
            },
        );
        false
    }
}
