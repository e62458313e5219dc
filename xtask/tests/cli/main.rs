//! The `xtask` command line end to end: the real binary on the real wheels, on throwaway
//! copies of the repository. One test binary for all commands (one link instead of five);
//! crash_safety.rs stays apart, its timing-driven kills undisturbed by these tests.

#[path = "../common/mod.rs"]
mod common;

mod adopt;
mod all_or_nothing;
mod bounded_reads;
mod bump;
mod checkouts;
mod children;
mod ci_recipe;
mod ci_scheduled_job;
mod core_bad_input;
mod core_diff;
mod core_surface;
mod docs_examples;
mod formats;
mod hostile_inputs;
mod isolation;
mod layering;
mod leftover_regions;
mod line_endings;
mod manifest_layout;
mod manifest_lock;
mod manifest_paths;
mod manifest_users;
mod matrix;
mod mistakes;
mod out_of_the_box;
mod printed_names;
mod real_trees;
mod regen;
mod users_record;
mod verify;
mod verify_consumer;
mod verify_domains;
mod verify_fix;
mod verify_images;
mod verify_surface;
mod verify_users;
mod watch;
mod watch_outputs;
mod watch_progress;
mod watch_warm;
