//! What the stubs read besides the manifest: the images' native cores, as their records in
//! `cores/` hold them (`mooncake_sos_manifest::core_record`; the native crate reads and checks
//! them), so the renderers stay pure functions of their inputs.

use mooncake_sos_manifest::core_record::{CoreSurface, NamespaceRef};

#[derive(Clone, Debug, Default)]
pub struct Cores {
    pub images: Vec<CoreSurface>,
}

impl Cores {
    pub fn new(images: Vec<CoreSurface>) -> Self {
        Self { images }
    }

    /// The records as JSON texts (the tests' fixtures).
    pub fn from_records(records: &[impl AsRef<str>]) -> Result<Self, String> {
        let images = (records.iter().enumerate())
            .map(|(i, r)| {
                serde_json::from_str(r.as_ref()).map_err(|e| format!("core record {}: {e}", i + 1))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { images })
    }

    /// The surface of extension module `module` in each image whose core's record read it.
    pub fn readings(&self, module: &str) -> Vec<NamespaceRef<'_>> {
        self.images
            .iter()
            .filter_map(|c| c.module(module))
            .collect()
    }
}
