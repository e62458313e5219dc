//! `xtask regen` killed with SIGKILL at random moments, and several regens at once: every
//! output is always exactly its old or its new contents, nothing but regen's own staging
//! files and journal is ever left behind (and the next command removes those, undoing a
//! write the journal says was stopped half-way), and `regen --check` tells the truth
//! afterwards. The commands that edit the manifest are killed alike (edit_kills.rs).
//! `CRASH_SEED=N` replays a run's kill delays.

mod common;
#[path = "crash/dir_events.rs"]
mod dir_events;
#[path = "crash/edit_kills.rs"]
mod edit_kills;

use common::{Files, RegenIn, Sandbox, is_regen_temp};
use std::io::Write;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const KILLED_RUNS: usize = 120;
/// Kills that must land inside the write phase (staging or renaming); more runs are made (up
/// to 400) until they do.
const INSIDE_WANTED: usize = 20;
const MAX_KILLED_RUNS: usize = 400;
const CONCURRENT_ROUNDS: usize = 20;

/// Manifest B: another pin and other base tags, so the shim, the bindings, both Dockerfiles
/// and build.py all differ from manifest A (the repository's).
fn manifest_b(a: &str) -> String {
    let edits = [
        (
            "4dbe5a4c194669850e9abad61172e9878b245b15",
            "5dbe5a4c194669850e9abad61172e9878b245b15",
        ),
        (
            "6f2361e68655784a71348b40b963883ea369553f52e360b98a76dfaaa3cec3b0",
            "7f2361e68655784a71348b40b963883ea369553f52e360b98a76dfaaa3cec3b0",
        ),
        ("\"v0.5.16-cu130\"", "\"v0.5.17-cu130\""),
        ("-20260730\"", "-20260731\""),
    ];
    edits.iter().fold(a.to_owned(), |text, (from, to)| {
        assert!(text.contains(from), "api.toml lacks {from}");
        text.replace(from, to)
    })
}

/// The two manifests and the complete outputs of each.
struct Versions {
    a: String,
    b: String,
    out_a: Files,
    out_b: Files,
}

impl Versions {
    fn of(sb: &Sandbox) -> Versions {
        let a = std::fs::read_to_string(sb.manifest()).expect("read api.toml");
        let b = manifest_b(&a);
        let complete = |text: &str| {
            std::fs::write(sb.manifest(), text).expect("write api.toml");
            let (code, out) = sb.regen(&[]);
            assert_eq!(code, 0, "{out}");
            outputs(&sb.snapshot())
        };
        let (out_b, out_a) = (complete(&b), complete(&a));
        assert_eq!(out_a.len(), 11, "regen's outputs: {:?}", out_a.keys());
        let differ = out_a.keys().filter(|k| out_a[*k] != out_b[*k]).count();
        assert_eq!(
            differ, 5,
            "the two manifests must differ in 5 of 11 outputs"
        );
        Versions { a, b, out_a, out_b }
    }

    fn outputs_for(&self, manifest: &str) -> &Files {
        if manifest == self.a {
            &self.out_a
        } else {
            &self.out_b
        }
    }

    /// The outputs the two manifests share (generated/Cargo.toml, generated/src/lib.rs, the
    /// stubs) get a stray line, so that each run rewrites every file.
    fn make_fixed_outputs_stale(&self, sb: &Sandbox) {
        for (path, bytes) in &self.out_a {
            if self.out_b[path] == *bytes {
                let mut stale = bytes.clone();
                stale.extend_from_slice(b"\n");
                std::fs::write(sb.path(path), stale).expect("write");
            }
        }
    }
}

/// The generated files in a snapshot (not the manifest, not staging files).
/// What regen writes: every file of the sandbox but the manifest and the core records (inputs
/// of verify, which regen never writes).
fn outputs(snap: &Files) -> Files {
    snap.iter()
        .filter(|(p, _)| {
            // Inputs regen reads, not writes: the manifest and the recorded cores and users.
            let input =
                p.as_str() == "api.toml" || p.starts_with("cores/") || p.starts_with("consumers/");
            !input && !is_regen_temp(p) && p.as_str() != JOURNAL
        })
        .map(|(p, b)| (p.clone(), b.clone()))
        .collect()
}

/// Rewrites the manifest in place under the lock regen takes, so no regen reads half of it.
fn swap_manifest(sb: &Sandbox, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(sb.manifest())
        .expect("open api.toml");
    f.lock().expect("lock api.toml");
    f.set_len(0).expect("truncate");
    f.write_all(text.as_bytes()).expect("write");
    f.sync_all().expect("sync");
}

/// xorshift64*: enough randomness for kill delays, with a seed to replay them.
struct Rng(u64);

impl Rng {
    fn from_env() -> Rng {
        let seed = std::env::var("CRASH_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64)
            });
        eprintln!("CRASH_SEED={seed}");
        Rng(seed | 1)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }
}

