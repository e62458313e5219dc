//! The typed stubs (generated/stubs/): what they say of the contract and of the images' cores,
//! and that every one is Python whatever a core record holds (Python's own `ast` reads them).

#[path = "common/mod.rs"]
mod common;

use mooncake_sos_codegen::render::{self, Cores, Output};
use mooncake_sos_manifest::model::Api;
use serde_json::{Value, json};

const API: &str = include_str!("../../api.toml");

fn api() -> Api {
    mooncake_sos_manifest::load_str("api.toml", API).unwrap()
}

/// The stubs rendered from `api` and `cores`: (path, text), in render order.
fn stubs(api: &Api, cores: &Cores) -> Vec<(String, String)> {
    render::render_all(api, cores)
        .unwrap()
        .into_iter()
        .filter_map(|o| match o {
            Output::File { path, contents } if path.as_str().starts_with("generated/stubs/") => {
                Some((path.to_string(), contents))
            }
            _ => None,
        })
        .collect()
}

fn stub<'a>(stubs: &'a [(String, String)], file: &str) -> &'a str {
    let path = format!("generated/stubs/mooncake-stubs/{file}");
    stubs
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, t)| t.as_str())
        .unwrap_or_else(|| panic!("no {path}"))
}

/// Each text parsed by python3's `ast` (as a `.pyi`); the errors, one per text that fails.
fn python_errors(texts: &[(String, String)]) -> Vec<String> {
    let program = "import ast, json, sys\nfor name, text in json.load(sys.stdin):\n    try:\n        ast.parse(text, name)\n    except SyntaxError as e:\n        print(f'{name}:{e.lineno}: {e.msg}')\n";
    let mut child = std::process::Command::new("python3")
        .args(["-I", "-c", program])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    let input = serde_json::to_vec(texts).unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), &input).unwrap();
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python3 failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

/// The images' records as JSON, for doctoring.
fn records(api: &Api) -> Vec<Value> {
    let root = mooncake_sos_testkit::repo_root();
    (api.images.iter())
        .map(|i| {
            let file = root.join(format!("cores/{}-{}.json", i.core.package, i.core.version));
            serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
        })
        .collect()
}

fn cores_of(records: &[Value]) -> Cores {
    let texts: Vec<String> = records.iter().map(Value::to_string).collect();
    Cores::from_records(&texts).unwrap()
}

/// The lines of `text` that start (after indentation) with `start`.
fn lines_starting<'a>(text: &'a str, start: &str) -> Vec<&'a str> {
    text.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with(start))
        .collect()
}

#[test]
fn the_module_stub_holds_the_contract() {
    let api = api();
    let stubs = stubs(&api, &common::image_cores(&api));
    let module = stub(&stubs, "structured_object_store.pyi");
    let codecs = "\"auto\", \"ragged_tensor_dict\", \"ragged_tensor\", \"typed_ragged\", \
                  \"ndarray\", \"bytes_ragged\", \"media_bytes\", \"media_list_ragged\", \
                  \"utf8_ragged\", \"msgpack_ragged\", \"json_ragged\"";
    assert_eq!(
        lines_starting(module, "codec:"),
        [format!("codec: Literal[{codecs}]")]
    );
    assert_eq!(
        lines_starting(module, "def __init__"),
        [
            "def __init__(self, store: Any, key_prefix: str = ..., default_chunk_bytes: int = ..., buffer_pool: Any = ...) -> None: ..."
        ]
    );
    // Keyword-only after `*`; the domain as a Literal; the config role as the core's class.
    let put = lines_starting(module, "def put(");
    assert_eq!(put.len(), 1);
    assert!(
        put[0].starts_with(
            "def put(self, data: Any, *, type: Literal[\"dataproto\", \"dict\"] = ..., "
        ),
        "{}",
        put[0]
    );
    assert!(
        put[0].contains(", config: mooncake.store.ReplicateConfig | None = ..., "),
        "{}",
        put[0]
    );
    assert_eq!(
        lines_starting(module, "export_ref"),
        ["export_ref = export_dataproto_ref"]
    );
    assert_eq!(
        lines_starting(module, "def export_dataproto_ref"),
        ["def export_dataproto_ref(ref: Any) -> dict[str, Any]: ..."]
    );
    assert_eq!(
        lines_starting(module, "@staticmethod"),
        ["@staticmethod"],
        "release_result"
    );
}

