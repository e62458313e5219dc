//! `[[scenario]]`: names, clients, the put and get, and every field's value checked against
//! its codec, section and dtype, so a scenario that validates builds its values on any run.

use super::{Name, Validator};
use crate::model::python::{PyData, parse_data};
use crate::model::scenarios::*;
use crate::parse::{RawField, RawScenario, S};
use std::collections::BTreeSet;

/// Largest setup size the consumer could mean (1 TiB, the cores' own upper bound).
const MAX_SEGMENT: i64 = 1 << 40;

/// Keys, namespaces and names that land in store keys and in output: plain characters only.
fn is_key_text(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

impl Validator<'_> {
    pub(super) fn scenarios(&mut self, raw: &[S<RawScenario>]) -> Vec<Scenario> {
        let mut names = BTreeSet::new();
        raw.iter()
            .map(|s| {
                let name = self.unique_name(&s.get_ref().name, Name::Kebab, "scenario", &mut names);
                self.scenario(name, s)
            })
            .collect()
    }

    fn size(&mut self, v: &S<i64>, min: i64, what: &str) -> u64 {
        let n = *v.get_ref();
        if !(min..=MAX_SEGMENT).contains(&n) {
            self.error(
                v,
                format!("{what} must be between {min} and {MAX_SEGMENT}: {n}"),
            );
        }
        n.max(0) as u64
    }

    fn scenario(&mut self, name: String, s: &S<RawScenario>) -> Scenario {
        let r = s.get_ref();
        let mut needs_torch = false;
        for need in &r.needs {
            match need.get_ref().as_str() {
                "torch" => needs_torch = true,
                other => self.error(need, format!("unknown need {other:?}: expected \"torch\"")),
            }
        }
        let key_prefix = self.text(&r.key_prefix, is_key_text, "key_prefix ([A-Za-z0-9._-])");
        let mut clients: Vec<Client> = Vec::new();
        let mut client_names = BTreeSet::new();
        for c in &r.client {
            let c = c.get_ref();
            let cname = self.unique_name(&c.name, Name::Python, "client", &mut client_names);
            // 0 is the rollout manager's: it contributes no segment (0.3.11 cores refuse it).
            let global_segment_size = self.size(&c.global_segment_size, 0, "global_segment_size");
            let local_buffer_size = self.size(&c.local_buffer_size, 1, "local_buffer_size");
            let protocol = self.text(
                &c.protocol,
                |p| p == "tcp",
                "protocol (the smoke runs on loopback: \"tcp\")",
            );
            clients.push(Client {
                name: cname,
                global_segment_size,
                local_buffer_size,
                protocol,
            });
        }
        if clients.is_empty() {
            self.error(
                s,
                format!("scenario `{name}` declares no [[scenario.client]]"),
            );
        }
        let contributing = clients.iter().filter(|c| c.global_segment_size > 0).count();
        if contributing == 0 && !clients.is_empty() {
            self.error(s, format!("scenario `{name}`: no client contributes a segment (global_segment_size > 0), so no put can land"));
        }
        let p = r.put.get_ref();
        let by = |v: &mut Self, who: &S<String>| {
            clients
                .iter()
                .position(|c| c.name == *who.get_ref())
                .unwrap_or_else(|| {
                    v.error(
                        who,
                        format!("no client named {:?} in scenario `{name}`", who.get_ref()),
                    );
                    0
                })
        };
        let put_by = by(self, &p.by);
        let put_kind = self.text(
            &p.kind,
            |t| t == "dict",
            "put type (the values are a flat dict: \"dict\")",
        );
        let namespace = self.text(&p.namespace, is_key_text, "namespace ([A-Za-z0-9._-])");
        let chunk_bytes = p
            .chunk_bytes
            .as_ref()
            .map(|c| self.size(c, 1, "chunk_bytes"));
        let replica_num = p.replica_num.as_ref().map(|n| {
            let got = self.size(n, 1, "replica_num");
            if got as usize > contributing.max(1) {
                self.error(n, format!("replica_num {got} needs as many clients contributing a segment; scenario `{name}` has {contributing}"));
            }
            got
        });
        let g = r.get.get_ref();
        let get = Get {
            by: by(self, &g.by),
            kind: self.text(&g.kind, |t| t == "dict", "get type (\"dict\")"),
        };
        let put = Put {
            by: put_by,
            kind: put_kind,
            namespace,
            chunk_bytes,
            replica_num,
        };
        let fields = self.fields(&name, &r.field, needs_torch, s);
        Scenario {
            name,
            needs_torch,
            key_prefix,
            clients,
            put,
            get,
            fields,
        }
    }

    fn fields(
        &mut self,
        scenario: &str,
        raw: &[S<RawField>],
        needs_torch: bool,
        at: &S<RawScenario>,
    ) -> Vec<Field> {
        let mut out: Vec<Field> = Vec::new();
        let mut names = BTreeSet::new();
        let mut rows: Option<usize> = None;
        for f in raw {
            let r = f.get_ref();
            let name = self.unique_name(&r.name, Name::Python, "field", &mut names);
            let codec = r.codec.get_ref().clone();
            match CODECS.iter().find(|(c, _)| *c == codec) {
                None => {
                    let known: Vec<&str> = CODECS.iter().map(|c| c.0).collect();
                    self.error(&r.codec, format!("unknown codec {codec:?}: expected one of {}", known.join(", ")));
                }
                Some((_, true)) if !needs_torch => self.error(
                    &r.codec,
                    format!("codec {codec} needs torch: add needs = [\"torch\"] to scenario `{scenario}`"),
                ),
                _ => {}
            }
            let section = self.text(
                &r.section,
                |s| SECTIONS.contains(&s),
                "section (batch, non_tensor_batch or meta_info)",
            );
            // The consumer puts auto fields in meta_info, the rest in non_tensor_batch.
            let wants = match section.as_str() {
                "meta_info" => Some("auto"),
                "batch" => Some("ndarray"),
                _ => None,
            };
            if let Some(want) = wants.filter(|w| *w != codec) {
                self.error(&r.codec, format!("section {section} takes codec {want}"));
            }
            let dtype = r.dtype.as_ref().map(|d| {
                self.text(
                    d,
                    |d| DTYPES.contains(&d),
                    "dtype (bool, int8..int64, uint8, float16..float64)",
                )
            });
            if dtype.is_none()
                && matches!(
                    codec.as_str(),
                    "ndarray" | "typed_ragged" | "ragged_tensor_dict"
                )
            {
                self.error(&r.codec, format!("codec {codec} needs a dtype"));
            }
            let nullable = r.nullable.as_ref().is_some_and(|n| *n.get_ref());
            let value = match parse_data(r.value.get_ref()) {
                Ok(v) => v,
                Err(e) => {
                    self.error(&r.value, format!("value: {e}"));
                    PyData::None
                }
            };
            if let Some(problem) = dtype.as_deref().and_then(|d| dtype_problem(d, &value)) {
                self.error(&r.value, format!("value of field `{name}`: {problem}"));
            }
            if section != "meta_info" {
                match (&value, shape_problem(&codec, nullable, &value)) {
                    (_, Some(problem)) => self.error(
                        &r.value,
                        format!("value of {codec} field `{name}`: {problem}"),
                    ),
                    (PyData::List(items), None) => match rows {
                        Some(n) if n != items.len() => self.error(
                            &r.value,
                            format!("{} rows, but the fields before have {n}", items.len()),
                        ),
                        _ => rows = Some(items.len()),
                    },
                    _ => {}
                }
            }
            out.push(Field {
                name,
                codec,
                section,
                dtype,
                nullable,
                value,
            });
        }
        if raw.is_empty() {
            self.error(
                at,
                format!("scenario `{scenario}` declares no [[scenario.field]]"),
            );
        } else if rows.is_none() {
            self.error(
                at,
                format!("scenario `{scenario}` has no row field (batch or non_tensor_batch)"),
            );
        }
        out
    }
}

