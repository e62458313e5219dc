//! Located errors: every problem the generator reports names a file, a line and a column,
//! and shows the offending text. Rendered with codespan-reporting.

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, Config};
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// A source file an error can point into.
#[derive(Clone, Debug)]
pub struct Source {
    pub name: String,
    pub text: Arc<str>,
}

impl Source {
    pub fn new(name: impl Into<String>, text: impl Into<Arc<str>>) -> Self {
        Self {
            name: name.into(),
            text: text.into(),
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text[..floor_char_boundary(&self.text, offset)];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[line_start..].chars().count() + 1)
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// One located error.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub source: Source,
    pub span: Range<usize>,
    pub message: String,
    pub label: String,
}

impl Diagnostic {
    pub fn new(source: &Source, span: Range<usize>, message: impl Into<String>) -> Self {
        Self {
            source: source.clone(),
            span,
            message: message.into(),
            label: String::new(),
        }
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// `file:line:col`, the location the first line of the rendering names.
    pub fn location(&self) -> String {
        let (line, col) = self.source.line_col(self.span.start);
        format!("{}:{line}:{col}", self.source.name)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A grep-friendly first line, then the snippet with the offending text underlined.
        writeln!(f, "{}: error: {}", self.location(), self.message)?;
        let file = SimpleFile::new(self.source.name.as_str(), &*self.source.text);
        let len = self.source.text.len();
        let start = self.span.start.min(len);
        let end = self.span.end.clamp(start, len);
        let diagnostic = CsDiagnostic::error()
            .with_message(&self.message)
            .with_labels(vec![
                Label::primary((), start..end).with_message(&self.label),
            ]);
        let config = Config::default();
        match term::emit_into_string(&config, &file, &diagnostic) {
            // Its own header repeats the message: keep the snippet below it.
            Ok(snippet) => f.write_str(snippet.split_once('\n').map_or("", |(_, rest)| rest)),
            Err(_) => Ok(()),
        }
    }
}

/// Every error found in one run; nothing is written while there is any.
#[derive(Debug, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `Ok(value)` when nothing was reported.
    pub fn finish<T>(self, value: T) -> Result<T, Diagnostics> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Self {
        Self(vec![d])
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in &self.0 {
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}
