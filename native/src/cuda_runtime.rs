//! What a core needs to load that a plain machine lacks, brought by the reader itself: the
//! CUDA runtime from its wheel on the package index (pinned, cached unpacked) and a CUDA
//! driver stub built from the core's own undefined driver symbols
//! (scripts/cuda-driver-stub.sh, with gcc). Neither lets a CUDA call succeed; both let the
//! core import, so its surface can be read.

use mooncake_sos_pysource::archive::{Archive, MAX_READ_BYTES};
use mooncake_sos_support::bounded::{Limits, run};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The driver stub's generator, part of the repository.
const DRIVER_STUB_SH: &str = include_str!("../../scripts/cuda-driver-stub.sh");

/// Where the reader gets what a core needs.
#[derive(Clone, Debug)]
pub struct Runtimes {
    /// Unpacked runtimes and built stubs are kept here.
    pub dir: PathBuf,
    /// The interpreter whose pip downloads the runtime wheels.
    pub python: PathBuf,
    /// The package index (default: pip's configuration).
    pub index_url: Option<String>,
    /// Only what `dir` already has.
    pub offline: bool,
    pub timeout: Duration,
}

/// The runtime wheel serving a missing library: (distribution, pinned version, the
/// directory in the wheel holding the library).
fn runtime_wheel(library: &str) -> Option<(&'static str, &'static str, &'static str)> {
    match library {
        "libcudart.so.12" => Some((
            "nvidia-cuda-runtime-cu12",
            "12.9.79",
            "nvidia/cuda_runtime/lib",
        )),
        "libcudart.so.13" => Some(("nvidia-cuda-runtime", "13.5.37", "nvidia/cu13/lib")),
        _ => None,
    }
}

/// Whether [`Runtimes::provide`] can bring `library`.
pub fn provides(library: &str) -> bool {
    library == "libcuda.so.1" || runtime_wheel(library).is_some()
}

impl Runtimes {
    /// A directory holding `library`, for the core at `core_so` (a stub is built for it).
    pub fn provide(
        &self,
        library: &str,
        core_so: &Path,
        core_sha256: &str,
    ) -> Result<PathBuf, String> {
        if library == "libcuda.so.1" {
            return self.driver_stub(core_so, core_sha256);
        }
        let (dist, version, lib) =
            runtime_wheel(library).ok_or_else(|| format!("nothing here provides {library}"))?;
        let unpacked = self.dir.join(format!("{dist}-{version}"));
        let lib_dir = unpacked.join(lib);
        if lib_dir.join(library).is_file() {
            return Ok(lib_dir);
        }
        if self.offline {
            return Err(format!(
                "--offline: {dist} {version} (for {library}) is not in {}",
                self.dir.display()
            ));
        }
        let work = mooncake_sos_support::bounded::scratch("runtime").map_err(|e| e.to_string())?;
        let mut pip = Command::new(&self.python);
        pip.args([
            "-m",
            "pip",
            "--disable-pip-version-check",
            "--no-input",
            "download",
        ])
        .args(["--no-deps", "--only-binary=:all:", "--dest"])
        .arg(work.path())
        .arg(format!("{dist}=={version}"))
        .env("TMPDIR", work.path());
        if let Some(url) = &self.index_url {
            pip.args(["--index-url", url]);
        }
        let done = run(&mut pip, &Limits::within(self.timeout))
            .map_err(|e| format!("pip, downloading {dist} {version}: {e}"))?;
        if !done.status.success() {
            return Err(format!(
                "pip, downloading {dist} {version}, {}",
                done.failure(3)
            ));
        }
        let wheel = std::fs::read_dir(work.path())
            .map_err(|e| e.to_string())?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "whl"))
            .ok_or_else(|| format!("pip download left no wheel of {dist} {version}"))?;
        let staged = work.path().join("unpacked");
        unpack(&wheel, lib, &staged)?;
        if !staged.join(lib).join(library).is_file() {
            return Err(format!("{} has no {lib}/{library}", wheel.display()));
        }
        std::fs::create_dir_all(&self.dir).map_err(|e| e.to_string())?;
        // Another run may have put it there meanwhile: either copy serves.
        if std::fs::rename(&staged, &unpacked).is_err() && !lib_dir.join(library).is_file() {
            return Err(format!("cannot keep {} in {}", dist, self.dir.display()));
        }
        Ok(lib_dir)
    }

    /// `<dir>/driver-stub-<core sha256>/libcuda.so.1`, built for this core.
    fn driver_stub(&self, core_so: &Path, core_sha256: &str) -> Result<PathBuf, String> {
        let short = &core_sha256[..core_sha256.len().min(16)];
        let out = self.dir.join(format!("driver-stub-{short}"));
        if out.join("libcuda.so.1").is_file() {
            return Ok(out);
        }
        let work = mooncake_sos_support::bounded::scratch("stub").map_err(|e| e.to_string())?;
        let staged = work.path().join("stub");
        let mut build = Command::new("sh");
        build
            .args(["-c", DRIVER_STUB_SH, "cuda-driver-stub"])
            .arg(&staged)
            .arg(core_so)
            .env("TMPDIR", work.path());
        let done = run(&mut build, &Limits::within(Duration::from_secs(120)))
            .map_err(|e| format!("building the CUDA driver stub: {e}"))?;
        if !done.status.success() {
            return Err(format!("building the CUDA driver stub {}", done.failure(3)));
        }
        std::os::unix::fs::symlink("libcuda.so", staged.join("libcuda.so.1"))
            .map_err(|e| e.to_string())?;
        std::fs::create_dir_all(&self.dir).map_err(|e| e.to_string())?;
        if std::fs::rename(&staged, &out).is_err() && !out.join("libcuda.so.1").is_file() {
            return Err(format!(
                "cannot keep the driver stub in {}",
                self.dir.display()
            ));
        }
        Ok(out)
    }
}

/// The wheel's files under `prefix` into `dest` (same relative paths), bounded as every
/// wheel read is.
fn unpack(wheel: &Path, prefix: &str, dest: &Path) -> Result<(), String> {
    let mut archive = Archive::open(wheel).map_err(|e| e.to_string())?;
    let names: Vec<String> = archive
        .members()
        .iter()
        .map(|m| m.name.clone())
        .filter(|n| Path::new(n).starts_with(prefix))
        .collect();
    for name in names {
        let path = dest.join(&name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        let mut out = std::fs::File::create(&path).map_err(|e| e.to_string())?;
        archive
            .copy(&name, MAX_READ_BYTES, "a runtime library", &mut out)
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}
