//! Doctored copies of the real 0.3.12.post1 module, one change each that the contract check
//! (the generated shim's, run by Python's import and by the Rust runtime's load) must catch.

/// One change to the real module, and the start of the one miss it must cause.
pub struct Doctoring {
    pub what: &'static str,
    pub find: &'static str,
    pub replace: &'static str,
    pub miss: &'static str,
}

pub const DOCTORINGS: [Doctoring; 3] = [
    Doctoring {
        what: "a positional parameter made positional-only",
        find: "def export_dataproto_ref(ref: MooncakeDataProtoRef) -> dict[str, Any]:",
        replace: "def export_dataproto_ref(ref: MooncakeDataProtoRef, /) -> dict[str, Any]:",
        miss: "export_ref: parameter 'ref' is positional-only, expected positional; \
               expected (ref), found (ref: 'MooncakeDataProtoRef', /)",
    },
    Doctoring {
        what: "a changed default",
        find: "        key_prefix: str = \"bundle\",\n",
        replace: "        key_prefix: str = \"bundles\",\n",
        miss: "MooncakeBundleTransfer.__init__: parameter 'key_prefix': default is 'bundles', \
               expected 'bundle'; expected (self, store, key_prefix='bundle', ",
    },
    Doctoring {
        what: "two parameters swapped",
        find: "= \"dataproto\",\n        namespace: str = \"default\",\n        partition: str = \"default\",\n        stage: str = \"default\",\n        chunk_bytes",
        replace: "= \"dataproto\",\n        partition: str = \"default\",\n        namespace: str = \"default\",\n        stage: str = \"default\",\n        chunk_bytes",
        miss: "MooncakeBundleTransfer.put: parameter 'partition' comes before 'namespace'; \
               expected (self, data, *, type='dataproto', namespace='default', partition='default', ",
    },
];

impl Doctoring {
    /// `source` with this change applied; the text it changes must occur exactly once.
    pub fn apply(&self, source: &str) -> String {
        assert_eq!(
            source.matches(self.find).count(),
            1,
            "{}: {:?} is not in the module exactly once",
            self.what,
            self.find
        );
        source.replacen(self.find, self.replace, 1)
    }
}
