//! `verify --module` against the same static check in Python with `ast`, side by side in one
//! run, medians (run by hand, release build, from the repository root):
//! `cargo build --release -p xtask && cargo run --release -q -p mooncake-sos-pysource
//! --example bench_verify -- --module FILE [--surface]`. With
//! `--surface`: `verify --module --surface` against `pysource/bench/parse_walk_ast.py` (parse and visit every node with `ast`).
//! Two views: in-process (read + parse + extract + compare, the work itself) and whole
//! process (what a user waits for: `xtask verify --module` vs `python3 verify_ast.py`).

use clap::Parser;
use mooncake_sos_manifest::model::Api;
use mooncake_sos_pysource::source::ModuleSource;
use mooncake_sos_pysource::surface;
use mooncake_sos_support::bounded;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[derive(Parser)]
struct Args {
    /// The manifest.
    #[arg(long, default_value = "api.toml")]
    manifest: PathBuf,
    /// The release build of xtask, for the whole-process side.
    #[arg(long, default_value = "target/release/xtask")]
    xtask: PathBuf,
    /// The module to check (e.g. the 0.3.13.post1 one, 257 KB).
    #[arg(long, value_name = "FILE")]
    module: PathBuf,
    /// The interpreter for the `ast` baseline.
    #[arg(long, default_value = "python3")]
    python: PathBuf,
    /// Timed runs per side (after one warm-up).
    #[arg(long, default_value_t = 30)]
    runs: usize,
    /// Time the native-surface derivation and check instead of the symbol check.
    #[arg(long)]
    surface: bool,
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let run = mooncake_sos_manifest::load(&args.manifest, &args.manifest.display().to_string())
        .map_err(|d| d.to_string())
        .and_then(|api| bench(&args, &args.manifest, &api));
    match run {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("bench-verify: error: {message}");
            std::process::ExitCode::from(2)
        }
    }
}

/// What verify_ast.py and parse_walk_ast.py print: each run's wall time, what they found.
#[derive(serde::Deserialize)]
struct AstReport {
    seconds: Vec<f64>,
    #[serde(alias = "failures")]
    mismatches: usize,
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn bench(args: &Args, manifest: &Path, api: &Api) -> std::result::Result<(), String> {
    let runs = args.runs.max(1);
    let (script, json) = if args.surface {
        let spec = serde_json::json!({
            "module": api.upstream.module,
            "native_module": api.upstream.native_module,
            "package": api.upstream.package(),
            "surface": api.surface,
        });
        ("parse_walk_ast.py", spec.to_string())
    } else {
        let symbols = serde_json::to_string(&api.symbols).map_err(|e| e.to_string())?;
        ("verify_ast.py", symbols)
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("bench")
        .join(script);
    let dir = std::env::temp_dir().join(format!("bench-verify-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let symbols = dir.join("declared.json");
    std::fs::write(&symbols, json).map_err(|e| e.to_string())?;
    let result = compare(args, runs, api, manifest, &script, &symbols);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Bound on one process of the benchmark.
const BOUND: Duration = Duration::from_secs(600);

fn compare(
    args: &Args,
    runs: usize,
    api: &Api,
    manifest: &Path,
    script: &Path,
    symbols: &Path,
) -> std::result::Result<(), String> {
    let module = &args.module;
    let python = |n: usize| {
        let mut cmd = Command::new(&args.python);
        cmd.arg(script).arg(symbols).arg(module).arg(n.to_string());
        let out = bounded::run(&mut cmd, &bounded::Limits::within(BOUND))
            .map_err(|e| format!("{}: {e}", args.python.display()))?;
        let report: AstReport = serde_json::from_slice(&out.stdout).map_err(|e| {
            format!(
                "{} printed no report ({e}): {}",
                script.display(),
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
        let secs = report.seconds.into_iter().map(Duration::from_secs_f64);
        Ok::<_, String>((secs.collect::<Vec<_>>(), report.mismatches))
    };
    // In-process: the Rust check here, the Python one inside its own loop, same module.
    let rust_once = || {
        let start = Instant::now();
        let source = ModuleSource::read_module(module).map_err(|e| e.to_string())?;
        let found = if args.surface {
            let report = surface::check(api, &source).map_err(|e| e.to_string())?;
            // The text lines too, as the Python side builds them.
            let lines = report.use_lines().len() + report.failure_lines().len();
            std::hint::black_box(lines);
            report.failures.len()
        } else {
            let report = mooncake_sos_pysource::verify(api, &source).map_err(|e| e.to_string())?;
            report.mismatches.len()
        };
        Ok::<_, String>((start.elapsed(), found))
    };
    // Rounds alternate the two sides so both see the same machine load.
    rust_once()?;
    let (mut rust, mut py) = (Vec::new(), Vec::new());
    let (mut rust_misses, mut py_misses) = (0, 0);
    let per_round = 5;
    for _ in 0..runs.div_ceil(per_round) {
        for _ in 0..per_round {
            let (t, n) = rust_once()?;
            rust.push(t);
            rust_misses = n;
        }
        // Each Python process's first iteration is its warm-up.
        let (times, n) = python(per_round + 1)?;
        py.extend(times.into_iter().skip(1));
        py_misses = n;
    }
    // Whole process, interleaved the same way.
    let exe = &args.xtask;
    // Both sides through the same runner, so its cost is the same on each.
    let time = |cmd: &mut Command| {
        let start = Instant::now();
        bounded::run(cmd, &bounded::Limits::within(BOUND)).map_err(|e| e.to_string())?;
        Ok::<_, String>(start.elapsed())
    };
    let (mut rust_proc, mut py_proc) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let mut verify = Command::new(exe);
        verify.args(["verify", "--manifest"]).arg(manifest);
        verify.arg("--module").arg(module);
        if args.surface {
            verify.arg("--surface");
        }
        rust_proc.push(time(&mut verify)?);
        py_proc.push(time(
            Command::new(&args.python)
                .arg(script)
                .arg(symbols)
                .arg(module)
                .arg("1"),
        )?);
    }
    let size = std::fs::metadata(module).map(|m| m.len()).unwrap_or(0);
    println!(
        "bench-verify: {} ({size} bytes), {runs} runs per side, medians",
        module.display()
    );
    let what = if args.surface {
        "surface failures"
    } else {
        "mismatches"
    };
    println!("{what} found: rust {rust_misses}, python ast {py_misses}");
    println!("| measure | rust (ruff_python_parser) | python ast | ratio |");
    println!("|---|---|---|---|");
    for (what, r, p) in [
        (
            if args.surface {
                "in-process: read + parse + derive + compare + report lines"
            } else {
                "in-process: read + parse + extract + compare"
            },
            median(rust),
            median(py),
        ),
        (
            if args.surface {
                "whole process: `xtask verify --module --surface` vs `python3 parse_walk_ast.py`"
            } else {
                "whole process: `xtask verify --module` vs `python3 verify_ast.py`"
            },
            median(rust_proc),
            median(py_proc),
        ),
    ] {
        println!(
            "| {what} | {} | {} | {:.1}x |",
            ms(r),
            ms(p),
            p.as_secs_f64() / r.as_secs_f64()
        );
    }
    Ok(())
}
