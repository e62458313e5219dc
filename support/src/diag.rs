//! Located errors: every problem the generator reports names a file, a line and a column,
//! and shows the offending text. Rendered with codespan-reporting.

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, Config};
use std::borrow::Cow;
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

/// Messages and labels longer than this are cut in the middle (they may quote a value of
/// any size from the input).
pub const MAX_MESSAGE_CHARS: usize = 240;
/// The widest source excerpt a snippet shows; longer lines are cut around the span.
const SNIPPET_CHARS: usize = 160;
/// A span over more lines than this is shown as its first line.
const MAX_SNIPPET_LINES: usize = 6;
/// In a source bigger than this, a snippet is drawn from an excerpt of the span's line
/// (codespan indexes the whole text it is given, for every diagnostic).
const BIG_SOURCE: usize = 64 << 10;
/// Diagnostics shown in full; the rest are counted (a hostile manifest can hold 100,000).
pub const MAX_SHOWN: usize = 20;

/// `text`, or for a text over `max_chars` characters its start and end with the middle
/// replaced by `…(N chars)…`: an error quoting a 10 MB value stays a few lines long.
pub fn excerpt(text: &str, max_chars: usize) -> Cow<'_, str> {
    let count = text.chars().count();
    if count <= max_chars {
        return Cow::Borrowed(text);
    }
    let head = max_chars * 2 / 3;
    let tail = max_chars - head;
    let cut = |n: usize| text.char_indices().nth(n).map_or(text.len(), |(i, _)| i);
    let (head_end, tail_start) = (cut(head), cut(count - tail));
    Cow::Owned(format!(
        "{}…({} chars)…{}",
        &text[..head_end],
        count - head - tail,
        &text[tail_start..]
    ))
}

impl Diagnostic {
    pub fn new(source: &Source, span: Range<usize>, message: impl Into<String>) -> Self {
        let message = message.into();
        Self {
            source: source.clone(),
            span,
            message: excerpt(&message, MAX_MESSAGE_CHARS).into_owned(),
            label: String::new(),
        }
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = excerpt(&label.into(), MAX_MESSAGE_CHARS).into_owned();
        self
    }

    /// The text and span the snippet is drawn from: the source itself, or, when the span's
    /// line is long, the span covers many lines or the source is big, its first line cut to
    /// [`SNIPPET_CHARS`] around the span, preceded by as many empty lines so that line
    /// numbers stay right.
    fn snippet_source(&self) -> (Cow<'_, str>, Range<usize>) {
        let text = &*self.source.text;
        let start = floor_char_boundary(text, self.span.start.min(text.len()));
        let end = floor_char_boundary(text, self.span.end.clamp(start, text.len()));
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let long = line_end - line_start > SNIPPET_CHARS;
        let many = text[start..end].matches('\n').count() >= MAX_SNIPPET_LINES;
        if !long && !many && text.len() <= BIG_SOURCE {
            return (Cow::Borrowed(text), start..end);
        }
        let line_text = text[line_start..line_end].trim_end_matches('\r');
        let line_end = line_start + line_text.len();
        let back = text[line_start..start]
            .chars()
            .rev()
            .take(SNIPPET_CHARS / 4);
        let window_start = start - back.map(char::len_utf8).sum::<usize>();
        let ahead = text[window_start..line_end].chars().take(SNIPPET_CHARS);
        let window_end = window_start + ahead.map(char::len_utf8).sum::<usize>();
        let line = text[..start].matches('\n').count();
        let before = if window_start > line_start { "…" } else { "" };
        let after = if window_end < line_end { "…" } else { "" };
        let shift = line + before.len();
        let snippet = format!(
            "{}{before}{}{after}\n",
            "\n".repeat(line),
            &text[window_start..window_end]
        );
        let span =
            shift + (start - window_start)..shift + (end.min(window_end).max(start) - window_start);
        (Cow::Owned(snippet), span)
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
        let location = self.location();
        writeln!(f, "{location}: error: {}", self.message)?;
        if self.source.text.is_empty() {
            // Nothing to show (a file that could not be read).
            return Ok(());
        }
        let (text, span) = self.snippet_source();
        let file = SimpleFile::new(self.source.name.as_str(), &*text);
        let diagnostic = CsDiagnostic::error()
            .with_message(&self.message)
            .with_labels(vec![Label::primary((), span).with_message(&self.label)]);
        let config = Config::default();
        let Ok(snippet) = term::emit_into_string(&config, &file, &diagnostic) else {
            return Ok(());
        };
        // Its own header repeats the message: keep the snippet below it. In a cut line the
        // column it names is the excerpt's: name the source's.
        let snippet = snippet.split_once('\n').map_or("", |(_, rest)| rest);
        match snippet.split_once("┌─ ") {
            Some((head, rest)) => {
                let rest = rest.find('\n').map_or("", |i| &rest[i..]);
                write!(f, "{head}┌─ {location}{rest}")
            }
            None => f.write_str(snippet),
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
        for d in self.0.iter().take(MAX_SHOWN) {
            write!(f, "{d}")?;
        }
        if let Some(rest) = self.0.len().checked_sub(MAX_SHOWN).filter(|&n| n > 0) {
            let name = &self.0[MAX_SHOWN].source.name;
            writeln!(
                f,
                "{name}: error: {rest} more errors not shown; fix the ones above first"
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}
