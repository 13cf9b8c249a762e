//! A command's arguments read from JSON and its answer written to it, as
//! every host's commands take and give them (the project's, the
//! checkpoints', serve's own).

use corral_tools::{Error, ErrorCode};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// `args` as `command`'s arguments; `invalid_input` saying what does not fit.
pub fn parse<T: DeserializeOwned>(command: &str, args: Value) -> Result<T, Error> {
    serde_json::from_value(args)
        .map_err(|e| Error::invalid_input(format!("the arguments of `{command}` do not fit: {e}")))
}

/// An answer as JSON.
pub fn to_value(value: impl Serialize) -> Result<Value, Error> {
    serde_json::to_value(value)
        .map_err(|e| Error::new(ErrorCode::Io, format!("could not encode an answer: {e}")))
}
