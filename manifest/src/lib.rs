//! api.toml: read with spans ([`parse`]), validated into the typed [`model::Api`] (every
//! rule, every error located), Python signatures as api.toml writes them ([`signature`]) and
//! the line endings and BOM every edit keeps ([`layout`]). The generator (`codegen`) and the
//! checkers stand side by side on it; what they share that is not api.toml is in `support`.

pub mod core_record;
pub mod edit;
pub mod layout;
pub mod model;
pub mod parse;
pub mod signature;

use mooncake_sos_support::diag::{Diagnostics, Source};
use mooncake_sos_support::input;
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
