//! The generator: api.toml → parse → model → render → sync.
//!
//! - [`parse`] reads the TOML with spans (shape errors located by serde),
//! - [`model`] validates it into the typed [`model::Api`] (every rule, every error located),
//! - [`render`] turns the model into outputs, one renderer and one template per artifact,
//! - [`sync`] splices regions, writes atomically or checks for drift.

pub mod diag;
pub mod model;
pub mod parse;
pub mod region;
pub mod render;
pub mod sync;

use diag::{Diagnostic, Diagnostics, Source};
use std::path::Path;

/// Reads and validates a manifest. `display_name` is how errors name the file.
pub fn load(path: &Path, display_name: &str) -> Result<model::Api, Diagnostics> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        let source = Source::new(display_name, "");
        Diagnostic::new(&source, 0..0, format!("cannot read the manifest: {e}"))
    })?;
    load_str(display_name, &text)
}

/// Parses and validates manifest text.
pub fn load_str(display_name: &str, text: &str) -> Result<model::Api, Diagnostics> {
    let source = Source::new(display_name, text);
    let raw = parse::parse(&source)?;
    model::validate(&raw, &source)
}
