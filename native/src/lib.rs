//! Native cores as data. A module's pure Python runs over an older native core only while it
//! uses nothing the core lacks, so each core's surface is read once from its wheel and kept:
//!
//! - [`wheel`] finds the core in a wheel (`mooncake/store.so`, or `mooncake/_store*.so` once
//!   `mooncake.store` is a package) and hashes both;
//! - [`read`] imports it in a throwaway venv with `introspect.py` under a deadline, and caches
//!   the [`mooncake_sos_manifest::core_record::CoreSurface`] by the wheel's sha256;
//! - [`needs`] checks a module's uses (object path, call / read / write / construct,
//!   required or probed) against a surface into a verdict with the first missing use;
//! - [`requirements`] maps a module's derived surface to those uses;
//! - [`table`] is modules × cores; [`record`] keeps image cores' surfaces in `cores/`;
//! - [`images`] checks a module against each image: its core's record, and the modules of the
//!   package the image has.

pub mod core_diff;
pub mod cuda_runtime;
mod fit;
pub mod fix;
pub mod images;
pub mod isolate;
pub mod needs;
pub mod progress;
pub mod read;
pub mod record;
pub mod requirements;
mod shape;
pub mod sites;
pub mod table;
pub mod users;
pub mod users_check;
pub mod wheel;

#[cfg(test)]
mod test_cores;

pub use needs::{Requirement, Usage, Verdict, serve};
pub use read::Reader;
