//! An image's `users` that could never be recorded or checked is refused where it is written:
//! a name not in its normal form (PEP 503, as `users --record` names the record), a user
//! named twice (also once normalised), one of 10,000 characters, and `users` on a fill image.

use crate::common::{Sandbox, xtask_in};

/// `regen --check` on api.toml with `from` replaced by `to`: exit 2, and stderr's first line
/// with the sandbox's path to api.toml made `api.toml`.
fn refused(from: &str, to: &str) -> (String, String) {
    let sb = Sandbox::new();
    let text = sb.read("api.toml");
    assert!(text.contains(from), "{from}");
    let edited = text.replacen(from, to, 1);
    sb.write("api.toml", &edited);
    let run = xtask_in(&sb, &["regen", "--check"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    let first = run.stderr.lines().next().unwrap_or_default();
    let manifest = sb.manifest().display().to_string();
    (edited, first.replacen(&manifest, "api.toml", 1))
}

/// `api.toml:LINE:COL` of the `nth` occurrence of `needle` in `text`.
fn at(text: &str, needle: &str, nth: usize) -> String {
    let i = text.match_indices(needle).nth(nth).expect(needle).0;
    let line = text[..i].matches('\n').count() + 1;
    let col = text[..i].rsplit('\n').next().unwrap().chars().count() + 1;
    format!("api.toml:{line}:{col}")
}

const USERS: &str = "users = [\"sglang==0.5.16\"]";

#[test]
fn a_user_not_in_normal_form_is_refused_with_the_normal_form() {
    let (text, first) = refused(USERS, "users = [\"SGLang==0.5.16\"]");
    let want = format!(
        "{}: error: user `SGLang`: write the package's name in its normal form (PEP 503): \"sglang==0.5.16\"",
        at(&text, "\"SGLang==0.5.16\"", 0)
    );
    assert_eq!(first, want);
}

#[test]
fn a_user_named_twice_is_refused_at_the_second() {
    let (text, first) = refused(USERS, "users = [\"sglang==0.5.16\", \"sglang==0.5.17\"]");
    let want = format!(
        "{}: error: user `sglang` is named twice",
        at(&text, "\"sglang==0.5.17\"", 0)
    );
    assert_eq!(first, want);
    let (text, first) = refused(USERS, "users = [\"sglang==0.5.16\", \"Sglang==0.5.16\"]");
    let want = format!(
        "{}: error: user `Sglang`: write the package's name in its normal form (PEP 503): \"sglang==0.5.16\"",
        at(&text, "\"Sglang==0.5.16\"", 0)
    );
    assert_eq!(first, want);
}

#[test]
fn a_user_of_10000_characters_is_refused() {
    let long = format!("users = [\"sglang=={}\"]", "1".repeat(9_992));
    let (text, first) = refused(USERS, &long);
    let want = format!(
        "{}: error: a user of 10000 bytes: write `dist==version` (at most 200)",
        at(&text, "\"sglang==111", 0)
    );
    assert_eq!(first, want);
}

#[test]
fn users_on_a_fill_image_are_refused() {
    let fill = "fill_version = \"0.3.12.post1\"\n";
    let (text, first) = refused(fill, &format!("{fill}{USERS}\n"));
    let want = format!(
        "{}: error: `users` does not apply to strategy fill: its base image has no package for them to use",
        at(&text, "\"sglang==0.5.16\"", 1)
    );
    assert_eq!(first, want);
}
