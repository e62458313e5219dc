//! Every kind of bad manifest gives a located error naming the offending text.
//! Each case mutates the repository's own api.toml, so the cases track the real manifest.

mod common;

use mooncake_sos_manifest::load_str;

const API: &str = include_str!("../../api.toml");

struct Case {
    what: &'static str,
    find: &'static str,
    replace: &'static str,
    /// Text in the mutated manifest where the error must point (its first occurrence; a `|`
    /// in it marks the exact spot).
    at: &'static str,
    message: &'static str,
}

const fn case(
    what: &'static str,
    find: &'static str,
    replace: &'static str,
    at: &'static str,
    message: &'static str,
) -> Case {
    Case {
        what,
        find,
        replace,
        at,
        message,
    }
}

const CASES: &[Case] = &[
    case(
        "unterminated string",
        "name = \"mooncake-sos\"",
        "name = \"mooncake-sos",
        "\n\n# Where the module",
        "invalid basic string",
    ),
    case(
        "duplicate TOML key",
        "name = \"mooncake-sos\"",
        "name = \"mooncake-sos\"\nname = \"x\"",
        "name = \"x\"",
        "duplicate key",
    ),
    case(
        "unknown top-level key",
        "name = \"mooncake-sos\"",
        "name = \"mooncake-sos\"\ncolour = \"red\"",
        "colour",
        "unknown field `colour`",
    ),
    case(
        "unknown upstream key",
        "prs = [",
        "pr_list = [1]\nprs = [",
        "pr_list",
        "unknown field `pr_list`",
    ),
    case(
        "missing upstream key",
        "module = \"mooncake.structured_object_store\"\n",
        "",
        "[upstream]",
        "missing field `module`",
    ),
    case(
        "wrong type: prs",
        "prs = [2907, 3023, 3013, 3024]",
        "prs = \"2907\"",
        "\"2907\"",
        "invalid type",
    ),
    case(
        "wrong type: frozen",
        "frozen = true",
        "frozen = \"yes\"",
        "\"yes\"",
        "invalid type",
    ),
    case(
        "wrong type: params",
        "params = [{ name = \"result\", type = \"Any\" }]",
        "params = 3",
        "params = |3",
        "invalid type",
    ),
    case(
        "name not kebab-case",
        "name = \"mooncake-sos\"",
        "name = \"Mooncake SOS\"",
        "\"Mooncake SOS\"",
        "invalid name",
    ),
    case(
        "commit too short",
        "commit = \"4dbe5a4c194669850e9abad61172e9878b245b15\"",
        "commit = \"4dbe5a4c\"",
        "\"4dbe5a4c\"",
        "invalid commit",
    ),
    case(
        "commit uppercase",
        "4dbe5a4c194669850e9abad61172e9878b245b15",
        "4DBE5A4C194669850E9ABAD61172E9878B245B15",
        "\"4DBE5A4C",
        "invalid commit",
    ),
    case(
        "sha256 not 64 hex",
        "6f2361e68655784a71348b40b963883ea369553f52e360b98a76dfaaa3cec3b0",
        "6f2361e6-not-hex",
        "\"6f2361e6-not-hex\"",
        "invalid sha256",
    ),
    case(
        "negative PR number",
        "prs = [2907,",
        "prs = [-2907,",
        "-2907",
        "invalid PR number",
    ),
    case(
        "raw_base_url not http",
        "raw_base_url = \"https://raw.githubusercontent.com\"",
        "raw_base_url = \"ftp://x\"",
        "\"ftp://x\"",
        "invalid raw_base_url",
    ),
    case(
        "bad version",
        "fill_version = \"0.3.12.post1\"",
        "fill_version = \"0.3.12-post1\"",
        "\"0.3.12-post1\"",
        "invalid version",
    ),
    case(
        "bad base version",
        "base_version = \"0.3.11.post1\"",
        "base_version = \"latest\"",
        "\"latest\"",
        "invalid version",
    ),
    case(
        "symbol name not an identifier",
        "name = \"FieldSchema\"",
        "name = \"Field-Schema\"",
        "\"Field-Schema\"",
        "invalid symbol name",
    ),
    case(
        "parameter name is a keyword",
        "{ name = \"data\", type = \"Any\" }",
        "{ name = \"class\", type = \"Any\" }",
        "\"class\", type",
        "invalid parameter name",
    ),
    case(
        "duplicate symbol",
        "name = \"import_ref\"",
        "name = \"export_ref\"",
        "\"export_ref\"\nkind = \"alias\"\ntarget = \"import",
        "duplicate symbol `export_ref`",
    ),
    case(
        "duplicate parameter",
        "{ name = \"partition\",",
        "{ name = \"namespace\",",
        "\"namespace\", kind = \"keyword\", default = \"'default'\", rust = \"string\" },\n    { name = \"stage\"",
        "duplicate parameter `namespace`",
    ),
    case(
        "duplicate method",
        "name = \"cleanup_dataproto\"",
        "name = \"put\"",
        "\"put\"\nreturns = \"None\"",
        "duplicate method `put`",
    ),
    case(
        "unknown symbol kind",
        "kind = \"dataclass\"",
        "kind = \"enum\"",
        "\"enum\"",
        "unknown symbol kind",
    ),
    case(
        "unknown parameter kind",
        "{ name = \"type\", kind = \"keyword\", default = \"'dataproto'\", domain = [\"dataproto\", \"dict\"], rust = \"string\" },\n    { name = \"namespace\"",
        "{ name = \"type\", kind = \"kwonly\", default = \"'dataproto'\", domain = [\"dataproto\", \"dict\"], rust = \"string\" },\n    { name = \"namespace\"",
        "\"kwonly\"",
        "unknown parameter kind",
    ),
    case(
        "domain not a list",
        "domain = [\"dataproto\", \"dict\"]",
        "domain = \"dataproto\"",
        "\"dataproto\", rust",
        "invalid type: string \"dataproto\", expected a sequence",
    ),
    case(
        "domain value not a string",
        "domain = [\"dataproto\", \"dict\"]",
        "domain = [\"dataproto\", 2]",
        "2]",
        "invalid type: integer `2`, expected a string",
    ),
    case(
        "empty domain",
        "domain = [\"dataproto\", \"dict\"]",
        "domain = []",
        "[], rust",
        "an empty domain",
    ),
    case(
        "duplicate domain value",
        "domain = [\"dataproto\", \"dict\"]",
        "domain = [\"dataproto\", \"dict\", \"dataproto\"]",
        "\"dict\", |\"dataproto\"]",
        "duplicate domain value \"dataproto\"",
    ),
    case(
        "default outside the domain",
        "domain = [\"dataproto\", \"dict\"]",
        "domain = [\"dict\"]",
        "\"'dataproto'\", domain = [\"dict\"]",
        "default 'dataproto' is not in the parameter's domain",
    ),
    case(
        "positional after keyword-only",
        "{ name = \"policy\", kind = \"keyword\", default = \"None\" }",
        "{ name = \"policy\", default = \"None\" }",
        "\"policy\"",
        "positional parameter `policy` after a keyword-only one",
    ),
    case(
        "required after default",
        "{ name = \"buffer_pool\", type = \"Any\", default = \"None\" }",
        "{ name = \"buffer_pool\", type = \"Any\" }",
        "\"buffer_pool\"",
        "without a default follows one with a default",
    ),
    case(
        "unknown rust type",
        "rust = \"rows\"",
        "rust = \"slice\"",
        "\"slice\"",
        "unknown rust type",
    ),
    case(
        "rust type on a positional parameter",
        "{ name = \"data\", type = \"Any\" }",
        "{ name = \"data\", type = \"Any\", rust = \"string\" }",
        "\"string\" },\n    { name = \"type\"",
        "they form the option struct",
    ),
    case(
        "alias without target",
        "target = \"export_dataproto_ref\"\n",
        "",
        "\"export_ref\"",
        "an alias needs `target`",
    ),
    case(
        "key not for this kind",
        "kind = \"dataclass\"\nfrozen = true",
        "kind = \"class\"\nfrozen = true",
        "true\nfields",
        "`frozen` does not apply to a class symbol",
    ),
    case(
        "default_factory on a parameter",
        "{ name = \"buffer_pool\", type = \"Any\", default = \"None\" }",
        "{ name = \"buffer_pool\", type = \"Any\", default_factory = \"dict\" }",
        "default_factory = |\"dict\" },\n]\n\n[[symbol.method]]",
        "default_factory applies to dataclass fields only",
    ),
    case(
        "overload keeps an object address",
        "overload = \"config: dict\"",
        "overload = \"config: X = <X object at 0x7f00>\"",
        "\"config: X = <X",
        "without ` at 0x...`",
    ),
    case(
        "overload unbalanced",
        "overload = \"config: dict\"",
        "overload = \"config: dict[str\"",
        "\"config: dict[str",
        "invalid overload: unclosed bracket",
    ),
    case(
        "unknown use",
        "use = \"optional\"\noverload = \"buffer_ptr: int, size: int\"",
        "use = \"maybe\"\noverload = \"buffer_ptr: int, size: int\"",
        "\"maybe\"",
        "unknown `use` \"maybe\"",
    ),
    case(
        "unknown by",
        "by = \"consumer\"\nreason = \"the consumer makes its store",
        "by = \"miles\"\nreason = \"the consumer makes its store",
        "\"miles\"",
        "unknown `by` \"miles\"",
    ),
    case(
        "unknown access",
        "access = \"write\"",
        "access = \"append\"",
        "\"append\"",
        "unknown access \"append\"",
    ),
    case(
        "access on a method",
        "object = \"MooncakeDistributedStore.get\"\n",
        "object = \"MooncakeDistributedStore.get\"\naccess = \"read\"\n",
        "\"MooncakeDistributedStore.get\"",
        "`access` applies to attribute entries only",
    ),
    case(
        "native member declared twice",
        "object = \"MooncakeDistributedStore.get_into\"",
        "object = \"MooncakeDistributedStore.get\"",
        "\"MooncakeDistributedStore.get\"\nuse",
        "`MooncakeDistributedStore.get` is declared twice",
    ),
    case(
        "sibling outside the package",
        "module = \"mooncake.buffer_pool\"",
        "module = \"numpy.linalg\"",
        "\"numpy.linalg\"",
        "is not in the package `mooncake`",
    ),
    case(
        "sibling is the native module",
        "module = \"mooncake.buffer_pool\"",
        "module = \"mooncake.store\"",
        "\"mooncake.store\"",
        "is the native module",
    ),
    case(
        "native role class not a name",
        "config = \"ReplicateConfig\" }",
        "config = \"Replicate Config\" }",
        "\"Replicate Config\"",
        "invalid native role class",
    ),
    case(
        "unknown sibling key",
        "module = \"mooncake.buffer_pool\"",
        "module = \"mooncake.buffer_pool\"\nlazy = true",
        "lazy",
        "unknown field `lazy`",
    ),
    case(
        "native check doubled",
        "attribute = \"replica_num\"",
        "attribute = \"replica_num\"\noverload = \"x\"",
        "\"x\"",
        "either overload or attribute",
    ),
    case(
        "unknown strategy",
        "strategy = \"pin\"",
        "strategy = \"patch\"",
        "\"patch\"",
        "unknown strategy",
    ),
    case(
        "pin without base_package",
        "base_package = \"mooncake-transfer-engine-cuda13\"\n",
        "",
        "[image.cuda]",
        "needs `base_package`",
    ),
    case(
        "fill key on a pin image",
        "base_package = \"mooncake-transfer-engine-cuda13\"",
        "base_package = \"mooncake-transfer-engine-cuda13\"\nfill_version = \"1.0\"",
        "\"1.0\"",
        "`fill_version` does not apply to strategy pin",
    ),
    case(
        "dockerfile outside the repo",
        "dockerfile = \"docker/Dockerfile\"",
        "dockerfile = \"../Dockerfile\"",
        "\"../Dockerfile\"",
        "a `..` part",
    ),
    case(
        "image_copy_from, derived now",
        "module = \"mooncake_sos\"",
        "module = \"mooncake_sos\"\nimage_copy_from = \"/etc/passwd\"",
        "\"/etc/passwd\"",
        "`image_copy_from` is derived now",
    ),
    case(
        "two images, one dockerfile",
        "dockerfile = \"docker/Dockerfile.rocm\"",
        "dockerfile = \"docker/Dockerfile\"",
        "\"docker/Dockerfile\"\nstrategy = \"fill\"",
        "writes docker/Dockerfile too",
    ),
    case(
        "first_release without package",
        "first_release_package = \"mooncake-transfer-engine-non-cuda\"\n",
        "",
        "\"0.3.12.post1\"",
        "first_release needs first_release_package",
    ),
    case(
        "build_py without variant",
        "build_py_variant = \"cu130\"\n",
        "",
        "\"docker/build.py\"",
        "build_py needs build_py_variant",
    ),
    case(
        "bad base image tag",
        "base_tag = \"v0.5.16-cu130\"",
        "base_tag = \"v0.5.16 cu130\"",
        "\"v0.5.16 cu130\"",
        "invalid base image tag",
    ),
    case(
        "shim module not an identifier",
        "module = \"mooncake_sos\"",
        "module = \"mooncake-sos\"",
        "module = |\"mooncake-sos\"",
        "invalid shim module",
    ),
    case(
        "int8 value out of range",
        "dtype = \"int32\"\nvalue = \"[[0, 0, 1, 1, 1]",
        "dtype = \"int8\"\nvalue = \"[[0, 300, 1, 1, 1]",
        "value = |\"[[0, 300",
        "300 is outside int8 (-128 to 127)",
    ),
    case(
        "uint8 negative value",
        "dtype = \"int32\"\nvalue = \"[[0, 0, 1, 1, 1]",
        "dtype = \"uint8\"\nvalue = \"[[0, -1, 1, 1, 1]",
        "value = |\"[[0, -1",
        "-1 is outside uint8 (0 to 255)",
    ),
    case(
        "fraction in an integer dtype",
        "dtype = \"int32\"\nvalue = \"[[0, 0, 1, 1, 1]",
        "dtype = \"int32\"\nvalue = \"[[0, 1.5, 1, 1, 1]",
        "value = |\"[[0, 1.5",
        "1.5 is not an integer, which int32 needs",
    ),
    case(
        "float16 overflow",
        "dtype = \"float32\"\nvalue = \"[0.5, -1.25, 3.0e-8]",
        "dtype = \"float16\"\nvalue = \"[0.5, 1e10, 3.0e-8]",
        "value = |\"[0.5, 1e10",
        "10000000000 is outside float16 (-65504 to 65504)",
    ),
    case(
        "shim named like a standard-library module",
        "module = \"mooncake_sos\"",
        "module = \"os\"",
        "module = |\"os\"",
        "is a Python standard-library module",
    ),
    case(
        "shim named like the upstream package",
        "module = \"mooncake_sos\"",
        "module = \"mooncake\"",
        "module = |\"mooncake\"",
        "the upstream package's own name",
    ),
    case(
        "shell in the upstream path",
        "path = \"mooncake-wheel/mooncake/structured_object_store.py\"",
        "path = 'x\"; touch pwned; echo \".py'",
        "path = |'x",
        "invalid upstream path",
    ),
    case(
        "newline in the upstream path",
        "path = \"mooncake-wheel/mooncake/structured_object_store.py\"",
        "path = \"a\\nRUN curl x | sh\\n.py\"",
        "path = |\"a",
        "a line break in `path`",
    ),
    case(
        "command substitution in the raw base URL",
        "raw_base_url = \"https://raw.githubusercontent.com\"",
        "raw_base_url = \"https://x/$(id)\"",
        "raw_base_url = |\"https",
        "invalid raw_base_url",
    ),
    case(
        "a dockerfile path with a space",
        "dockerfile = \"docker/Dockerfile\"",
        "dockerfile = \"docker/Docker file\"",
        "\"docker/Docker file\"",
        "the character ' '",
    ),
    case(
        "a parameter Rust cannot name",
        "{ name = \"data\", type = \"Any\" }",
        "{ name = \"self\", type = \"Any\" }",
        "{ name = |\"self\"",
        "cannot be a Rust identifier",
    ),
    case(
        "a parameter named _",
        "{ name = \"data\", type = \"Any\" }",
        "{ name = \"_\", type = \"Any\" }",
        "{ name = |\"_\"",
        "cannot be a Rust identifier",
    ),
    case(
        "a class named after a Rust keyword",
        "name = \"MooncakeBundleTransfer\"",
        "name = \"fn\"",
        "name = |\"fn\"",
        "is a Rust keyword",
    ),
    case(
        "two methods whose option structs collide with the class's",
        "name = \"cleanup_dataproto\"",
        "name = \"mooncake_bundle_transfer\"",
        "name = |\"mooncake_bundle_transfer\"",
        "both become the Rust name `MooncakeBundleTransferOptions`",
    ),
    case(
        "a class named like the runtime's Store",
        "name = \"MooncakeBundleTransfer\"",
        "name = \"Store\"",
        "name = |\"Store\"",
        "which the generated crate already uses",
    ),
    case(
        "a function named load",
        "name = \"export_ref\"",
        "name = \"load\"",
        "name = |\"load\"",
        "which the generated crate already uses",
    ),
    case(
        "a symbol named like the shim's check",
        "name = \"import_ref\"",
        "name = \"check\"",
        "name = |\"check\"",
        "would rebind the shim's own `check`",
    ),
    case(
        "a private symbol",
        "name = \"import_ref\"",
        "name = \"_check_params\"",
        "name = |\"_check_params\"",
        "is private",
    ),
    case(
        "a method named crate",
        "name = \"cleanup_dataproto\"",
        "name = \"crate\"",
        "name = |\"crate\"",
        "cannot be a Rust identifier",
    ),
    case(
        "a control character",
        "condition = \"the base",
        "condition = \"\\u001b[2Jthe base",
        "condition = |\"",
        "a control character (U+001B) in `condition`",
    ),
    case(
        "a setup key twice",
        "\"rdma_devices\", \"master_server_addr\"",
        "\"rdma_devices\", \"rdma_devices\"",
        "\"rdma_devices\", |\"rdma_devices\"",
        "dict key `rdma_devices` is listed twice",
    ),
    case(
        "a setup key that is no identifier",
        "\"rdma_devices\", \"master_server_addr\"",
        "\"rdma_devices\", \"master server\"",
        "|\"master server\"",
        "invalid dict key (a Python identifier)",
    ),
    case(
        "dict keys on an attribute",
        "access = \"write\"\nby = \"consumer\"",
        "access = \"write\"\ndict_keys = [\"a\"]\nby = \"consumer\"",
        "|[\"a\"]",
        "`dict_keys` applies to callable entries only",
    ),
    case(
        "two images, one build.py variant",
        "build_py_variant = \"rocm720-mi35x\"",
        "build_py_variant = \"cu130\"",
        "region.\nbuild_py = \"docker/build.py\"\nbuild_py_variant = |\"cu130\"",
        "one variant builds one image",
    ),
    case(
        "a native module outside the package",
        "module = \"mooncake.engine\"\nobject = \"TransferEngine\"\n",
        "module = \"torch.engine\"\nobject = \"TransferEngine\"\n",
        "|\"torch.engine\"",
        "native module `torch.engine` is not in the package `mooncake`",
    ),
    case(
        "the upstream module as a native module",
        "module = \"mooncake.engine\"\nobject = \"TransferEngine\"\n",
        "module = \"mooncake.structured_object_store\"\nobject = \"TransferEngine\"\n",
        "|\"mooncake.structured_object_store\"\nobject",
        "is the upstream module itself, not an extension module",
    ),
    case(
        "a native module that is no dotted name",
        "module = \"mooncake.engine\"\nobject = \"TransferEngine\"\n",
        "module = \"mooncake.engine; rm -rf /\"\nobject = \"TransferEngine\"\n",
        "|\"mooncake.engine; rm",
        "invalid native module (a dotted Python name)",
    ),
    case(
        "a user module outside the package",
        "user_modules = [\"mooncake.engine\"]",
        "user_modules = [\"sglang.srt\"]",
        "|\"sglang.srt\"",
        "user module `sglang.srt` is not a module of the package",
    ),
    case(
        "a user module that is no dotted name",
        "user_modules = [\"mooncake.engine\"]",
        "user_modules = [\"mooncake.engine $(id)\"]",
        "|\"mooncake.engine $(id)\"",
        "invalid user module (a dotted Python name)",
    ),
];

