//! Progress of long work on stderr: a live bar when stderr is a terminal (indicatif), one
//! plain line per step otherwise (CI logs), nothing with `--quiet`. Never on stdout: reports
//! stay byte-stable whatever the terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

pub struct Progress {
    /// The command, prefixed to each plain line (`watch: ...`).
    label: &'static str,
    kind: Kind,
}

enum Kind {
    Bar(ProgressBar),
    Lines,
    Quiet,
}

impl Progress {
    /// A bar on a terminal, lines elsewhere, nothing when `quiet`.
    pub fn new(label: &'static str, quiet: bool) -> Self {
        let kind = if quiet {
            Kind::Quiet
        } else if std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
            bar.set_style(style);
            bar.set_prefix(label);
            Kind::Bar(bar)
        } else {
            Kind::Lines
        };
        Progress { label, kind }
    }

    /// Nothing shown, for callers with no terminal of their own (tests, libraries).
    pub fn quiet() -> Self {
        Self::new("", true)
    }

    /// `n` more steps are coming.
    pub fn expect(&self, n: u64) {
        if let Kind::Bar(bar) = &self.kind {
            bar.inc_length(n);
        }
    }

    /// A step starts: the bar shows it; a plain line names it. `what` may name a release or a
    /// wheel from the index: escaped.
    pub fn start(&self, what: &str) {
        let what = mooncake_sos_support::escape::text(what);
        match &self.kind {
            Kind::Bar(bar) => bar.set_message(what.into_owned()),
            Kind::Lines => eprintln!("{}: {what}", self.label),
            Kind::Quiet => {}
        }
    }

    /// A step is done.
    pub fn done(&self) {
        if let Kind::Bar(bar) = &self.kind {
            bar.inc(1);
        }
    }

    /// The work is over: the bar is cleared, leaving the terminal as it was.
    pub fn finish(&self) {
        if let Kind::Bar(bar) = &self.kind {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
