//! Text from outside the repository (a wheel, a core record in `cores/`, a user's record in
//! `consumers/`, a package index page, a module's source) as each kind of output may carry
//! it: one function per kind. Whatever such a text holds, it cannot move the cursor, colour
//! or clear a terminal, reorder what follows it (a bidi override), start a line of its own,
//! add a row, a heading, a link, an image or a mention to Markdown, or a command to a GitHub
//! workflow log.

use std::borrow::Cow;

/// Whether `c` shows as itself: not a control character (C0, DEL, C1), not an invisible
/// format character (bidi embeddings, overrides and isolates, zero-width ones, the BOM,
/// Unicode's other format characters), not a line or paragraph separator.
pub fn prints(c: char) -> bool {
    !(c.is_control()
        || matches!(
            c,
            '\u{ad}'
                | '\u{600}'..='\u{605}'
                | '\u{61c}'
                | '\u{6dd}'
                | '\u{70f}'
                | '\u{890}'..='\u{891}'
                | '\u{8e2}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206f}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{110bd}'
                | '\u{110cd}'
                | '\u{13430}'..='\u{1343f}'
                | '\u{1bca0}'..='\u{1bca3}'
                | '\u{1d173}'..='\u{1d17a}'
                | '\u{e0001}'
                | '\u{e0020}'..='\u{e007f}'
        ))
}

/// `c`'s escape, as Rust writes it: `\n`, `\r`, `\t`, `\x1b` below U+0080, `\u{202e}` above.
fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if c.is_ascii() => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
    }
}

/// `s` with each character `keep` refuses replaced by what `replace` pushes; borrowed when
/// nothing is replaced.
fn map<'a>(
    s: &'a str,
    keep: impl Fn(char) -> bool,
    replace: impl Fn(&mut String, char),
) -> Cow<'a, str> {
    let Some(first) = s.find(|c: char| !keep(c)) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        if keep(c) {
            out.push(c);
        } else {
            replace(&mut out, c);
        }
    }
    Cow::Owned(out)
}

/// One line for a terminal or a log: each character that does not [`prints`] as its escape
/// (`\n`, `\x1b`, `\u{202e}`), so a name can neither break the line nor act on the terminal.
/// A backslash stays as it is: escaping twice is escaping once.
pub fn text(s: &str) -> Cow<'_, str> {
    map(s, prints, push_escaped)
}

/// Several lines (a diff, a located error with its snippet): each escaped as by [`text`],
/// the line breaks between them kept.
pub fn lines(s: &str) -> Cow<'_, str> {
    map(s, |c| c == '\n' || prints(c), push_escaped)
}

/// Markdown (a table cell, a heading): a code span of [`text`], inside which Markdown reads
/// nothing as markup: no emphasis, link, image, HTML, mention or autolink. A `|` is escaped
/// for the table around it (GitHub reads `\|` as a pipe inside a code span too), and the
/// fence is one backtick longer than the longest run of them the text holds.
pub fn markdown(s: &str) -> String {
    let text = text(s).replace('|', "\\|");
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    // A span that starts or ends with a backtick is padded: Markdown strips one space each side.
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// JSON text (serde's, which escapes only what JSON must: `"`, `\\` and C0 controls) with
/// every other character that does not [`prints`] written as its `\uXXXX` escape (a pair of
/// them above U+FFFF): the same document, which no string in it can act on a terminal from.
/// Outside strings JSON is ASCII, so only strings change.
pub fn json(s: &str) -> Cow<'_, str> {
    map(
        s,
        |c| c == '\n' || prints(c),
        |out, c| {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        },
    )
}

/// The message of a GitHub workflow command (`::warning file=...::MESSAGE`): `%`, CR and LF
/// encoded as the runner decodes them (so the message stays one command; the runner shows a
/// line break), every other character that does not [`prints`] escaped as by [`text`].
pub fn github_data(s: &str) -> String {
    github(s, false)
}

/// A property's value of a workflow command (`file=VALUE`): as [`github_data`], and `:` and
/// `,`, which end a property, encoded too.
pub fn github_property(s: &str) -> String {
    github(s, true)
}

