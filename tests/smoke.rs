//! `python3 -m mooncake_sos --smoke` (the generated shim) on the real wheels: the consumer's
//! calls, as api.toml's scenarios state them, against the installed module and core and the
//! wheel's own mooncake_master. It passes on 0.3.12.post1; with the module overlaid on the
//! 0.3.11.post1 core (what the CUDA image does) it fails at the rollout manager's setup with
//! -600; a stopped master fails it within its bound; bad flags are usage errors.

use mooncake_sos_manifest::load_str;
use mooncake_sos_testkit::{wheel, wheel_member};
use mooncake_sos_tests::venvs::ReleaseVenv;
use mooncake_sos_tests::{TestEnv, repo_root};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MODULE: &str = "mooncake/structured_object_store.py";

/// The generated shim alone in a directory, for PYTHONPATH.
fn shim_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo_root().join("generated/python/mooncake_sos.py"),
        dir.path().join("mooncake_sos.py"),
    )
    .unwrap();
    dir
}

fn smoke_command(python: &Path, shim: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(python);
    cmd.args(["-m", "mooncake_sos"])
        .args(args)
        .env("PYTHONPATH", shim)
        .env("MC_TCP_BIND_ADDRESS", "127.0.0.1");
    cmd
}

/// Runs the smoke: (exit code, stdout, stderr).
fn smoke(python: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let shim = shim_dir();
    let out = smoke_command(python, shim.path(), args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn api() -> mooncake_sos_manifest::model::Api {
    let text = std::fs::read_to_string(repo_root().join("api.toml")).unwrap();
    load_str("api.toml", text.as_str()).unwrap_or_else(|d| panic!("{d}"))
}

fn verdict<'a>(stdout: &'a str, scenario: &str) -> &'a str {
    let prefix = format!("smoke {scenario}: ");
    let lines: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix(prefix.as_str()))
        .collect();
    assert_eq!(lines.len(), 1, "one line for {scenario}:\n{stdout}");
    lines[0]
}

/// Every scenario runs and passes, the one that needs torch included (the test env installs
/// torch 2.11.0, as the CUDA image's sglang has it).
#[test]
fn smoke_runs_and_passes_every_scenario_on_the_0_3_12_wheel() {
    let env = TestEnv::get();
    let api = api();
    let (code, out, err) = smoke(&env.python, &["--smoke"]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(
        api.scenarios.iter().any(|s| s.needs_torch),
        "a torch scenario to run"
    );
    for s in &api.scenarios {
        let v = verdict(&out, &s.name);
        assert!(v.starts_with("ok ("), "{}: {v}\n{out}\n{err}", s.name);
    }
    let counts = (api.scenarios.len(), 0);
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with(&format!(
            "smoke: {} ok, 0 failed, {} not run; mooncake.structured_object_store as pinned at kvcache-ai/Mooncake@{}; master ",
            counts.0, counts.1, api.upstream.commit
        )),
        "{out}"
    );
    // The installed wheel's own master.
    assert!(
        last.ends_with("site-packages/mooncake/mooncake_master"),
        "{out}"
    );
}

/// The CUDA image's pairing: the API module overlaid on the 0.3.11.post1 core. Its import
/// check passes; the consumer's rollout manager cannot set up (global_segment_size = 0).
#[test]
fn module_over_the_0_3_11_core_fails_at_setup_with_600() {
    let venv = ReleaseVenv::new("0.3.11.post1");
    venv.overlay(MODULE, &wheel_member(&wheel("0.3.12.post1"), MODULE));
    let (code, out, err) = smoke(&venv.env.python, &["--smoke"]);
    assert_eq!(code, Some(1), "{out}\n{err}");
    let v = verdict(&out, "rollout-manager-to-trainer");
    assert!(
        v.starts_with("FAILED: rollout_manager: setup({")
            && v.contains("\"global_segment_size\": 0,")
            && v.ends_with("}): setup returned -600"),
        "{v}\n{out}"
    );
    assert!(
        out.contains(&format!("@{}; master ", api().upstream.commit)),
        "the pin: {out}"
    );
    // The core's own words, from the worker's log.
    assert!(err.contains("Invalid global_segment_size: 0"), "{err}");
}

