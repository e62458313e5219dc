//! The contract: api.toml read with spans ([`parse`]), validated into the typed [`model::Api`]
//! (every rule, every error located, [`diag`]), and the file and process utilities every side
//! of the tool shares: bounded reads ([`input`]), user JSON with each key once ([`json`]),
//! cache entries trusted only as written ([`kept`]), atomic writes ([`atomic`]), one bounded
//! subprocess runner ([`bounded`]), the nesting limit for parsed Python ([`nesting`]) and how
//! outside text is printed in each kind of output ([`escape`]).
//! The generator (`codegen`) and the checkers stand side by side on it.

pub mod atomic;
pub mod bounded;
pub mod diag;
pub mod drift;
pub mod escape;
pub mod input;
pub mod json;
pub mod kept;
pub mod layout;
pub mod model;
pub mod nesting;
pub mod parse;
pub mod signature;

use diag::{Diagnostics, Source};
use std::path::Path;

/// Reads and validates a manifest. `display_name` is how errors name the file.
pub fn load(path: &Path, display_name: &str) -> Result<model::Api, Diagnostics> {
    load_str(display_name, &read_manifest(path, display_name)?)
}

/// The manifest's text: a regular UTF-8 file of at most [`input::MAX_TEXT_BYTES`]; anything
/// else (a FIFO, a device, a directory, bad bytes) is a located error, at once.
pub fn read_manifest(path: &Path, display_name: &str) -> Result<String, Diagnostics> {
    input::read_text(path, input::MAX_TEXT_BYTES)
        .map_err(|e| e.diagnostic(display_name, "the manifest").into())
}

/// Parses and validates manifest text.
pub fn load_str(display_name: &str, text: &str) -> Result<model::Api, Diagnostics> {
    let source = Source::new(display_name, text);
    let raw = parse::parse(&source)?;
    model::validate(&raw, &source)
}
