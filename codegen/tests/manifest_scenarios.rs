//! `[[scenario]]`: the consumer's calls with its values. The real ones reach the model as
//! written; every bad one is a located error. Each case edits the repository's own api.toml.

mod common;

use mooncake_sos_manifest::load_str;
use mooncake_sos_manifest::model::PyData;

const API: &str = include_str!("../../api.toml");

/// The first error of `text`: where it points (`at`, first occurrence; a `|` marks the exact
/// spot) and its message.
fn error_at(text: &str, at: &str, message: &str) {
    let (anchor, bar) = match at.split_once('|') {
        Some((before, after)) => (format!("{before}{after}"), before.len()),
        None => (at.to_string(), 0),
    };
    let offset = text
        .find(&anchor)
        .unwrap_or_else(|| panic!("{at:?} not in the text"))
        + bar;
    common::first_error_at(text, offset, message);
}

/// api.toml with the first `find` replaced.
fn edit(find: &str, replace: &str) -> String {
    assert!(API.contains(find), "api.toml no longer has {find:?}");
    API.replacen(find, replace, 1)
}

#[test]
fn the_consumers_scenarios_reach_the_model() {
    let api = load_str("api.toml", API).unwrap_or_else(|d| panic!("{d}"));
    let s = &api.scenarios[0];
    assert_eq!(s.name, "rollout-manager-to-trainer");
    assert_eq!(s.key_prefix, "miles-object-store");
    let sizes: Vec<(&str, u64)> = s
        .clients
        .iter()
        .map(|c| (c.name.as_str(), c.global_segment_size))
        .collect();
    // Both kinds of client: one contributing a segment, the rollout manager's none.
    assert_eq!(sizes, [("trainer", 64 << 20), ("rollout_manager", 0)]);
    assert_eq!(s.clients[s.put.by].name, "rollout_manager");
    assert_eq!(s.clients[s.get.by].name, "trainer");
    assert_eq!(
        (s.put.kind.as_str(), s.put.namespace.as_str()),
        ("dict", "miles")
    );
    let tokens = &s.fields[0];
    assert_eq!(
        (
            tokens.codec.as_str(),
            tokens.section.as_str(),
            tokens.dtype.as_deref()
        ),
        ("typed_ragged", "non_tensor_batch", Some("int64"))
    );
    // Beyond 2^53: a value, not a float.
    let PyData::List(rows) = &tokens.value else {
        panic!("{:?}", tokens.value)
    };
    assert_eq!(rows[2], {
        let ints = [13, -1, 0, 9007199254740993];
        PyData::List(ints.into_iter().map(PyData::Int).collect())
    });
    // Every codec the consumer uses, somewhere; the torch one says so.
    let codecs: Vec<&str> = api
        .scenarios
        .iter()
        .flat_map(|s| s.fields.iter().map(|f| f.codec.as_str()))
        .collect();
    for codec in [
        "typed_ragged",
        "ndarray",
        "ragged_tensor_dict",
        "msgpack_ragged",
        "auto",
    ] {
        assert!(codecs.contains(&codec), "{codec}");
    }
    let replicated = api.scenarios.iter().find(|s| s.put.replica_num.is_some());
    assert_eq!(replicated.unwrap().put.replica_num, Some(2));
    for s in &api.scenarios {
        let torch = s.fields.iter().any(|f| f.codec == "ragged_tensor_dict");
        assert_eq!(s.needs_torch, torch, "{}", s.name);
    }
}

