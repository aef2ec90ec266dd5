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

/// Registers the gate's checks of the formats it decides itself.
pub fn with_own_formats<'i, R, F: Json>(
    options: ValidationOptions<'i, R, F>,
) -> ValidationOptions<'i, R, F> {
    options
        .with_format("email", is_email)
        .with_format("date-time", is_date_time)
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