#[test]
fn the_native_stubs_hold_every_image_core_typed_from_its_docstrings() {
    let api = api();
    let stubs = stubs(&api, &common::image_cores(&api));
    let store = stub(&stubs, "store.pyi");
    // pybind11's `arg0` is positional-only; defaults are `...`; a `None` default widens.
    assert_eq!(
        lines_starting(store, "def get("),
        ["def get(self, arg0: str, /) -> Any: ..."]
    );
    assert_eq!(
        lines_starting(store, "def remove("),
        ["def remove(self, key: str, force: bool = ...) -> Any: ..."]
    );
    // The setup dict's keys (api.toml's dict_keys) as a stub-only TypedDict.
    let setup = lines_starting(store, "def setup(");
    assert_eq!(setup.len(), 2, "{setup:?}");
    assert_eq!(
        setup[1],
        "def setup(self, config: MooncakeDistributedStoreSetupConfig | dict[str, Any]) -> Any: ..."
    );
    let keys: Vec<&str> = store
        .split("class MooncakeDistributedStoreSetupConfig(TypedDict, total=False):\n")
        .nth(1)
        .unwrap()
        .lines()
        .take_while(|l| l.starts_with("    "))
        .collect();
    assert_eq!(
        keys,
        [
            "    global_segment_size: Any",
            "    local_buffer_size: Any",
            "    local_hostname: Any",
            "    master_server_addr: Any",
            "    metadata_server: Any",
            "    protocol: Any",
            "    rdma_devices: Any",
        ]
    );
    // A default before a required parameter (a binding pybind11 takes, Python does not): the
    // call by position, and the one by keyword.
    assert_eq!(
        lines_starting(store, "def load_tensor_from_safetensor("),
        [
            "def load_tensor_from_safetensor(self, key: object, file_name: str) -> Any: ...",
            "def load_tensor_from_safetensor(self, key: object = ..., *, file_name: str) -> Any: ...",
        ]
    );
    // A class without a constructor takes nothing; pybind11's metaclass is declared.
    assert!(store.contains(
        "class BufferHandle(metaclass=pybind11_type):\n    def __init__(self, *args: Never, **kwargs: Never) -> None: ...\n"
    ));
    assert_eq!(
        lines_starting(store, "RegisteredBufferPool"),
        ["RegisteredBufferPool = BufferPool"]
    );
    let engine = stub(&stubs, "engine.pyi");
    assert_eq!(
        lines_starting(engine, "def get_local_topology("),
        ["def get_local_topology(self, device_name: str | None = ...) -> Any: ..."]
    );
    // Only the CUDA image's core has the *_on_cuda methods: not every image can call them.
    assert!(!engine.contains("on_cuda"), "{engine}");
    assert!(!store.contains("on_cuda"));
    assert_eq!(python_errors(&stubs), Vec::<String>::new());
}

