//! Benchmark, run by hand (not a test): `cargo run --release --example bench [-- --master
//! HOST:PORT] [--iters N] [--big-iters N]`. Side by side in one run, medians of put and get:
//! - the Rust bindings vs the same calls from Python (64 MiB, 1 GiB), per store;
//! - the embedded store vs a raw numpy copy (64 MiB);
//! - the embedded store vs a pure-Python dict store (64 MiB);
//! - with a master: what asking "is the master alive?" costs per call (the kept connection's
//!   peek the bindings make) beside the connect probe the bindings made before.
//!
//! Rust and Python iterations interleave (alternating who goes first), so drift (page cache,
//! allocator, the master's space accounting) hits both alike.

use std::ffi::CString;
use std::time::Instant;

use mooncake_sos::{GetOptions, MooncakeBundleTransfer, PutOptions, PythonEnv, Store, StoreConfig};
use mooncake_sos_runtime::pyo3::prelude::*;
use mooncake_sos_runtime::pyo3::types::PyModule;
use mooncake_sos_runtime::{Error, Module, PyContext, Result};

const MIB: usize = 1 << 20;
const HELPER: &str = include_str!("bench_helper.py");

struct Args {
    master: Option<String>,
    iters: usize,
    big_iters: usize,
}

fn parse_args() -> std::result::Result<Args, String> {
    let mut a = Args {
        master: None,
        iters: 15,
        big_iters: 3,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let v = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let n = || v.parse::<usize>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--master" => a.master = Some(v.clone()),
            "--iters" => a.iters = n()?,
            "--big-iters" => a.big_iters = n()?,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(a)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Medians of (put, get) seconds.
#[derive(Clone, Copy)]
struct Timing {
    put: f64,
    get: f64,
}

impl Timing {
    fn of(samples: &[(f64, f64)]) -> Timing {
        Timing {
            put: median(samples.iter().map(|s| s.0).collect()),
            get: median(samples.iter().map(|s| s.1).collect()),
        }
    }
    fn gibs(&self, bytes: usize) -> (f64, f64) {
        let g = bytes as f64 / (1u64 << 30) as f64;
        (g / self.put, g / self.get)
    }
}

/// One put + get through the Rust bindings, then release and cleanup (not timed). The
/// options are built once per case, as the Python side builds its `SCHEMA` once.
fn rust_once(
    py: Python<'_>,
    t: &MooncakeBundleTransfer,
    data: &Bound<'_, PyAny>,
    (put, get): (&PutOptions, &GetOptions),
) -> Result<(f64, f64)> {
    let t0 = Instant::now();
    let r = t.put(py, data, put)?;
    let t1 = Instant::now();
    let out = t.get(py, &r, get)?;
    let t2 = Instant::now();
    t.release_result(py, &out)?;
    t.cleanup_dataproto(py, &r)?;
    Ok(((t1 - t0).as_secs_f64(), (t2 - t1).as_secs_f64()))
}

fn field_schemas() -> std::collections::BTreeMap<String, mooncake_sos::FieldSchema> {
    let mut s = mooncake_sos::FieldSchema::new("ndarray");
    s.nullable = false;
    s.metadata
        .insert("section".into(), serde_json::json!("batch"));
    s.metadata
        .insert("dtype".into(), serde_json::json!("uint8"));
    std::collections::BTreeMap::from([("x".to_owned(), s)])
}

fn pair(v: Bound<'_, PyAny>) -> Result<(f64, f64)> {
    v.extract().context(|| "timing pair".into())
}

/// Rust vs Python on one store and size; returns (rust, python) medians.
fn compare(
    py: Python<'_>,
    module: &Module,
    helper: &Bound<'_, PyModule>,
    store: &Store,
    bytes: usize,
    iters: usize,
) -> Result<(Timing, Timing, f64)> {
    let t = MooncakeBundleTransfer::new(py, module, store, &Default::default())?;
    let pyt = helper
        .call_method1("transfer", (store.object(py),))
        .context(|| "transfer".into())?;
    let data = helper
        .call_method1("payload", (bytes,))
        .context(|| "payload".into())?;
    let put = PutOptions {
        r#type: Some("dict".into()),
        field_schemas: Some(field_schemas()),
        ..Default::default()
    };
    let get = GetOptions {
        r#type: Some("dict".into()),
        ..Default::default()
    };
    let options = (&put, &get);
    // Warm up both paths once (and check the bytes once).
    pair(
        helper
            .call_method1("once", (&pyt, &data, true))
            .context(|| "python once".into())?,
    )?;
    rust_once(py, &t, &data, options)?;
    let (mut rs, mut ps) = (Vec::new(), Vec::new());
    // Alternate who goes first, so neither always follows the other's cleanup.
    for i in 0..iters {
        let py_once = || -> Result<(f64, f64)> {
            pair(
                helper
                    .call_method1("once", (&pyt, &data))
                    .context(|| "python once".into())?,
            )
        };
        if i % 2 == 0 {
            rs.push(rust_once(py, &t, &data, options)?);
            ps.push(py_once()?);
        } else {
            ps.push(py_once()?);
            rs.push(rust_once(py, &t, &data, options)?);
        }
    }
    // Each Rust iteration against the Python one next to it: drift cancels within a pair.
    let paired = median(
        rs.iter()
            .zip(&ps)
            .map(|(r, p)| (r.0 + r.1 - p.0 - p.1) / (p.0 + p.1) * 100.0)
            .collect(),
    );
    Ok((Timing::of(&rs), Timing::of(&ps), paired))
}

fn report_pair(label: &str, bytes: usize, rust: Timing, python: Timing, paired: f64) {
    let (rp, rg) = rust.gibs(bytes);
    let (pp, pg) = python.gibs(bytes);
    let total = |t: Timing| t.put + t.get;
    let overhead = (total(rust) - total(python)) / total(python) * 100.0;
    let size = if bytes >= MIB {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{} KiB", bytes >> 10)
    };
    println!(
        "| {label} | {size} | {:.3} / {:.3} ms ({rp:.2} / {rg:.2} GiB/s) | {:.3} / {:.3} ms ({pp:.2} / {pg:.2} GiB/s) | {overhead:+.2}% ({:+.1} µs) | {paired:+.2}% |",
        rust.put * 1e3,
        rust.get * 1e3,
        python.put * 1e3,
        python.get * 1e3,
        (total(rust) - total(python)) * 1e6
    );
}

/// Median seconds per call of `f`, over `rounds` rounds of `per_round` calls.
fn per_call(rounds: usize, per_round: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    let mut samples = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..per_round {
            f()?;
        }
        samples.push(t.elapsed().as_secs_f64() / per_round as f64);
    }
    Ok(median(samples))
}

/// The liveness check per call on a healthy master, beside a connect per call.
fn report_liveness(store: &Store, addr: &str) -> Result<()> {
    let Some(liveness) = store.liveness() else {
        return Ok(());
    };
    let check = per_call(200, 100, || liveness.check(&"bench"))?;
    let timeout = std::time::Duration::from_secs(2);
    let connect = per_call(200, 1, || {
        mooncake_sos_runtime::store::probe("master", addr, timeout)
    })?;
    println!();
    println!("| master liveness, per call (median) | time |");
    println!("|---|---|");
    println!(
        "| kept connection, non-blocking peek (now) | {:.2} µs |",
        check * 1e6
    );
    println!(
        "| TCP connect to the master (before) | {:.1} µs |",
        connect * 1e6
    );
    Ok(())
}

fn run(args: Args) -> Result<()> {
    let module = mooncake_sos::load(&PythonEnv::from_env())?;
    Python::attach(|py| -> Result<()> {
        let code = CString::new(HELPER).map_err(|e| Error::Value(e.to_string()))?;
        let helper = PyModule::from_code(py, &code, c"bench_helper.py", c"bench_helper")
            .context(|| "bench helper".into())?;
        let embedded = Store::embedded()?;
        let mut stores = vec![("embedded", embedded)];
        if let Some(addr) = &args.master {
            let mut c = StoreConfig::loopback(addr.clone());
            c.global_segment_size = 3 << 30;
            c.local_buffer_size = 512 << 20;
            stores.push(("real master", Store::connect(&mooncake_sos::API, &c)?));
        }
        println!(
            "| store | payload | Rust put / get (median) | Python put / get (median) | Rust overhead (put+get, of medians) | paired median |"
        );
        println!("|---|---|---|---|---|---|");
        let mut embedded_64 = None;
        for (label, store) in &stores {
            // 64 KiB isolates the per-call cost of the bindings; the large ones the bandwidth.
            for (bytes, iters) in [
                (MIB / 16, args.iters * 20),
                (64 * MIB, args.iters),
                (1024 * MIB, args.big_iters),
            ] {
                let (rust, python, paired) = compare(py, &module, &helper, store, bytes, iters)?;
                if *label == "embedded" && bytes == 64 * MIB {
                    embedded_64 = Some((rust, python));
                }
                report_pair(label, bytes, rust, python, paired);
            }
        }
        let Some((rust64, _)) = embedded_64 else {
            return Ok(());
        };
        let bytes = 64 * MIB;
        let data = helper
            .call_method1("payload", (bytes,))
            .context(|| "payload".into())?;
        let copies: Vec<(f64, f64)> = (0..args.iters)
            .map(|_| {
                pair(
                    helper
                        .call_method1("copy_once", (&data,))
                        .context(|| "copy".into())?,
                )
            })
            .collect::<Result<_>>()?;
        let copy = Timing::of(&copies);
        let dict_store = helper
            .call_method0("DictStore")
            .context(|| "DictStore".into())?;
        let dt = helper
            .call_method1("transfer", (&dict_store,))
            .context(|| "transfer".into())?;
        let dicts: Vec<(f64, f64)> = (0..args.iters)
            .map(|_| {
                pair(
                    helper
                        .call_method1("once", (&dt, &data))
                        .context(|| "dict once".into())?,
                )
            })
            .collect::<Result<_>>()?;
        let dict = Timing::of(&dicts);
        let (ep, eg) = rust64.gibs(bytes);
        let (cp, cg) = copy.gibs(bytes);
        let (dp, dg) = dict.gibs(bytes);
        println!();
        println!("| 64 MiB, medians | put GiB/s | get GiB/s |");
        println!("|---|---|---|");
        println!("| embedded store (Rust bindings) | {ep:.2} | {eg:.2} |");
        println!("| raw numpy copy | {cp:.2} | {cg:.2} |");
        println!("| pure-Python dict store | {dp:.2} | {dg:.2} |");
        println!("| embedded / copy | {:.2}x | {:.2}x |", ep / cp, eg / cg);
        println!(
            "| embedded / dict store | {:.2}x | {:.2}x |",
            ep / dp,
            eg / dg
        );
        if let (Some(addr), Some((_, store))) = (&args.master, stores.get(1)) {
            report_liveness(store, addr)?;
        }
        for (_, store) in &stores {
            store.close()?;
        }
        Ok(())
    })
}

fn main() -> std::process::ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}\nusage: bench [--master HOST:PORT] [--iters N] [--big-iters N]");
            return std::process::ExitCode::from(2);
        }
    };
    match run(args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