fn spawn_regen(sb: &Sandbox) -> Child {
    sb.regen_command(&[])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn xtask regen")
}

/// Median wall time of a regen that rewrites everything.
fn measure(sb: &Sandbox, v: &Versions) -> Duration {
    let mut times: Vec<Duration> = (0..7)
        .map(|i| {
            std::fs::write(sb.manifest(), if i % 2 == 0 { &v.b } else { &v.a }).expect("write");
            let started = Instant::now();
            assert_eq!(sb.regen(&[]).0, 0);
            started.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

/// What the kill and the swap tests start from: a sandbox whose two manifests' outputs are
/// known, and how long a whole regen takes there.
fn measured_sandbox() -> (Sandbox, Versions, Duration) {
    let sb = Sandbox::new();
    let v = Versions::of(&sb);
    let took = measure(&sb, &v);
    (sb, v, took)
}

/// Where to aim the kills. A quarter land anywhere in 1.2x a whole run; the rest inside the
/// span still believed to hold the writes, which narrows as kills land before them (nothing
/// new yet) or after them (everything new). Run times vary with load, so a span that
/// collapses starts over.
struct KillWindow {
    whole: Duration,
    start: Duration,
    end: Duration,
}

impl KillWindow {
    fn new(run: Duration) -> KillWindow {
        let whole = run * 6 / 5;
        KillWindow {
            whole,
            start: Duration::ZERO,
            end: whole,
        }
    }

    fn next_delay(&self, rng: &mut Rng) -> Duration {
        let (lo, hi) = if rng.below(4) == 0 {
            (Duration::ZERO, self.whole)
        } else {
            (self.start * 9 / 10, self.end * 11 / 10)
        };
        lo + Duration::from_micros(rng.below((hi - lo).as_micros() as u64))
    }

    fn learn(&mut self, delay: Duration, fresh: usize, outputs: usize) {
        if fresh == 0 && delay > self.start && delay < self.end {
            self.start = delay;
        } else if fresh == outputs && delay < self.end && delay > self.start {
            self.end = delay;
        }
        if self.end.saturating_sub(self.start) < Duration::from_micros(300) {
            *self = KillWindow::new(self.whole * 5 / 6);
        }
    }
}

/// The journal a write keeps beside the manifest from before its first rename until every
/// rename is durable.
const JOURNAL: &str = ".api.toml.regen-journal";

#[derive(Debug, Default)]
struct Tally {
    /// Killed before regen wrote anything.
    before: usize,
    /// Killed while staging (new files and backups beside the outputs): every output old,
    /// staging files left.
    staging: usize,
    /// Killed with the journal written (among the renames, or just before or after them):
    /// the next command undoes the write. The renames come one after the other once
    /// everything is staged, so this window is tens of microseconds wide.
    mixed: usize,
    /// Finished (or had committed) before the kill.
    all_new: usize,
    temps_left: usize,
}

impl Tally {
    fn inside(&self) -> usize {
        self.staging + self.mixed
    }
}

#[test]
fn sigkill_at_random_moments_never_tears_an_output() {
    let (sb, v, took) = measured_sandbox();
    let mut rng = Rng::from_env();
    let mut window = KillWindow::new(took);
    let mut tally = Tally::default();
    let mut run = 0;
    while run < KILLED_RUNS || (tally.inside() < INSIDE_WANTED && run < MAX_KILLED_RUNS) {
        run += 1;
        let manifest = if run % 2 == 0 { &v.b } else { &v.a };
        let new = v.outputs_for(manifest);
        std::fs::write(sb.manifest(), manifest).expect("write api.toml");
        v.make_fixed_outputs_stale(&sb);
        let old = outputs(&sb.snapshot());
        let delay = window.next_delay(&mut rng);
        let mut child = spawn_regen(&sb);
        std::thread::sleep(delay);
        child.kill().expect("SIGKILL");
        child.wait().expect("reap");

        let after = sb.snapshot();
        let mut fresh = 0;
        for (path, bytes) in outputs(&after) {
            assert!(new.contains_key(&path), "run {run}: stray file {path}");
            if bytes == new[&path] {
                fresh += 1;
            } else {
                assert_eq!(
                    bytes, old[&path],
                    "run {run} (killed after {delay:?}): {path} is neither old nor new (torn)"
                );
            }
        }
        assert_eq!(
            outputs(&after).len(),
            new.len(),
            "run {run}: an output is gone"
        );
        assert_eq!(
            after["api.toml"],
            manifest.as_bytes(),
            "run {run}: manifest changed"
        );
        let temps = after.keys().filter(|p| is_regen_temp(p)).count();
        // A committed journal is finished forward (its write stands), another one undone.
        let journal = after
            .get(JOURNAL)
            .is_some_and(|j| !String::from_utf8_lossy(j).contains("\"committed\":true"));
        tally.temps_left += temps;
        window.learn(delay, fresh, new.len());
        match fresh {
            _ if journal => tally.mixed += 1,
            0 if temps == 0 => tally.before += 1,
            0 => tally.staging += 1,
            n if n == new.len() => tally.all_new += 1,
            n => panic!("run {run}: {n} of {} outputs new and no journal", new.len()),
        }

        // --check first undoes a write the journal says was stopped: every output old.
        let (code, out) = sb.regen(&["--check"]);
        let current = !journal && fresh == new.len();
        assert_eq!(
            code,
            if current { 0 } else { 1 },
            "run {run}: --check after a kill with {fresh}/{} outputs new, {temps} staging files:\n{out}",
            new.len()
        );
        // The next regen completes the job and removes what the killed one left.
        let (code, out) = sb.regen(&[]);
        assert_eq!(code, 0, "run {run}: {out}");
        let done = sb.snapshot();
        assert_eq!(&outputs(&done), new, "run {run}: regen after a kill");
        let left: Vec<_> = done
            .keys()
            .filter(|p| is_regen_temp(p) || *p == JOURNAL)
            .collect();
        assert!(
            left.is_empty(),
            "run {run}: staging files survive a regen: {left:?}"
        );
    }
    eprintln!("{run} kills, a run takes {took:?}: {tally:?}");
    assert!(
        tally.inside() >= INSIDE_WANTED,
        "too few kills landed inside the write phase: {tally:?}"
    );
}

#[test]
fn a_staging_file_left_by_a_killed_regen_is_ignored_by_check_and_removed_by_regen() {
    let sb = Sandbox::new();
    let shim = sb.path("generated/python/mooncake_sos.py");
    let header = std::fs::read(&shim).expect("shim");
    let planted = [
        // A whole copy (killed just before the rename), a part, and an empty file.
        (
            "generated/python/.mooncake_sos.py.regen-4000001.tmp",
            header.clone(),
        ),
        (
            "docker/.Dockerfile.regen-4000002.tmp",
            b"# partial".to_vec(),
        ),
        ("generated/src/.bindings.rs.regen-4000003.tmp", Vec::new()),
    ];
    for (path, bytes) in &planted {
        std::fs::write(sb.path(path), bytes).expect("plant");
    }
    let (code, out) = sb.regen(&["--check"]);
    assert_eq!(code, 0, "every output is current: {out}");
    let (code, out) = sb.regen(&[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 written"), "{out}");
    for (path, _) in &planted {
        assert!(!sb.path(path).exists(), "{path} survived a regen");
    }
    assert_eq!(std::fs::read(&shim).expect("shim"), header);
}

#[test]
fn concurrent_regens_with_the_manifest_swapped_under_them_stay_consistent() {
    let (sb, v, took) = measured_sandbox();
    let mut rng = Rng::from_env();
    let (mut ended_current, mut ended_stale) = (0, 0);
    for round in 0..CONCURRENT_ROUNDS {
        let (first, second) = if round % 2 == 0 {
            (&v.a, &v.b)
        } else {
            (&v.b, &v.a)
        };
        swap_manifest(&sb, first);
        v.make_fixed_outputs_stale(&sb);
        let n = 2 + round % 3;
        let mut children: Vec<Child> = (0..n).map(|_| spawn_regen(&sb)).collect();
        // Swap while they queue on the lock; one more regen may or may not run after it.
        std::thread::sleep(Duration::from_micros(
            rng.below(took.as_micros() as u64 * 2),
        ));
        swap_manifest(&sb, second);
        if rng.below(2) == 0 {
            children.push(spawn_regen(&sb));
        }
        for child in children {
            let out = child.wait_with_output().expect("wait");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "round {round}: a regen failed: {err}");
        }
        let snap = sb.snapshot();
        let temps: Vec<_> = snap
            .keys()
            .filter(|p| is_regen_temp(p) || *p == JOURNAL)
            .collect();
        assert!(
            temps.is_empty(),
            "round {round}: staging files left: {temps:?}"
        );
        let got = outputs(&snap);
        let (is_a, is_b) = (got == v.out_a, got == v.out_b);
        if !is_a && !is_b {
            let from_a: Vec<_> = got.keys().filter(|k| got[*k] == v.out_a[*k]).collect();
            panic!("round {round}: a mix of both manifests' outputs (from A: {from_a:?})");
        }
        let current = got == *v.outputs_for(second);
        let (code, out) = sb.regen(&["--check"]);
        assert_eq!(code, if current { 0 } else { 1 }, "round {round}: {out}");
        if current {
            ended_current += 1;
        } else {
            ended_stale += 1;
        }
    }
    eprintln!(
        "{CONCURRENT_ROUNDS} rounds: {ended_current} ended current, {ended_stale} ended on the \
         manifest before the swap (and --check said so)"
    );
}
