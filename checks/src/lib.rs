//! The checks a consumer of the contract runs, as pipelines both command lines call
//! (`cargo xtask` in this repository, the `mooncake-sos` package's executable outside it):
//! `verify --consumer` ([`consumer`]), `core` and `core --diff` ([`core`], [`core_diff`]),
//! `users` ([`users`]). Each reads a [`Contract`] (api.toml and the records beside it), prints
//! its report in the [`findings::Format`] asked for, and returns an [`Outcome`]; the command
//! lines only parse their arguments and turn the result into the exit code ([`exit_code`]).

pub mod args;
pub mod consumer;
pub mod contract;
pub mod core;
pub mod core_diff;
pub mod findings;
pub mod module;
pub mod users;

pub use contract::Contract;

use std::process::ExitCode;

/// What a check found, once it could run.
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

/// The exit code of a finished command, 0 all good, 1 drift or a failed check, 2 bad input;
/// bad input is printed to stderr here, escaped: it may quote a wheel, a record or a page.
pub fn exit_code(result: Result) -> ExitCode {
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

impl Outcome {
    /// `Failed` when `ok` is false.
    pub fn of(ok: bool) -> Outcome {
        if ok { Outcome::Ok } else { Outcome::Failed }
    }
}
