//! How a command ends, and the one place that turns that into the process's exit code:
//! 0 all good, 1 drift or a failed check, 2 bad input.

use std::process::ExitCode;

/// What a command found, once it could run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Everything is current or matches.
    Ok,
    /// Drift, or a check that failed; the command printed why.
    Failed,
}

/// Bad input: a message that names its location (`FILE[:LINE:COL]: error: ...`).
#[derive(Debug)]
pub struct BadInput(pub String);

/// Located errors of every kind (codegen's diagnostics, upstream's load errors, messages).
impl<E: std::fmt::Display> From<E> for BadInput {
    fn from(error: E) -> Self {
        BadInput(error.to_string())
    }
}

pub type Result<T = Outcome> = std::result::Result<T, BadInput>;

/// The exit code of a finished command; bad input is printed to stderr here, escaped: it may
/// quote a wheel, a record or a page.
pub fn code(result: Result) -> ExitCode {
    match result {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Failed) => ExitCode::from(1),
        Err(BadInput(message)) => {
            eprint!("{}", mooncake_sos_support::escape::lines(&message));
            if !message.ends_with('\n') {
                eprintln!();
            }
            ExitCode::from(2)
        }
    }
}
