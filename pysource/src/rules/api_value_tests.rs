//! Literal arguments against api.toml's domains, on small consumers: each finding line exact.

use crate::consumer::tests::{api, failures};
use mooncake_sos_manifest::model::SymbolKind;

const HEAD: &str = "from functools import partial
from mooncake.store import MooncakeDistributedStore
from mooncake.structured_object_store import FieldSchema, MooncakeBundleTransfer
t = MooncakeBundleTransfer(MooncakeDistributedStore())
";

const TYPES: &str = "one of 'dataproto', 'dict'";

/// api.toml's codec domain, as the findings print it.
fn codecs() -> String {
    let api = api();
    let Some(SymbolKind::Dataclass { fields, .. }) = api
        .symbols
        .iter()
        .find(|s| s.name == "FieldSchema")
        .map(|s| &s.kind)
    else {
        panic!("no FieldSchema dataclass")
    };
    let domain = fields[0].domain.as_deref().expect("codec has a domain");
    assert!(domain.len() > 5 && domain.contains(&"ndarray".to_owned()));
    crate::domain::one_of(Some(domain))
}

#[test]
fn a_literal_outside_a_domain_fails_at_its_line() {
    let text = format!(
        "{HEAD}\
t.get(ref, type=\"tensor\")
t.put(value, **{{\"type\": \"tensor\", \"namespace\": \"x\"}})
MooncakeBundleTransfer.get(t, ref, type='Dict')
p = partial(t.put, type=None)
s = FieldSchema(\"ndarry\", nullable=False)
u = FieldSchema(codec='ragged', metadata={{}})
"
    );
    let codecs = codecs();
    assert_eq!(
        failures(&text),
        [
            format!(
                "consumer.py:5:17: MooncakeBundleTransfer.get: type: expected {TYPES}, found 'tensor'"
            ),
            format!(
                "consumer.py:6:25: MooncakeBundleTransfer.put: type: expected {TYPES}, found 'tensor'"
            ),
            format!(
                "consumer.py:7:41: MooncakeBundleTransfer.get: type: expected {TYPES}, found 'Dict'; did you mean `'dict'`?"
            ),
            format!(
                "consumer.py:8:25: MooncakeBundleTransfer.put: type: expected {TYPES}, found None"
            ),
            format!(
                "consumer.py:9:17: FieldSchema: codec: expected {codecs}, found 'ndarry'; did you mean `'ndarray'`?"
            ),
            format!("consumer.py:10:23: FieldSchema: codec: expected {codecs}, found 'ragged'"),
        ]
    );
}

#[test]
fn literals_inside_and_values_not_known_are_no_findings() {
    let text = format!(
        "{HEAD}\
t.get(ref, type=\"dict\")
t.put(value, type='dataproto', namespace=\"anything\")
t.put(value, **{{\"type\": \"dict\"}})
MooncakeBundleTransfer.get(t, ref, type=\"dict\")
t.get(ref, type=f\"{{kind}}\")
t.get(ref, type=\"ten\" + \"sor\")
t.put(value, **options)
s = [FieldSchema(\"ndarray\"), FieldSchema(codec=\"auto\")]
q = partial(FieldSchema, \"typed_ragged\")
mode = \"tensor\"
mode = \"dict\"
t.get(ref, type=mode)
def get(ref, kind):
    return t.get(ref, type=kind)
get(ref, \"tensor\")
def pick():
    return \"tensor\" if ref else None
t.get(ref, type=pick())
"
    );
    let lines = failures(&text);
    assert!(lines.is_empty(), "{lines:#?}");
}

/// A literal whose value is certain where the call is: a name bound once (here, or a module
/// constant), either arm of a conditional expression, an item of a container.
#[test]
fn a_literal_reaching_the_call_through_a_name_or_an_arm_is_judged() {
    let text = format!(
        "{HEAD}\
KIND = \"tensor\"
codec = \"ndarry\"
t.get(ref, type=KIND)
FieldSchema(codec)
def f(flag):
    t.get(ref, type=\"dict\" if flag else \"tensr\")
    mode = KIND if flag else \"dict\"
    t.put(value, type=mode)
"
    );
    let codecs = codecs();
    assert_eq!(
        failures(&text),
        [
            format!(
                "consumer.py:7:17: MooncakeBundleTransfer.get: type: expected {TYPES}, found 'tensor'"
            ),
            format!(
                "consumer.py:8:13: FieldSchema: codec: expected {codecs}, found 'ndarry'; did you mean `'ndarray'`?"
            ),
            format!(
                "consumer.py:10:21: MooncakeBundleTransfer.get: type: expected {TYPES}, found 'tensr'"
            ),
            format!(
                "consumer.py:12:23: MooncakeBundleTransfer.put: type: expected {TYPES}, found 'tensor'"
            ),
        ]
    );
}