fn github(s: &str, property: bool) -> String {
    let encoded = |c: char| match c {
        '%' => Some("%25"),
        '\r' => Some("%0D"),
        '\n' => Some("%0A"),
        ':' if property => Some("%3A"),
        ',' if property => Some("%2C"),
        _ => None,
    };
    let keep = |c: char| encoded(c).is_none() && prints(c);
    map(s, keep, |out, c| match encoded(c) {
        Some(code) => out.push_str(code),
        None => push_escaped(out, c),
    })
    .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every hostile name the review found, and what each output makes of it.
    const HOSTILE: [(&str, &str); 11] = [
        ("put\x1b[31m", "put\\x1b[31m"),
        ("ring\x07", "ring\\x07"),
        ("two\nlines", "two\\nlines"),
        ("over\rwrite", "over\\rwrite"),
        ("abc\u{202e}fed", "abc\\u{202e}fed"),
        ("a|b", "a|b"),
        ("<img src=x>", "<img src=x>"),
        ("# heading", "# heading"),
        ("`tick`", "`tick`"),
        ("nul\0del\x7fc1\u{9b}", "nul\\x00del\\x7fc1\\u{9b}"),
        (
            "zw\u{200b}bom\u{feff}ls\u{2028}",
            "zw\\u{200b}bom\\u{feff}ls\\u{2028}",
        ),
    ];

    #[test]
    fn text_escapes_every_character_that_does_not_print_and_nothing_else() {
        for (name, escaped) in HOSTILE {
            assert_eq!(text(name), escaped, "{name:?}");
            assert_eq!(text(escaped), escaped, "escaping twice is escaping once");
            assert!(!text(name).contains(|c: char| !prints(c)));
        }
        for plain in ["mooncake.store.X", "a\\nb", "✓ ✗ → é 中文", ""] {
            assert!(matches!(text(plain), Cow::Borrowed(_)), "{plain:?}");
        }
    }

    #[test]
    fn lines_keeps_the_line_breaks_and_escapes_the_rest() {
        assert_eq!(
            lines("a\x1b[2J\nb\r\n\u{202e}c\n"),
            "a\\x1b[2J\nb\\r\n\\u{202e}c\n"
        );
    }

    #[test]
    fn markdown_is_a_code_span_a_table_keeps_its_shape_around() {
        let cases = [
            ("mooncake.store.X", "`mooncake.store.X`"),
            ("a|b", "`a\\|b`"),
            ("a\\|b", "`a\\\\|b`"),
            ("two\nlines", "`two\\nlines`"),
            ("<img src=x>", "`<img src=x>`"),
            (
                "[a](http://x) ![i](s) @all #1",
                "`[a](http://x) ![i](s) @all #1`",
            ),
            ("# heading", "`# heading`"),
            ("`tick`", "`` `tick` ``"),
            ("a``b", "```a``b```"),
            ("put\x1b[31m", "`put\\x1b[31m`"),
        ];
        for (name, md) in cases {
            assert_eq!(markdown(name), md, "{name:?}");
        }
    }

    #[test]
    fn json_escapes_what_serde_leaves_and_reads_back_the_same() {
        let names = [
            "a\x1b[31m\x07\nb",
            "c\u{7f}\u{9b}d\u{202e}e",
            "zw\u{200b}\u{e0041}",
            "plain é",
        ];
        let pretty = serde_json::to_string_pretty(&names).unwrap();
        let escaped = json(&pretty);
        assert!(escaped.chars().all(|c| c == '\n' || prints(c)), "{escaped}");
        assert!(escaped.contains(r"c\u007f\u009bd\u202ee"), "{escaped}");
        assert!(escaped.contains(r"zw\u200b\udb40\udc41"), "{escaped}");
        let back: Vec<String> = serde_json::from_str(&escaped).unwrap();
        assert_eq!(back, names);
    }

    proptest::proptest! {
        /// Whatever a name holds: text is one line of printing characters, escaped once;
        /// Markdown is one code span with every `|` escaped (one table cell); a workflow
        /// command's data stays on its line and a property holds no `:` or `,`.
        #[test]
        fn no_name_escapes_its_output(name in "(.|[\\x00-\\x1f\\x7f-\\u{9f}\\u{200b}-\\u{202e}|`])*") {
            let shown = text(&name);
            proptest::prop_assert!(shown.chars().all(prints));
            proptest::prop_assert_eq!(text(&shown), shown.clone());
            let md = markdown(&name);
            proptest::prop_assert!(md.chars().all(prints));
            let unescaped_pipes = md.match_indices('|').filter(|(i, _)| !md[..*i].ends_with('\\'));
            proptest::prop_assert_eq!(unescaped_pipes.count(), 0);
            let data = github_data(&name);
            proptest::prop_assert!(data.chars().all(prints));
            let property = github_property(&name);
            proptest::prop_assert!(!property.contains([':', ',']) && property.chars().all(prints));
        }
    }

    #[test]
    fn github_data_and_property_encode_what_the_runner_decodes() {
        assert_eq!(
            github_data("100% a\r\nb: c, d\x1b[31m\u{202e}"),
            "100%25 a%0D%0Ab: c, d\\x1b[31m\\u{202e}"
        );
        assert_eq!(
            github_property("dir,x/api.toml:1\n%"),
            "dir%2Cx/api.toml%3A1%0A%25"
        );
        assert_eq!(github_data("::error::x"), "::error::x");
    }
}
