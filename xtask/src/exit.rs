//! How a command ends, and the one place that turns that into the process's exit code:
//! 0 all good, 1 drift or a failed check, 2 bad input. The checks crate owns both (the
//! package's command line maps them the same way).

pub use mooncake_sos_checks::{BadInput, Outcome, Result};

pub fn code(result: Result) -> std::process::ExitCode {
    mooncake_sos_checks::exit_code(result)
}
