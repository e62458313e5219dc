//! The bytes of api.toml an edit must keep that toml_edit does not: a byte order mark and the
//! line ending. Every command that edits the manifest edits its [`Layout::split`] text (no
//! mark, LF) and writes [`Layout::restore`]'s.

/// A text's byte order mark and line ending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    bom: bool,
    /// Whether lines end in CRLF; the first line's ending decides for the whole file.
    crlf: bool,
}

const BOM: char = '\u{feff}';

impl Layout {
    /// `text`'s layout and `text` without its mark, every line ending in LF.
    pub fn split(text: &str) -> (Layout, String) {
        let body = text.strip_prefix(BOM);
        let layout = Layout {
            bom: body.is_some(),
            crlf: text.find('\n').is_some_and(|i| text[..i].ends_with('\r')),
        };
        let body = body.unwrap_or(text);
        let plain = if body.contains('\r') {
            body.replace("\r\n", "\n")
        } else {
            body.to_owned()
        };
        (layout, plain)
    }

    /// `plain` (as [`Layout::split`] gives it, edited) with this layout again.
    pub fn restore(&self, plain: &str) -> String {
        let plain = plain.strip_prefix(BOM).unwrap_or(plain);
        let mut out = String::with_capacity(plain.len() + plain.len() / 32 + 3);
        if self.bom {
            out.push(BOM);
        }
        if self.crlf {
            out.push_str(&plain.replace("\r\n", "\n").replace('\n', "\r\n"));
        } else {
            out.push_str(plain);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_split_text_restores_to_its_own_bytes() {
        for text in [
            "a\nb\n",
            "\u{feff}a\r\nb\r\n",
            "\u{feff}a\nb",
            "a\r\nb",
            "",
            "a",
        ] {
            let (layout, plain) = Layout::split(text);
            assert!(!plain.contains('\r') && !plain.starts_with(BOM), "{text:?}");
            assert_eq!(layout.restore(&plain), text, "{text:?}");
        }
    }

    #[test]
    fn an_edit_gets_the_files_mark_and_line_ending() {
        let (layout, plain) = Layout::split("\u{feff}[a]\r\nx = 1\r\n");
        assert_eq!(plain, "[a]\nx = 1\n");
        assert_eq!(
            layout.restore("[a]\nx = 2\n\n[b]\n"),
            "\u{feff}[a]\r\nx = 2\r\n\r\n[b]\r\n"
        );
        // A mixed file takes its first line's ending everywhere.
        let (layout, _) = Layout::split("a\nb\r\n");
        assert_eq!(layout.restore("a\nb\n"), "a\nb\n");
    }
}
