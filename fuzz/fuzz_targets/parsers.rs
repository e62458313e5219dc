//! libFuzzer target: the manifest parser and the region parser on raw bytes and on mutations
//! of the repository's own api.toml, Dockerfiles and build.py. The checks (never a panic,
//! either a value or a located error) are shared with codegen/tests/fuzz_props.rs.
#![no_main]

#[path = "../../codegen/tests/fuzz_checks/mod.rs"]
mod fuzz_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_checks::fuzz_one(data));