#[test]
fn bad_scenarios_are_located() {
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "name = \"rollout-manager-to-trainer\"",
            "name = \"Rollout Manager\"",
            "name = |\"Rollout Manager\"",
            "invalid scenario name",
        ),
        (
            "name = \"replicated-put\"",
            "name = \"rollout-manager-to-trainer\"",
            "name = |\"rollout-manager-to-trainer\"\nkey_prefix = \"miles-object-store\"\n\n[[scenario.client]]\nname = \"trainer_0\"",
            "duplicate scenario",
        ),
        (
            "key_prefix = \"miles-object-store\"",
            "key_prefix = \"miles/$(id)\"",
            "key_prefix = |\"miles/$(id)\"",
            "invalid key_prefix",
        ),
        (
            "global_segment_size = 0\n",
            "global_segment_size = -1\n",
            "global_segment_size = |-1",
            "global_segment_size must be between 0 and",
        ),
        (
            "local_buffer_size = 33554432",
            "local_buffer_size = 0",
            "local_buffer_size = |0",
            "local_buffer_size must be between 1 and",
        ),
        (
            "protocol = \"tcp\"",
            "protocol = \"rdma\"",
            "protocol = |\"rdma\"",
            "the smoke runs on loopback",
        ),
        (
            "name = \"rollout_manager\"",
            "name = \"trainer\"",
            "name = |\"trainer\"\nglobal_segment_size = 0",
            "duplicate client `trainer`",
        ),
        (
            "by = \"rollout_manager\"",
            "by = \"nobody\"",
            "by = |\"nobody\"",
            "no client named \"nobody\"",
        ),
        (
            "type = \"dict\"\nnamespace",
            "type = \"dataproto\"\nnamespace",
            "type = |\"dataproto\"",
            "invalid put type",
        ),
        (
            "chunk_bytes = 4096",
            "chunk_bytes = 0",
            "chunk_bytes = |0",
            "chunk_bytes must be between 1 and",
        ),
        (
            "replica_num = 2",
            "replica_num = 3",
            "replica_num = |3",
            "needs as many clients contributing a segment; scenario `replicated-put` has 2",
        ),
        (
            "needs = [\"torch\"]",
            "needs = [\"cuda\"]",
            "needs = [|\"cuda\"]",
            "unknown need \"cuda\"",
        ),
        (
            "needs = [\"torch\"]\n",
            "",
            "codec = |\"ragged_tensor_dict\"",
            "codec ragged_tensor_dict needs torch",
        ),
        (
            "codec = \"msgpack_ragged\"",
            "codec = \"pickle\"",
            "codec = |\"pickle\"",
            "unknown codec \"pickle\"",
        ),
        (
            "codec = \"auto\"\nsection = \"meta_info\"\nvalue = \"7\"",
            "codec = \"ndarray\"\nsection = \"meta_info\"\ndtype = \"int64\"\nvalue = \"7\"",
            "codec = |\"ndarray\"\nsection = \"meta_info\"",
            "section meta_info takes codec auto",
        ),
        (
            "dtype = \"float32\"\nvalue = \"[0.5",
            "dtype = \"float128\"\nvalue = \"[0.5",
            "dtype = |\"float128\"",
            "invalid dtype",
        ),
        (
            "dtype = \"float32\"\nvalue = \"[0.5",
            "value = \"[0.5",
            "codec = |\"ndarray\"\nsection = \"non_tensor_batch\"\nvalue",
            "codec ndarray needs a dtype",
        ),
        (
            "value = \"7\"",
            "value = \"__import__('os').system('id')\"",
            "value = |\"__import__",
            "value: not a data literal",
        ),
        (
            "value = \"7\"",
            "value = \"['\\\\ud800']\"",
            "value = |\"['\\\\ud800']\"",
            "a lone surrogate",
        ),
        (
            "value = \"7\"",
            "value = \"7  # seven\"",
            "value = |\"7  # seven\"",
            "text follows it",
        ),
        (
            "value = \"[0.5, -1.25, 3.0e-8]\"",
            "value = \"[0.5, -1.25]\"",
            "value = |\"[0.5, -1.25]\"",
            "2 rows, but the fields before have 3",
        ),
        (
            "value = \"[[0, 0, 1, 1, 1], [1, 1], [0, 1, 1, 0]]\"",
            "value = \"[[0, 0, 1, 1, 1], None, [0, 1, 1, 0]]\"",
            "value = |\"[[0, 0, 1, 1, 1], None",
            "row 1 does not fit the codec (None needs nullable = true)",
        ),
        (
            "value = \"[0.5, -1.25, 3.0e-8]\"",
            "value = \"[0.5, 'x', 1]\"",
            "value = |\"[0.5, 'x', 1]\"",
            "row 1 does not fit the codec",
        ),
        (
            "value = \"[0.5, -1.25, 3.0e-8]\"",
            "value = \"{'a': 1}\"",
            "value = |\"{'a': 1}\"",
            "the rows must be a list",
        ),
    ];
    for (find, replace, at, message) in cases {
        error_at(&edit(find, replace), at, message);
    }
}