/// What is wrong with a row field's value for its codec, if anything.
fn shape_problem(codec: &str, nullable: bool, value: &PyData) -> Option<String> {
    let PyData::List(rows) = value else {
        return Some("the rows must be a list".into());
    };
    if rows.is_empty() {
        return Some("no rows".into());
    }
    let numbers = |v: &PyData| match v {
        PyData::List(xs) => xs
            .iter()
            .all(|x| matches!(x, PyData::Int(_) | PyData::Float(_) | PyData::Bool(_))),
        _ => false,
    };
    for (i, row) in rows.iter().enumerate() {
        let ok = match (codec, row) {
            (_, PyData::None) => nullable && codec != "ndarray",
            ("ndarray", r) => {
                matches!(r, PyData::Int(_) | PyData::Float(_) | PyData::Bool(_)) || numbers(r)
            }
            ("typed_ragged", r) => numbers(r),
            ("utf8_ragged", r) => matches!(r, PyData::Str(_)),
            ("ragged_tensor_dict", PyData::Dict(items)) => items.iter().all(|(_, v)| numbers(v)),
            ("ragged_tensor_dict", _) => false,
            _ => true,
        };
        if !ok {
            return Some(format!(
                "row {i} does not fit the codec{}",
                if matches!(row, PyData::None) {
                    " (None needs nullable = true)"
                } else {
                    ""
                }
            ));
        }
    }
    None
}

/// The first number in `value` that its dtype cannot hold as written: numpy would raise
/// (`OverflowError` for 300 in int8), wrap, truncate 1.5 to 1, or turn 1e10 into inf in
/// float16, so the smoke would put another value than api.toml says.
fn dtype_problem(dtype: &str, value: &PyData) -> Option<String> {
    let numbers = leaves(value);
    let (lo, hi): (f64, f64) = match dtype {
        "bool" => (0.0, 1.0),
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "uint8" => (0.0, 255.0),
        "float16" => (-65504.0, 65504.0),
        "float32" => (f32::MIN.into(), f32::MAX.into()),
        // int64 and float64 hold every value the literal parser accepts (i64, finite f64).
        _ => return None,
    };
    let integral = !dtype.starts_with("float");
    numbers.into_iter().find_map(|(text, x)| {
        if integral && x.fract() != 0.0 {
            Some(format!("{text} is not an integer, which {dtype} needs"))
        } else if !(lo..=hi).contains(&x) {
            Some(format!("{text} is outside {dtype} ({lo} to {hi})"))
        } else {
            None
        }
    })
}

/// Every number in a value (list items, dict values), as written and as f64.
fn leaves(value: &PyData) -> Vec<(String, f64)> {
    match value {
        PyData::Int(i) => vec![(i.to_string(), *i as f64)],
        PyData::Float(x) => vec![(x.to_string(), *x)],
        PyData::Bool(b) => vec![(
            if *b { "True" } else { "False" }.into(),
            f64::from(u8::from(*b)),
        )],
        PyData::List(items) => items.iter().flat_map(leaves).collect(),
        PyData::Dict(items) => items.iter().flat_map(|(_, v)| leaves(v)).collect(),
        PyData::None | PyData::Str(_) => Vec::new(),
    }
}
