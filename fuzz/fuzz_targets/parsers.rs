//! libFuzzer target: the manifest parser and the region parser on raw bytes and on mutations
//! of the repository's own api.toml, Dockerfiles and build.py; and render + sync planning
//! (in memory) of edited manifests against the real targets and of the real manifest
//! against edited targets, in LF and in CRLF. The checks (never a panic; a value or a
//! located error; a plan is a fixed point whose regions hold the rendered bodies) are
//! shared with codegen/tests/fuzz_props.rs.
#![no_main]

#[path = "../../codegen/tests/fuzz_checks/mod.rs"]
mod fuzz_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_checks::fuzz_one(data));