#[test]
fn a_scenario_with_nowhere_to_put_is_located() {
    // Only the rollout manager's client: nothing contributes a segment.
    let text = edit(
        "[[scenario.client]]\nname = \"trainer\"\nglobal_segment_size = 67108864\nlocal_buffer_size = 33554432\nprotocol = \"tcp\"\n\n",
        "",
    );
    error_at(
        &text,
        "[[scenario]]\nname = \"rollout-manager-to-trainer\"",
        "no client contributes a segment",
    );
    // An unknown key is serde's located error.
    error_at(
        &edit("chunk_bytes = 4096", "chunk_bytes = 4096\nretries = 3"),
        "retries",
        "unknown field `retries`",
    );
}

/// Text nested past what the parser's recursive tree can hold (a million `-`, brackets or
/// `.b`) is a located error before it is parsed, in a scenario value and in any other Python
/// expression of the manifest; it used to overflow the stack and abort the generator.
#[test]
fn deeply_nested_expressions_are_located_not_a_stack_overflow() {
    let deep = [
        format!("{}7", "-".repeat(1_000_000)),
        format!("{}{}", "[".repeat(300_000), "]".repeat(300_000)),
        format!("a{}", ".b".repeat(500_000)),
    ];
    for value in &deep {
        error_at(
            &edit("value = \"7\"", &format!("value = \"{value}\"")),
            &format!("value = |\"{}", &value[..3]),
            "nests more deeply than",
        );
        error_at(
            &edit("default = \"'bundle'\"", &format!("default = \"{value}\"")),
            &format!("default = |\"{}", &value[..3]),
            "nests more deeply than",
        );
    }
    // Nesting a data literal may hold is still read.
    let nested = format!("{}1{}", "[".repeat(16), "]".repeat(16));
    let api = load_str(
        "api.toml",
        &edit("value = \"7\"", &format!("value = \"{nested}\"")),
    );
    assert!(api.is_ok(), "{:?}", api.err().map(|d| d.to_string()));
}

/// A value's integers are 64-bit: both ends of the range are values (-9223372036854775808 was
/// refused: its magnitude was taken as an i64 before the sign), one past them is not.
#[test]
fn the_64_bit_range_ends_are_values() {
    for (value, ok) in [
        ("-9223372036854775808", true),
        ("9223372036854775807", true),
        ("-9223372036854775809", false),
        ("9223372036854775808", false),
    ] {
        let text = edit("value = \"7\"", &format!("value = \"{value}\""));
        assert_eq!(load_str("api.toml", &text).is_ok(), ok, "{value}");
    }
}

/// A U+FFFD the value spells itself (escaped or as is) is text; a lone surrogate, which the
/// parser turned into U+FFFD silently, is refused (in the bad cases above).
#[test]
fn a_spelt_replacement_character_is_text() {
    for value in [
        "['\\\\ufffd']",
        "['\u{FFFD}']",
        "['\\\\N{REPLACEMENT CHARACTER}']",
    ] {
        let text = edit("value = \"7\"", &format!("value = \"{value}\""));
        let api = load_str("api.toml", &text);
        assert!(
            api.is_ok(),
            "{value}: {:?}",
            api.err().map(|d| d.to_string())
        );
    }
}
