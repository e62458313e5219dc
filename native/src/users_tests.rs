//! A user's record derived from a wheel made up on the spot: importing another extension
//! module of the package (`mooncake.engine`) is a use of it, however it is written, at its
//! line and with its guard; a member read through `from ... import` is that member's read.

use super::{UseAccess, UserUse, derive};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `dir/user-1.0-py3-none-any.whl`: METADATA and `files` (path, text).
fn wheel(dir: &Path, files: &[(&str, &str)]) -> PathBuf {
    let path = dir.join("user-1.0-py3-none-any.whl");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let options = zip::write::SimpleFileOptions::default();
    zip.start_file("user-1.0.dist-info/METADATA", options)
        .unwrap();
    zip.write_all(b"Metadata-Version: 2.1\nName: user\nVersion: 1.0\n\n")
        .unwrap();
    for (name, text) in files {
        zip.start_file(*name, options).unwrap();
        zip.write_all(text.as_bytes()).unwrap();
    }
    zip.finish().unwrap();
    path
}

fn engine_use(file: &str, line: usize, member: &str, access: UseAccess) -> UserUse {
    UserUse {
        file: file.into(),
        line,
        module: "mooncake.engine".into(),
        member: member.into(),
        access,
        guard: None,
    }
}

#[test]
fn a_bare_import_of_an_extension_module_is_recorded_as_its_import() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = wheel(
        dir.path(),
        &[
            ("user/bare.py", "import os\nimport mooncake.engine\n"),
            ("user/aliased.py", "import mooncake.engine as te\n"),
            ("user/from_package.py", "from mooncake import engine\n"),
            (
                "user/member.py",
                "from mooncake.engine import TransferEngine\n",
            ),
            (
                "user/guarded.py",
                "try:\n    import mooncake.engine\nexcept ImportError:\n    pass\n",
            ),
        ],
    );
    let record = derive(&wheel, "mooncake", &["mooncake.store", "mooncake.engine"]).unwrap();
    let guarded = UserUse {
        guard: Some("a failure is caught at line 3".into()),
        ..engine_use("user/guarded.py", 2, "", UseAccess::Import)
    };
    assert_eq!(
        record.uses,
        [
            engine_use("user/aliased.py", 1, "", UseAccess::Import),
            engine_use("user/bare.py", 2, "", UseAccess::Import),
            engine_use("user/from_package.py", 1, "", UseAccess::Import),
            guarded,
            engine_use("user/member.py", 1, "TransferEngine", UseAccess::Read),
        ]
    );
}
