//! Markdown as GitHub renders it: `cmark-gfm` (GitHub's fork of cmark, a Debian package the
//! set-up script installs) with GitHub's extensions, so a test sees the HTML a pull request
//! body becomes: how many rows a table has, whether a heading, a link or an image appeared.

use crate::SETUP_HINT;
use std::io::Write;
use std::process::{Command, Stdio};

/// The HTML `cmark-gfm` made of a Markdown text.
pub struct Rendered {
    pub html: String,
}

impl Rendered {
    /// How many times `tag` opens (`"tr"`, `"h3"`, `"a"`, `"img"`, ...).
    pub fn count(&self, tag: &str) -> usize {
        let (bare, open) = (format!("<{tag}>"), format!("<{tag} "));
        self.html.matches(&bare).count() + self.html.matches(&open).count()
    }

    /// The text of each table cell (`<td>`), in order, as the page shows it (entities
    /// decoded, inline tags such as `<code>` dropped).
    pub fn cells(&self) -> Vec<String> {
        let mut cells = Vec::new();
        let mut rest = self.html.as_str();
        while let Some(at) = rest.find("<td>") {
            let body = &rest[at + 4..];
            let end = body.find("</td>").expect("a closed cell");
            cells.push(visible(&body[..end]));
            rest = &body[end..];
        }
        cells
    }
}

/// `html` without its tags, its entities decoded.
fn visible(html: &str) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// Renders `markdown` as GitHub does a pull request body: tables, autolinks (bare URLs,
/// `www.`, e-mail addresses), strikethrough, and its filter of unsafe HTML tags.
pub fn render_markdown(markdown: &str) -> Rendered {
    let mut child = Command::new("cmark-gfm")
        .args([
            "--unsafe",
            "-e",
            "table",
            "-e",
            "autolink",
            "-e",
            "strikethrough",
        ])
        .args(["-e", "tagfilter"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run cmark-gfm ({e}): {SETUP_HINT}"));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(markdown.as_bytes())
        .expect("write to cmark-gfm");
    let out = child.wait_with_output().expect("cmark-gfm runs");
    assert!(out.status.success(), "cmark-gfm failed: {out:?}");
    Rendered {
        html: String::from_utf8(out.stdout).expect("UTF-8 HTML"),
    }
}
