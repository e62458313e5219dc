//! Cores load out of the box: `core` with no flags brings the CUDA runtime a core needs from
//! the package index (here a loopback index serving the real nvidia-cuda-runtime 13.5.37
//! wheel) and builds the driver stub for it, then reads the cuda13 core; the runtime is
//! cached and a second read downloads nothing.

use crate::common::cores::{core_wheels_dir, cuda13_wheel};
use crate::common::xtask;
use mooncake_sos_testkit::SimpleIndex;

#[test]
fn a_cuda13_core_reads_with_no_flags() {
    let runtime = std::fs::read_dir(core_wheels_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("nvidia_cuda_runtime-13.5.37"))
        .expect("the nvidia-cuda-runtime 13.5.37 wheel next to the cuda13 cores");
    let index = SimpleIndex::serve(&[runtime]);
    let target = tempfile::tempdir().unwrap();
    let whl = cuda13_wheel("0.3.11.post1").display().to_string();
    let env = [
        ("CARGO_TARGET_DIR", target.path().to_str().unwrap()),
        ("PIP_INDEX_URL", index.url.as_str()),
        ("PIP_FIND_LINKS", ""),
        ("LD_LIBRARY_PATH", ""),
    ];
    let run = xtask(&["core", "--no-cache", &whl], &env);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.starts_with(
            "mooncake-transfer-engine-cuda13 0.3.11.post1: mooncake/store.so `mooncake.store` (sha256 c277554ca822): 18 classes"
        ),
        "{run:?}"
    );
    let downloads = |requests: Vec<String>| {
        requests
            .iter()
            .filter(|r| r.contains("/files/nvidia_cuda_runtime-13.5.37"))
            .count()
    };
    assert_eq!(downloads(index.server.requests()), 1);
    let kept = target.path().join("mooncake-sos/runtimes");
    assert!(
        kept.join("nvidia-cuda-runtime-13.5.37/nvidia/cu13/lib/libcudart.so.13")
            .is_file()
    );
    assert!(
        std::fs::read_dir(&kept)
            .unwrap()
            .any(|e| e.unwrap().path().join("libcuda.so.1").exists())
    );
    // The second read brings nothing new.
    let again = xtask(&["core", "--no-cache", &whl], &env);
    assert_eq!(again.code, Some(0), "{again:?}");
    assert_eq!(again.stdout, run.stdout);
    assert_eq!(downloads(index.server.requests()), 1);
}
