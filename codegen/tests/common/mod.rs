//! What the manifest tests share: where an error must point.

#![allow(dead_code)] // each test binary uses a part

use mooncake_sos_manifest::load_str;

/// The 1-based line and column of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

/// `text` is refused, and its first error points at byte `offset` with `message` in it.
pub fn first_error_at(text: &str, offset: usize, message: &str) {
    let diags = load_str("api.toml", text).expect_err("accepted");
    let (line, col) = line_col(text, offset);
    let first = &diags.0[0];
    assert_eq!(
        first.location(),
        format!("api.toml:{line}:{col}"),
        "{message}: {diags}"
    );
    assert!(first.message.contains(message), "want {message:?}: {diags}");
}

/// The core records of `api`'s images, read from the repository's `cores/` (the stubs render
/// from them).
pub fn image_cores(api: &mooncake_sos_manifest::model::Api) -> mooncake_sos_codegen::render::Cores {
    let root = mooncake_sos_testkit::repo_root();
    let records: Vec<String> = api
        .images
        .iter()
        .map(|i| {
            let file = format!("cores/{}-{}.json", i.core.package, i.core.version);
            std::fs::read_to_string(root.join(&file)).unwrap_or_else(|e| panic!("{file}: {e}"))
        })
        .collect();
    mooncake_sos_codegen::render::Cores::from_records(&records).expect("the core records")
}
