//! The generator: the validated model (from `mooncake_sos_manifest`) → render → sync.
//!
//! - [`render`] turns the model into outputs, one renderer and one template per artifact,
//! - [`region`] finds the generated regions of hand-kept files,
//! - [`sync`] splices regions, writes all or nothing, or checks for drift.

pub mod regen;
pub mod region;
pub mod render;
pub mod sync;
