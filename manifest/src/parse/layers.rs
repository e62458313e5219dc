//! What the image layers stand on, as written: the native core an image runs on
//! (`[image.<id>] core = { ... }`), the extra upstream files overlaid with the module
//! (`[[upstream.file]]`) and the releases a pin installs (`[[release]]`).

use super::S;
use serde::Deserialize;

/// `core = { package = "...", version = "...", source = "..." }` of a `[image.<id>]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawImageCore {
    pub package: S<String>,
    pub version: S<String>,
    /// Where the image's core comes from, in prose (how the release was chosen).
    pub source: S<String>,
}

/// One `[[upstream.file]]`: a file of the upstream repository at the pinned commit, overlaid
/// beside the module.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawUpstreamFile {
    pub path: S<String>,
    pub sha256: S<String>,
}

/// One `[[release]]`: a release of a package whose wheels an image may install (strategy
/// `pin`), with the sha256 of every wheel file, so pip installs only those bytes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRelease {
    pub package: S<String>,
    pub version: S<String>,
    pub wheels: S<Vec<S<RawWheel>>>,
}

/// `{ file = "<wheel file name>", sha256 = "..." }` of a `[[release]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWheel {
    pub file: S<String>,
    pub sha256: S<String>,
}