#[test]
fn every_bad_manifest_is_located() {
    assert!(CASES.len() >= 25);
    let mut failures = Vec::new();
    for c in CASES {
        assert!(
            API.contains(c.find),
            "{}: api.toml no longer contains {:?}",
            c.what,
            c.find
        );
        let text = API.replacen(c.find, c.replace, 1);
        let Err(diags) = load_str("api.toml", &text) else {
            failures.push(format!("{}: accepted", c.what));
            continue;
        };
        let (anchor, bar) = match c.at.split_once('|') {
            Some((before, after)) => (format!("{before}{after}"), before.len()),
            None => (c.at.to_string(), 0),
        };
        let Some(offset) = text.find(&anchor).map(|i| i + bar) else {
            failures.push(format!(
                "{}: anchor {:?} not in the mutated text",
                c.what, c.at
            ));
            continue;
        };
        let (line, col) = common::line_col(&text, offset);
        let want = format!("api.toml:{line}:{col}");
        let rendered = diags.to_string();
        let first = &diags.0[0];
        // The rendering names the location on its first line and shows the offending line.
        let offending = text[offset..].lines().next().unwrap_or_default().trim();
        if first.location() != want
            || !first.message.contains(c.message)
            || !rendered.starts_with(&format!("{want}: error: "))
            || !rendered.contains(offending)
        {
            failures.push(format!(
                "{}: want {want} {:?} showing {offending:?}, got\n{rendered}",
                c.what, c.message
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn all_errors_are_reported_at_once() {
    let text = API
        .replacen("4dbe5a4c194669850e9abad61172e9878b245b15", "nothex", 1)
        .replacen("fill_version = \"0.3.12.post1\"", "fill_version = \"x\"", 1);
    let diags = load_str("api.toml", &text).unwrap_err();
    assert_eq!(diags.0.len(), 2, "{diags}");
}

#[test]
fn arbitrary_garbage_is_an_error_not_a_panic() {
    for text in [
        "",
        "\u{0}",
        "[[symbol]]",
        "name = 1",
        "[upstream]\n[upstream]",
        "\u{feff}name = \"x\"",
        "ë = 1",
    ] {
        let err = load_str("api.toml", text).unwrap_err().to_string();
        assert!(err.starts_with("api.toml:"), "{text:?}: {err}");
    }
}

#[test]
fn the_real_manifest_is_valid() {
    let api = load_str("api.toml", API).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(
        api.symbol_names(),
        [
            "FieldSchema",
            "MooncakeBundleTransfer",
            "export_ref",
            "import_ref"
        ]
    );
}
