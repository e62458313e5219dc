//! Input that cannot be checked at all: the one error a source, a wheel or an archive
//! member gives when it cannot be read.

use mooncake_sos_support::input::ReadError;
use std::fmt;

/// Input that cannot be checked at all (exit 2): it names the file, and the line when known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    pub location: String,
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: error: {}", self.location, self.message)
    }
}

impl std::error::Error for LoadError {}

impl LoadError {
    /// The message is cut to a bounded excerpt: it may quote the input.
    pub fn new(location: impl Into<String>, message: impl Into<String>) -> Self {
        let message = message.into();
        Self {
            location: location.into(),
            message: mooncake_sos_support::diag::excerpt(
                &message,
                mooncake_sos_support::diag::MAX_MESSAGE_CHARS,
            )
            .into_owned(),
        }
    }

    /// `what` of `display` could not be read: located at the bad byte for bad UTF-8.
    pub(crate) fn read(display: &str, what: &str, e: &ReadError) -> Self {
        Self::new(e.location(display), format!("cannot read {what}: {e}"))
    }
}
