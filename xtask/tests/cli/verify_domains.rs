//! Value domains (`domain = [...]` in api.toml): `verify` derives them from the module (a
//! `Literal[...]` annotation, the codecs its schema encoder dispatches on) and fails on any
//! difference, located, and `verify --fix` writes the module's; `verify --consumer` fails on a
//! literal argument outside one. The real 0.3.12.post1 module, with api.toml (in a sandbox) or
//! the module edited.

use crate::common::{Run, Sandbox, line_of, lines_where, lone_file, xtask, xtask_in};
use mooncake_sos_testkit::module_of;

const PUT_TYPE: &str = "        type: Literal[\"dataproto\", \"dict\"] = \"dataproto\",";
const CODECS: &str = "'auto', 'ragged_tensor_dict', 'ragged_tensor', 'typed_ragged', 'ndarray', \
                      'bytes_ragged', 'media_bytes', 'media_list_ragged', 'utf8_ragged', \
                      'msgpack_ragged', 'json_ragged'";

/// The 0.3.12.post1 module, with `edits` made, in a temp dir of its own (which must outlive
/// the path): (the dir, the path, the text).
fn module(edits: &[(&str, &str)]) -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = module_of("0.3.12.post1", dir.path());
    let mut text = std::fs::read_to_string(&path).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "edit {from:?} does not apply");
        text = text.replacen(from, to, 1);
    }
    std::fs::write(&path, &text).unwrap();
    (dir, path.display().to_string(), text)
}

/// The unedited module, and a sandbox whose api.toml has [`doctor`]'s edits.
fn doctored() -> (tempfile::TempDir, String, String, Sandbox) {
    let (dir, m, text) = module(&[]);
    let repo = Sandbox::new();
    doctor(&repo);
    (dir, m, text, repo)
}

fn verify_in(repo: &Sandbox, module: &str) -> Run {
    xtask_in(repo, &["verify", "--module", module])
}

#[test]
fn a_manifest_domain_that_differs_from_the_modules_fails_located() {
    let (_dir, m, text, repo) = doctored();
    let run = verify_in(&repo, &m);
    assert_eq!(run.code, Some(1), "{run:?}");
    let put = line_of(&text, PUT_TYPE);
    let dispatch = line_of(&text, "    codec = schema.codec") + 1;
    assert_eq!(
        run.report(),
        [
            format!(
                "{m}:{dispatch}: FieldSchema.codec: domain: expected one of {CODECS}, 'zstd_ragged', found one of {CODECS} (not 'zstd_ragged')"
            ),
            format!(
                "{m}:{put}: MooncakeBundleTransfer.put: parameter 'type' domain: expected one of 'dataproto', found one of 'dataproto', 'dict' (also 'dict')"
            ),
            format!(
                "{m}:{}: MooncakeBundleTransfer.put: parameter 'namespace' domain: expected one of 'default', found no domain",
                put + 1
            ),
        ],
        "{run:?}"
    );
    assert!(
        run.last_line().starts_with("verify: 3 mismatch(es)"),
        "{run:?}"
    );
}

/// put's `type` loses a value, FieldSchema.codec gains one, put's `namespace` gets a domain
/// the module does not give it.
fn doctor(repo: &Sandbox) {
    repo.edit(
        "api.toml",
        "domain = [\"dataproto\", \"dict\"]",
        "domain = [\"dataproto\"]",
    );
    repo.edit(
        "api.toml",
        "\"json_ragged\",",
        "\"json_ragged\", \"zstd_ragged\",",
    );
    repo.edit(
        "api.toml",
        "{ name = \"namespace\", kind = \"keyword\", default = \"'default'\",",
        "{ name = \"namespace\", kind = \"keyword\", default = \"'default'\", domain = [\"default\"],",
    );
}

#[test]
fn fix_writes_the_modules_domains() {
    let (_dir, m, _, repo) = doctored();
    let run = xtask_in(&repo, &["verify", "--fix", "--module", &m]);
    assert_eq!(run.code, Some(0), "{run:?}");
    run.assert_stdout(|o| {
        o.ends_with(
            "verify --fix: 3 declaration change(s) written to api.toml (review the diff above)\n",
        )
    });
    // The three domains are api.toml's own again, byte for byte: the values that stay keep
    // their places in the codecs' array (several a line, as written).
    let after = repo.read("api.toml");
    let shipped = std::fs::read_to_string(crate::common::repo_root().join("api.toml")).unwrap();
    assert_eq!(after, shipped, "{run:?}");
    assert_eq!(
        verify_in(&repo, &m).code,
        Some(0),
        "{:?}",
        verify_in(&repo, &m)
    );
}

#[test]
fn a_module_whose_domains_changed_fails_located() {
    // get's `type` takes one more value; the encoder falls back instead of raising on an
    // unknown codec, so the codecs are no longer a closed set.
    let get_type =
        "        type: Literal[\"dataproto\", \"dict\"] = \"dataproto\",\n        fields:";
    let (_dir, m, text) = module(&[
        (
            get_type,
            "        type: Literal[\"dataproto\", \"dict\", \"tensor\"] = \"dataproto\",\n        fields:",
        ),
        (
            "        raise ValueError(f\"unsupported schema codec: {codec!r}\")",
            "        return _encode_with_fallback(path, value)",
        ),
    ]);
    let run = xtask(&["verify", "--module", &m], &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(
        run.report(),
        [
            format!(
                "{m}:{}: FieldSchema.codec: domain: expected one of {CODECS}, found no domain",
                line_of(&text, "    codec: str")
            ),
            format!(
                "{m}:{}: MooncakeBundleTransfer.get: parameter 'type' domain: expected one of 'dataproto', 'dict', found one of 'dataproto', 'dict', 'tensor' (also 'tensor')",
                line_of(&text, "\"tensor\"] = \"dataproto\"")
            ),
        ],
        "{run:?}"
    );
}

#[test]
fn a_consumers_literal_outside_a_domain_fails_at_its_place() {
    let (_dir, file) = lone_file(
        "transfer.py",
        "from mooncake.store import MooncakeDistributedStore
from mooncake.structured_object_store import FieldSchema, MooncakeBundleTransfer

t = MooncakeBundleTransfer(MooncakeDistributedStore())
kind = \"tensor\"
t.get(ref, type=\"dict\")
t.get(ref, type=kind)
t.get(ref, type=\"tensor\")
t.put(value, **{\"type\": \"tensor\"})
schemas = {\"x\": FieldSchema(\"ndarry\", nullable=False)}
",
    );
    let run = xtask(&["verify", "--consumer", &file], &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let types = "expected one of 'dataproto', 'dict'";
    let failures = lines_where(&run.stdout, |l| l.contains(": expected "));
    // `kind` is bound once: its literal reaches the call as surely as one written there.
    assert_eq!(
        failures,
        [
            format!(
                "{file}:7:17: MooncakeBundleTransfer.get: type: {types}, found 'tensor' [api-value]"
            ),
            format!(
                "{file}:8:17: MooncakeBundleTransfer.get: type: {types}, found 'tensor' [api-value]"
            ),
            format!(
                "{file}:9:25: MooncakeBundleTransfer.put: type: {types}, found 'tensor' [api-value]"
            ),
            format!(
                "{file}:10:29: FieldSchema: codec: expected one of {CODECS}, found 'ndarry'; did you mean `'ndarray'`? [api-value]"
            ),
        ],
        "{run:?}"
    );
    run.assert_stdout(|o| o.ends_with("4 finding(s): 4 against api.toml, 0 against the images\n"));
}
