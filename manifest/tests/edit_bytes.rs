//! `bump` and `matrix --record` edit api.toml through `edit::set_pin` and
//! `edit::set_first_release`, on the text `layout` gives every edit (no byte order mark, LF) and back: only the values
//! change, byte for byte, whatever the file's style (LF or CRLF, a byte order mark, spacing,
//! quotes, comments), tried on the repository's api.toml restyled at random (proptest). Found
//! here: toml_edit rewrote every CRLF line as LF and dropped a byte order mark.

use mooncake_sos_manifest::edit as pin;
use mooncake_sos_manifest::layout::Layout;
use proptest::prelude::*;

const API_TOML: &str = include_str!("../../api.toml");
const COMMIT: &str = "4dbe5a4c194669850e9abad61172e9878b245b15";
const SHA: &str = "6f2361e68655784a71348b40b963883ea369553f52e360b98a76dfaaa3cec3b0";
const NEW_COMMIT: &str = "5dbe5a4c194669850e9abad61172e9878b245b15";
const NEW_SHA: &str = "7f2361e68655784a71348b40b963883ea369553f52e360b98a76dfaaa3cec3b0";

#[derive(Debug, Clone)]
struct Style {
    crlf: bool,
    bom: bool,
    /// What goes around `=` on the pin lines.
    equals: &'static str,
    /// Literal strings ('...') for the pin values.
    literal: bool,
    /// A comment after each pin value.
    comment: Option<&'static str>,
    /// A comment line between the two pin lines.
    between: bool,
}

fn style() -> impl Strategy<Value = Style> {
    (
        any::<bool>(),
        any::<bool>(),
        prop::sample::select(vec![" = ", "=", "\t=\t", "   =  "]),
        any::<bool>(),
        prop::option::of(prop::sample::select(vec![
            "  # the pin",
            "# \"quoted\" = 'x'",
            " #",
        ])),
        any::<bool>(),
    )
        .prop_map(|(crlf, bom, equals, literal, comment, between)| Style {
            crlf,
            bom,
            equals,
            literal,
            comment,
            between,
        })
}

fn restyle(s: &Style) -> String {
    let q = if s.literal { '\'' } else { '"' };
    let c = s.comment.unwrap_or("");
    let mut text = API_TOML
        .replace(
            &format!("commit = \"{COMMIT}\"\n"),
            &format!(
                "commit{}{q}{COMMIT}{q}{c}\n{}",
                s.equals,
                if s.between { "# between\n" } else { "" }
            ),
        )
        .replace(
            &format!("sha256 = \"{SHA}\"\n"),
            &format!("sha256{}{q}{SHA}{q}{c}\n", s.equals),
        );
    assert!(text.contains("# between") == s.between);
    if s.crlf {
        text = text.replace('\n', "\r\n");
    }
    if s.bom {
        text.insert(0, '\u{feff}');
    }
    text
}

/// `edit` made as the commands make it (`Manifest::edit`): on the file's text without its
/// byte order mark and in LF, the file's own put back after.
fn edited(text: &str, edit: impl FnOnce(&str) -> Result<String, String>) -> String {
    let (layout, plain) = Layout::split(text);
    layout.restore(&edit(&plain).unwrap())
}

/// Lines with their endings.
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn set_pin_changes_only_the_two_values(s in style()) {
        let before = restyle(&s);
        let after = edited(&before, |t| pin::set_pin(t, NEW_COMMIT, NEW_SHA));
        let (a, b) = (lines(&before), lines(&after));
        prop_assert_eq!(a.len(), b.len());
        let mut changed = 0;
        for (old, new) in a.iter().zip(&b) {
            if old == new {
                continue;
            }
            changed += 1;
            // The same line with the old value (in its quotes) swapped for the new one.
            let swapped = old
                .replace(&format!("'{COMMIT}'"), &format!("\"{NEW_COMMIT}\""))
                .replace(&format!("\"{COMMIT}\""), &format!("\"{NEW_COMMIT}\""))
                .replace(&format!("'{SHA}'"), &format!("\"{NEW_SHA}\""))
                .replace(&format!("\"{SHA}\""), &format!("\"{NEW_SHA}\""));
            prop_assert_eq!(&swapped, new);
        }
        prop_assert_eq!(changed, 2);
        // And the manifest still loads, with the new pin.
        let api = mooncake_sos_manifest::load_str("api.toml", &after).unwrap();
        prop_assert_eq!(api.upstream.commit, NEW_COMMIT);
    }

    /// A key that is missing has to be inserted (toml_edit writes it): the file keeps its
    /// line endings and its byte order mark, and only lines are added.
    #[test]
    fn an_inserted_key_keeps_the_files_line_endings(s in style()) {
        let mut before = restyle(&s);
        let from = before.find("first_release = ").unwrap();
        let to = from + before[from..].find('\n').unwrap() + 1;
        before.replace_range(from..to, "");
        let after = edited(&before, |t| {
            pin::set_first_release(t, "mooncake-transfer-engine-non-cuda", "0.3.12.post1")
        });
        prop_assert_eq!(after.starts_with('\u{feff}'), s.bom);
        let bare_lf = after.matches('\n').count() - after.matches("\r\n").count();
        if s.crlf {
            prop_assert_eq!(bare_lf, 0, "{}", after);
        } else {
            prop_assert!(!after.contains('\r'));
        }
        // The file is the old one with one line added.
        let (a, b) = (lines(&before), lines(&after));
        prop_assert_eq!(b.len(), a.len() + 1);
        let added = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
        prop_assert_eq!(&b[added + 1..], &a[added..]);
        prop_assert!(b[added].starts_with("first_release"), "{}", b[added]);
    }
}
