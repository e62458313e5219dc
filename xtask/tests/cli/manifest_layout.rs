//! Every command that edits api.toml keeps its byte order mark and CRLF line ends (as a
//! Windows checkout has them): on a BOM + CRLF manifest, `verify --fix`, `bump`, `adopt` and
//! `matrix --record` write exactly what they write on the LF manifest, BOM and CRLF put
//! back, and `regen --check` is clean after.

use crate::common::{Run, Sandbox, stale_verdict, xtask_in};
use crate::watch::{command, online};
use mooncake_sos_testkit::{module_of, wheels_dir};

fn bom_crlf(text: &str) -> String {
    format!(
        "\u{feff}{}",
        text.replace("\r\n", "\n").replace('\n', "\r\n")
    )
}

/// Runs `edit` on `lf` (as it is) and on a copy of it in BOM + CRLF; both succeed, the
/// second's api.toml is the first's in BOM + CRLF, and each tree is current.
fn assert_layout_kept(lf: Sandbox, edit: impl Fn(&Sandbox) -> Run) {
    let crlf = Sandbox::new();
    for (path, bytes) in lf.snapshot() {
        std::fs::write(crlf.path(&path), bytes).unwrap();
    }
    crlf.write("api.toml", &bom_crlf(&lf.read("api.toml")));
    let before = lf.read("api.toml");
    for sandbox in [&lf, &crlf] {
        let run = edit(sandbox);
        assert_eq!(run.code, Some(0), "{run:?}");
        let check = xtask_in(sandbox, &["regen", "--check"]);
        assert_eq!(check.code, Some(0), "{check:?}");
    }
    let edited = lf.read("api.toml");
    assert_ne!(edited, before, "the command edited nothing");
    let got = crlf.read("api.toml");
    assert!(got.starts_with('\u{feff}'), "the byte order mark is gone");
    let bare_lf = got.matches('\n').count() - got.matches("\r\n").count();
    assert_eq!(bare_lf, 0, "lines that end in LF alone");
    assert_eq!(got, bom_crlf(&edited));
}

#[test]
fn verify_fix_keeps_the_bom_and_crlf() {
    assert_layout_kept(Sandbox::new(), |sb| {
        let module = module_of("0.3.13.post1", sb.root());
        xtask_in(
            sb,
            &["verify", "--fix", "--module", module.to_str().unwrap()],
        )
    });
}

#[test]
fn bump_keeps_the_bom_and_crlf() {
    assert_layout_kept(Sandbox::new(), |sb| {
        let module = module_of("0.3.12.post1", sb.root());
        let commit = "6041a609a8c3af35e778f70db344f145c2914980";
        let module = module.to_str().unwrap();
        xtask_in(sb, &["bump", "--commit", commit, "--module", module])
    });
}

#[test]
fn adopt_keeps_the_bom_and_crlf() {
    let online = online();
    assert_layout_kept(Sandbox::new(), |sb| {
        let args = ["--index-url", online.url.as_str(), "--offline"];
        let args = [&args[..], &["--image", "cuda", "--strategy", "overlay"]].concat();
        command("adopt", sb, online.cache.path(), &args)
    });
}

#[test]
fn matrix_record_keeps_the_bom_and_crlf() {
    let wheels = wheels_dir();
    assert_layout_kept(stale_verdict(), |sb| {
        xtask_in(sb, &["matrix", "--record", wheels.to_str().unwrap()])
    });
}
