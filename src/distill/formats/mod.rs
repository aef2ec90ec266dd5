//! `format` checks made here, for the value gate's roots and for the
//! explainer's checks alike (so the two never disagree): the same verdicts
//! as `jsonschema`'s built-in ones, the common case decided in one pass over
//! the text, every other case handed to the built-in check itself, so the
//! verdict is always the built-in one. The tests hold the two equal on
//! generated text around every rule.

mod date_time;
mod email;

use jsonschema::ValidationOptions;
use jsonschema::json::Json;

pub use date_time::is_date_time;
pub use email::is_email;

/// A format's check: whether a string is of the format.
pub type FormatCheck = fn(&str) -> bool;

/// The formats the gate decides itself, and their checks.
const OWN_FORMATS: [(&str, FormatCheck); 2] = [("email", is_email), ("date-time", is_date_time)];

/// Registers the gate's checks of the formats it decides itself.
pub fn with_own_formats<'i, R, F: Json>(
    mut options: ValidationOptions<'i, R, F>,
) -> ValidationOptions<'i, R, F> {
    for (name, check) in OWN_FORMATS {
        options = options.with_format(name, check);
    }
    options
}

/// The gate's own check of `format`, if it decides that format itself:
/// what a validator [`with_own_formats`] built calls for a string.
pub fn own_check(format: &str) -> Option<FormatCheck> {
    OWN_FORMATS
        .iter()
        .find(|(name, _)| *name == format)
        .map(|(_, check)| *check)
}

/// `jsonschema`'s own checks, for the cases the one-pass checks leave.
mod builtin {
    /// A validator of `{"format": format}`, formats asserted (2020-12).
    pub fn compile(format: &str) -> jsonschema::Validator {
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&serde_json::json!({ "format": format }))
            .expect("a bare format schema compiles")
    }

    pub fn verdict(validator: &jsonschema::Validator, text: &str) -> bool {
        validator.is_valid(&serde_json::Value::String(text.to_owned()))
    }
}