/// The pids of the running processes whose parent is `parent` and whose executable is
/// named `name`.
fn children_named(parent: u32, name: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
        let Some((comm, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let ppid = rest.split_whitespace().nth(1).and_then(|p| p.parse().ok());
        if ppid == Some(parent) && comm.ends_with(&format!("({name}")) {
            out.push(pid);
        }
    }
    out
}

fn listening(master: u32) -> bool {
    let cmdline = std::fs::read(format!("/proc/{master}/cmdline")).unwrap_or_default();
    let port = String::from_utf8_lossy(&cmdline)
        .split('\0')
        .find_map(|a| a.strip_prefix("-rpc_port=")?.parse::<u16>().ok());
    port.is_some_and(|p| {
        std::net::TcpStream::connect_timeout(&([127, 0, 0, 1], p).into(), Duration::from_millis(50))
            .is_ok()
    })
}

/// Every master the smoke starts is stopped (SIGSTOP) once it listens: the worker's next call
/// never returns. The smoke fails within its bound, names the call, and leaves no process.
#[test]
fn a_stopped_master_fails_the_smoke_within_its_bound() {
    let env = TestEnv::get();
    let shim = shim_dir();
    let timeout = 5;
    let mut cmd = smoke_command(
        &env.python,
        shim.path(),
        &["--smoke", "--timeout", &timeout.to_string()],
    );
    let started = Instant::now();
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stopped: Vec<u32> = Vec::new();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "the smoke hangs"
        );
        for pid in children_named(child.id(), "mooncake_master") {
            if !stopped.contains(&pid) && listening(pid) {
                unsafe { libc::kill(pid as i32, libc::SIGSTOP) };
                stopped.push(pid);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let took = started.elapsed();
    let mut out = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
    assert_eq!(status.code(), Some(1), "{out}");
    assert!(!stopped.is_empty(), "no master was stopped:\n{out}");
    // The bound: one scenario's timeout, plus starting masters and workers.
    assert!(
        took < Duration::from_secs(timeout + 15),
        "took {took:?}\n{out}"
    );
    let failed: Vec<&str> = out.lines().filter(|l| l.contains(": FAILED: ")).collect();
    assert_eq!(failed.len(), 1, "{out}");
    assert!(
        failed[0].contains(&format!(" did not return within {timeout} s")),
        "{out}"
    );
    // Nothing left running: the stopped masters were killed and reaped.
    for pid in stopped {
        let gone = !PathBuf::from(format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                s.rsplit_once(')')
                    .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
            });
        assert!(gone, "master {pid} is still running");
    }
}

/// Usage errors exit 2 before anything starts: unknown flags, flags that do not go together.
#[test]
fn bad_flags_are_usage_errors() {
    let env = TestEnv::get();
    for args in [
        &["--smok"][..],
        &["--smoke", "--bogus"],
        &["--json", "--smoke"],
        &["--timeout", "5"],
        &["--smoke", "--timeout", "0"],
        &["--smoke", "--timeout", "soon"],
        &["extra"],
        // The smoke's internal worker flag, misused: it was a traceback (exit 1).
        &["--smoke", "--smoke-worker", "replicated-put", "1", "2"],
        &["--smoke-worker", "no-such-scenario", "1", "2"],
        &["--smoke-worker", "replicated-put", "x", "2"],
        &["--smoke-worker", "replicated-put", "1", "70000"],
    ] {
        let started = Instant::now();
        let (code, out, err) = smoke(&env.python, args);
        assert_eq!(code, Some(2), "{args:?}: {out}\n{err}");
        assert!(
            err.contains("usage: python3 -m mooncake_sos"),
            "{args:?}: {err}"
        );
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(started.elapsed() < Duration::from_secs(5), "{args:?}");
    }
}

/// Without a mooncake_master (not in the package, not on PATH) nothing can run: exit 1, said.
#[test]
fn no_master_fails_the_smoke_saying_so() {
    let venv = ReleaseVenv::new("0.3.12.post1");
    std::fs::remove_file(&venv.env.master).unwrap();
    let shim = shim_dir();
    let out = smoke_command(&venv.env.python, shim.path(), &["--smoke"])
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.starts_with(
            "smoke: FAILED: no mooncake_master in the installed mooncake package, nor on PATH\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("smoke: 0 ok, 1 failed, 0 not run;"),
        "{stdout}"
    );
}

/// The expectations after the calls can fail: a module whose `get` changes one integer, and
/// one whose `cleanup_dataproto` removes nothing, each fail the smoke at that call, saying what
/// did not hold. (A copy of the installed package, the module doctored, first on PYTHONPATH.)
#[test]
fn a_changed_value_or_a_key_left_fails_naming_the_call() {
    let env = TestEnv::get();
    let doctorings = [
        (
            "import functools\n_get = MooncakeBundleTransfer.get\n\
             @functools.wraps(_get)\ndef _changed(self, *a, **k):\n    out = _get(self, *a, **k)\n    \
             out['tokens'][0][0] += 1\n    return out\nMooncakeBundleTransfer.get = _changed\n",
            "FAILED: trainer: get(import_ref(json.loads(text)), type='dict'): field 'tokens' came back as [[151645, 872,",
        ),
        (
            "MooncakeBundleTransfer.cleanup_dataproto = lambda self, ref: None\n",
            "FAILED: trainer: cleanup_dataproto(import_ref(json.loads(text))): ",
        ),
    ];
    for (patch, want) in doctorings {
        let dir = tempfile::tempdir().unwrap();
        // The package and the libraries its master and core load from beside it.
        for name in ["mooncake", "mooncake_transfer_engine_non_cuda.libs"] {
            let installed = env.site_packages().join(name);
            mooncake_sos_testkit::copy_tree(&installed, &dir.path().join(name));
        }
        let module = dir.path().join(MODULE);
        let mut text = std::fs::read_to_string(&module).unwrap();
        text.push_str(patch);
        std::fs::write(&module, text).unwrap();
        let shim = shim_dir();
        let path = std::env::join_paths([dir.path(), shim.path()]).unwrap();
        let out = smoke_command(&env.python, shim.path(), &["--smoke"])
            .env("PYTHONPATH", path)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{stdout}");
        let v = verdict(&stdout, "rollout-manager-to-trainer");
        assert!(v.starts_with(want), "want {want:?}:\n{stdout}");
        if want.contains("cleanup_dataproto") {
            assert!(v.ends_with(" key(s) left in the master after it"), "{v}");
        }
        // The copy's own master ran.
        assert!(
            stdout.contains(&format!(
                "master {}",
                dir.path().join("mooncake/mooncake_master").display()
            )),
            "{stdout}"
        );
    }
}

/// A master that cannot load (the CUDA runtime it links is not on the library path) is said
/// at once, and once, in the loader's own words: the smoke used to start it again and again
/// for 15 s, then say "did not open its port", the loader's error logged 15 times.
#[test]
fn a_master_that_cannot_load_is_said_at_once_in_the_loaders_words() {
    let env = TestEnv::get();
    let shim = shim_dir();
    let started = Instant::now();
    let out = smoke_command(&env.python, shim.path(), &["--smoke"])
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let failed: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("smoke: FAILED: "))
        .collect();
    assert_eq!(failed.len(), 1, "{stdout}");
    assert!(
        failed[0].contains("mooncake_master exited with status 127 before opening its port: ")
            && failed[0].contains("libcudart.so.12: cannot open shared object file"),
        "{stdout}"
    );
    let said = |text: &str| {
        text.matches("libcudart.so.12: cannot open shared object file")
            .count()
    };
    assert_eq!(
        said(&stdout) + said(&stderr),
        2,
        "once on stdout, once in the log's tail:\n{stdout}\n{stderr}"
    );
    assert!(!stdout.contains("did not open its port"), "{stdout}");
    // The bound is generous for a loaded machine; the retry loop took the full 15 s.
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
}
