//! A whole round trip through the generated bindings: put a flat dict (numpy arrays, strings,
//! bytes, JSON rows, meta_info scalars), export the ref as JSON text, import it back, read
//! fields and rows, release, clean up, and check that no key is left.
//!
//! `cargo run --example roundtrip` uses the embedded store;
//! `cargo run --example roundtrip -- --master 127.0.0.1:50051 [--metadata URL]` a real master.
//! The venv comes from `--venv`, `$VIRTUAL_ENV` or `$MC_TEST_VENV` (scripts/setup-test-env.sh).

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

use mooncake_sos::{
    FieldSchema, GetOptions, MooncakeBundleTransfer, PutOptions, PythonEnv, Record, RefHandle,
    Rows, Store, StoreConfig,
};
use mooncake_sos_runtime::numpy::ndarray::Array2;
use mooncake_sos_runtime::pyo3::Python;
use serde_json::json;

struct Args {
    master: Option<String>,
    metadata: Option<String>,
    venv: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        master: None,
        metadata: None,
        venv: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--master" => args.master = Some(value()?),
            "--metadata" => args.metadata = Some(value()?),
            "--venv" => args.venv = Some(value()?),
            "-h" | "--help" => {
                return Err(
                    "usage: roundtrip [--master HOST:PORT] [--metadata URL] [--venv PATH]".into(),
                );
            }
            other => return Err(format!("unknown argument {other:?} (try --help)")),
        }
    }
    Ok(args)
}

fn schema(codec: &str, section: &str, dtype: Option<&str>) -> FieldSchema {
    let mut s = FieldSchema::new(codec);
    s.nullable = false;
    s.metadata.insert("section".into(), json!(section));
    if let Some(d) = dtype {
        s.metadata.insert("dtype".into(), json!(d));
    }
    s
}

fn run(args: Args) -> mooncake_sos::Result<()> {
    let env = match args.venv {
        Some(v) => PythonEnv::venv(v),
        None => PythonEnv::from_env(),
    };
    let started = Instant::now();
    let module = mooncake_sos::load(&env)?;
    println!(
        "loaded and checked {} in {:.1?} (pin {})",
        mooncake_sos::MODULE,
        started.elapsed(),
        mooncake_sos::UPSTREAM_COMMIT
    );
    let config = args.master.map(|addr| {
        let mut c = StoreConfig::loopback(addr);
        if let Some(m) = args.metadata {
            c.metadata_server = m;
        }
        c
    });
    let store = Store::open(&mooncake_sos::API, config.as_ref())?;
    println!("store: {:?}", store.kind());

    Python::attach(|py| -> mooncake_sos::Result<()> {
        let t = MooncakeBundleTransfer::new(py, &module, &store, &Default::default())?;
        let rows = 4usize;
        let data = Record::new(py);
        let ids = Array2::from_shape_vec((rows, 8), (0..rows as i64 * 8).collect())
            .map_err(|e| mooncake_sos::Error::Value(e.to_string()))?;
        data.put_array(py, "input_ids", ids)?;
        data.put_str_rows(
            py,
            "prompt",
            &["one".into(), "two".into(), "three".into(), "four".into()],
        )?;
        data.put_bytes_rows(
            py,
            "image",
            &[vec![0xff, 0xd8], vec![], vec![1, 2, 3], vec![9; 100]],
        )?;
        data.put_json(
            py,
            "extra",
            &json!([{"k": 1}, {"k": [2]}, {"k": null}, {"k": "s"}]),
        )?;
        data.put_json(py, "step", &json!(42))?;
        let schemas = BTreeMap::from([
            (
                "input_ids".to_owned(),
                schema("ndarray", "batch", Some("int64")),
            ),
            (
                "prompt".to_owned(),
                schema("utf8_ragged", "non_tensor_batch", None),
            ),
            (
                "image".to_owned(),
                schema("bytes_ragged", "non_tensor_batch", None),
            ),
            (
                "extra".to_owned(),
                schema("json_ragged", "non_tensor_batch", None),
            ),
            ("step".to_owned(), schema("auto", "meta_info", None)),
        ]);
        let put = PutOptions {
            r#type: Some("dict".into()),
            namespace: Some("example".into()),
            field_schemas: Some(schemas),
            ..Default::default()
        };
        let r = t.put(py, &data, &put)?;
        let text = RefHandle::from_value(mooncake_sos::export_ref(py, &module, &r)?)?.to_json()?;
        println!("handle: {} bytes of JSON", text.len());

        let handle = RefHandle::from_json(&text)?;
        let imported = mooncake_sos::import_ref(py, &module, &handle)?;
        let get = GetOptions {
            r#type: Some("dict".into()),
            ..Default::default()
        };
        let all = Record::from_object(&t.get(py, &imported, &get)?)?;
        println!("fields back: {:?}", all.names(py));
        println!("prompt: {:?}", all.str_rows(py, "prompt")?);
        let pick = GetOptions {
            fields: Some(vec!["prompt".into()]),
            rows: Some(Rows::Indices(vec![3, 0])),
            ..get
        };
        let some = Record::from_object(&t.get(py, &handle, &pick)?)?;
        println!("rows [3, 0] of prompt: {:?}", some.str_rows(py, "prompt")?);
        t.release_result(py, &all.dict(py))?;
        t.cleanup_dataproto(py, &handle)?;
        let left: Vec<&str> = handle
            .manifest_keys()
            .into_iter()
            .filter(|k| store.contains(k).unwrap_or(true))
            .collect();
        if !left.is_empty() {
            return Err(mooncake_sos::Error::Value(format!(
                "keys left after cleanup: {left:?}"
            )));
        }
        println!("cleaned up; round trip done in {:.1?}", started.elapsed());
        Ok(())
    })?;
    store.close()
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