#[test]
fn images_that_disagree_get_what_they_all_take() {
    let api = api();
    let mut records = records(&api);
    let store = &mut records[1]["classes"]["MooncakeDistributedStore"]["members"];
    store["remove"]["overloads"] = json!(["key: str"]);
    store["__init__"]["overloads"] = json!(["name: str"]);
    store["get"] = json!({"kind": "property", "readonly": true});
    store.as_object_mut().unwrap().remove("put");
    let rendered = stubs(&api, &cores_of(&records));
    let store = stub(&rendered, "store.pyi");
    assert_eq!(
        lines_starting(store, "def remove("),
        ["def remove(self, *args: Any, **kwargs: Any) -> Any: ..."]
    );
    assert_eq!(lines_starting(store, "get: Any"), ["get: Any"]);
    // Constructors that differ are not "no constructor".
    let store_class = store
        .split("class MooncakeDistributedStore(metaclass=pybind11_type):\n")
        .nth(1)
        .unwrap();
    assert_eq!(
        lines_starting(store_class, "def __init__(").first(),
        Some(&"def __init__(self, *args: Any, **kwargs: Any) -> None: ...")
    );
    assert_eq!(lines_starting(store, "def put("), Vec::<&str>::new());
    // A module no image's record read has no stub: the checkers read the module itself.
    for r in &mut records {
        r["extensions"]["mooncake.engine"] = json!({"unread": "no torch"});
    }
    let rendered = stubs(&api, &cores_of(&records));
    assert!(rendered.iter().all(|(p, _)| !p.ends_with("engine.pyi")));
}

/// Whatever names and texts a record holds (a wheel's), every stub is Python: a keyword, a
/// mangled or a C++ name is left out, a docstring that does not parse takes anything.
#[test]
fn a_hostile_record_still_renders_python() {
    let api = api();
    let mut records = records(&api);
    let classes = &mut records[0]["classes"];
    classes["class"] = json!({"members": {}, "bases": [], "instance": {"error": "x"}});
    classes["int"] = json!({"members": {}, "bases": [], "instance": {"error": "x"}});
    let members = &mut classes["MooncakeDistributedStore"]["members"];
    for (name, overload) in [
        ("None", "a: int"),
        ("__hidden", "a: int"),
        ("dup", "a: int, a: str"),
        ("cxx", "w: mooncake::Wrapper, x: std::vector<int> = {}"),
        ("unparsed", "a: list[int"),
        ("late", "a: int = 1, /, b: str"),
        ("order", "**kw, a: int"),
        ("self_named", "self: int"),
        ("str", "value: str, other: list"),
    ] {
        members[name] = json!({"kind": "method", "overloads": [overload]});
    }
    records[1] = records[0].clone();
    let rendered = stubs(&api, &cores_of(&records));
    assert_eq!(python_errors(&rendered), Vec::<String>::new());
    let store = stub(&rendered, "store.pyi");
    for absent in ["class class", "class int", "def None", "__hidden"] {
        assert!(!store.contains(absent), "{absent}");
    }
    for (name, want) in [
        ("dup", "(self, *args: Any, **kwargs: Any) -> Any"),
        ("cxx", "(self, w: Any, x: Any = ...) -> Any"),
        ("unparsed", "(self, *args: Any, **kwargs: Any) -> Any"),
        ("order", "(self, *args: Any, **kwargs: Any) -> Any"),
        ("self_named", "(self, *args: Any, **kwargs: Any) -> Any"),
        // A member named like a builtin hides it in its class: the builtin is spelt in full.
        (
            "str",
            "(self, value: builtins.str, other: list[Any]) -> Any",
        ),
    ] {
        let def = format!("def {name}{want}: ...");
        assert_eq!(
            lines_starting(store, &format!("def {name}(")),
            [def.as_str()]
        );
    }
    assert!(store.contains("\nimport builtins\n"));
    assert_eq!(
        lines_starting(store, "def late("),
        [
            "def late(self, a: int, /, b: builtins.str) -> Any: ...",
            "def late(self, a: int = ..., /, *, b: builtins.str) -> Any: ...",
        ]
    );
}

#[test]
fn the_stubs_are_a_partial_pep561_package_rendered_the_same_every_time() {
    let api = api();
    let cores = common::image_cores(&api);
    let first = stubs(&api, &cores);
    let paths: Vec<&str> = first.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "generated/stubs/mooncake-stubs/structured_object_store.pyi",
            "generated/stubs/mooncake-stubs/store.pyi",
            "generated/stubs/mooncake-stubs/engine.pyi",
            "generated/stubs/mooncake-stubs/py.typed",
        ]
    );
    assert_eq!(stub(&first, "py.typed"), "partial\n");
    assert_eq!(first, stubs(&api, &cores));
}
