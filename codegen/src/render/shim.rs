//! generated/python/<shim>.py: the one run-time contract check, shipped in images (run at import
//! time) and run by the Rust runtime at load time.

use super::python::{Py, str_literal};
use super::{HEADER, Output, RenderError};
use askama::Template;
use mooncake_sos_manifest::model::{
    Api, DefaultValue, NativeCheck, Param, ParamKind, PyData, RelPath, Scenario, SymbolKind,
};

#[derive(Template)]
#[template(path = "shim.py", escape = "none")]
struct ShimTemplate {
    header: &'static str,
    module: String,
    shim: String,
    shim_lit: String,
    module_lit: String,
    native_module_lit: String,
    repo_lit: String,
    path_lit: String,
    commit_lit: String,
    sha256_lit: String,
    fingerprint_lit: String,
    fix_lit: String,
    symbols_lit: String,
    native_lit: String,
    scenarios_lit: String,
    symbols: Vec<String>,
    symbol_lits: Vec<String>,
    distributions_lit: String,
    overloads_py: &'static str,
}

pub fn path(api: &Api) -> RelPath {
    RelPath::new(&format!("generated/python/{}.py", api.shim.module))
        .expect("a Python identifier makes a valid file name")
}

pub fn render(api: &Api) -> Result<Output, RenderError> {
    let u = &api.upstream;
    let images: Vec<&str> = api.images.iter().map(|i| i.dockerfile.as_str()).collect();
    let mut fix = format!(
        "install {} at {} over the installed package (the {} regions of {} do it)",
        u.path,
        u.short_commit(),
        api.name,
        images.join(" and ")
    );
    if let Some((package, version)) = &api.drop.first_release {
        fix.push_str(&format!(", or install {package}>={version}"));
    }
    let symbols: Vec<String> = api.symbols.iter().map(|s| s.name.clone()).collect();
    let template = ShimTemplate {
        header: HEADER,
        module: u.module.clone(),
        shim: api.shim.module.clone(),
        shim_lit: str_literal(&api.shim.module),
        module_lit: str_literal(&u.module),
        native_module_lit: str_literal(&u.native_module),
        repo_lit: str_literal(&u.repo),
        path_lit: str_literal(&u.path),
        commit_lit: str_literal(&u.commit),
        sha256_lit: str_literal(&u.sha256),
        fingerprint_lit: str_literal(&api.fingerprint()),
        fix_lit: str_literal(&fix),
        // Every wheel flavour (-non-cuda, -cuda13, -rocm, ...) shares this prefix.
        symbols_lit: Py::List(api.symbols.iter().map(symbol).collect()).to_source(0),
        native_lit: Py::List(api.native.iter().map(native).collect()).to_source(0),
        scenarios_lit: Py::List(api.scenarios.iter().map(scenario).collect()).to_source(0),
        symbol_lits: symbols.iter().map(|s| str_literal(s)).collect(),
        overloads_py: mooncake_sos_manifest::signature::OVERLOADS_PY.trim_end(),
        distributions_lit: format!(
            "({})",
            api.distributions()
                .iter()
                // As the shim compares installed names: lowercase, `_` and `.` as `-`.
                .map(|d| format!(
                    "{}, ",
                    str_literal(&d.to_ascii_lowercase().replace(['_', '.'], "-"))
                ))
                .collect::<String>()
        ),
        symbols,
    };
    Ok(Output::File {
        path: path(api),
        contents: super::lines(template.render()?),
    })
}

fn params(params: &[Param]) -> Py {
    Py::List(
        params
            .iter()
            .map(|p| {
                let (default, factory) = match &p.default {
                    Some(DefaultValue::Expr(e)) => (Py::str(&e.text), Py::None),
                    Some(DefaultValue::Factory(f)) => (Py::None, Py::str(f)),
                    None => (Py::None, Py::None),
                };
                let kind = match p.kind {
                    ParamKind::Positional => "positional",
                    ParamKind::KeywordOnly => "keyword",
                };
                Py::Dict(vec![
                    ("name", Py::str(&p.name)),
                    ("kind", Py::str(kind)),
                    ("default", default),
                    ("factory", factory),
                ])
            })
            .collect(),
    )
}

fn symbol(s: &mooncake_sos_manifest::model::Symbol) -> Py {
    let mut d = vec![
        ("name", Py::str(&s.name)),
        ("kind", Py::str(s.kind.as_str())),
    ];
    match &s.kind {
        SymbolKind::Dataclass { frozen, fields } => {
            d.push(("frozen", Py::Bool(*frozen)));
            d.push(("fields", params(fields)));
        }
        SymbolKind::Class { init, methods } => {
            d.push(("init", params(init)));
            let methods = methods
                .iter()
                .map(|m| {
                    Py::Dict(vec![
                        ("name", Py::str(&m.name)),
                        ("static", Py::Bool(m.staticmethod)),
                        ("params", params(&m.params)),
                    ])
                })
                .collect();
            d.push(("methods", Py::List(methods)));
        }
        SymbolKind::Function { params: p, .. } => d.push(("params", params(p))),
        SymbolKind::Alias {
            target, params: p, ..
        } => {
            d.push(("target", Py::str(target)));
            d.push(("params", params(p)));
        }
    }
    Py::Dict(d)
}

fn native(n: &mooncake_sos_manifest::model::NativeRequirement) -> Py {
    let mut d = vec![
        ("object", Py::str(&n.object)),
        ("reason", Py::str(&n.reason)),
    ];
    if let Some(m) = &n.module {
        d.push(("module", Py::str(m)));
    }
    match &n.check {
        NativeCheck::Overload(o) => d.push(("overload", Py::str(o))),
        NativeCheck::Attribute { name, instance } => {
            d.push(("attribute", Py::str(name)));
            d.push(("instance", Py::Bool(*instance)));
        }
    }
    Py::Dict(d)
}

fn opt_int(v: Option<u64>) -> Py {
    v.map_or(Py::None, |n| Py::Int(n as i64))
}

/// A scenario as plain data; its values are rebuilt from the parsed literal, never copied as
/// text, so no manifest text reaches the shim unquoted.
fn scenario(s: &Scenario) -> Py {
    let client = |i: usize| Py::str(&s.clients[i].name);
    let clients = s
        .clients
        .iter()
        .map(|c| {
            Py::Dict(vec![
                ("name", Py::str(&c.name)),
                ("global_segment_size", Py::Int(c.global_segment_size as i64)),
                ("local_buffer_size", Py::Int(c.local_buffer_size as i64)),
                ("protocol", Py::str(&c.protocol)),
            ])
        })
        .collect();
    let fields = s
        .fields
        .iter()
        .map(|f| {
            Py::Dict(vec![
                ("name", Py::str(&f.name)),
                ("codec", Py::str(&f.codec)),
                ("section", Py::str(&f.section)),
                ("dtype", Py::opt_str(f.dtype.as_deref())),
                ("nullable", Py::Bool(f.nullable)),
                ("value", data(&f.value)),
            ])
        })
        .collect();
    Py::Dict(vec![
        ("name", Py::str(&s.name)),
        ("needs_torch", Py::Bool(s.needs_torch)),
        ("key_prefix", Py::str(&s.key_prefix)),
        ("clients", Py::List(clients)),
        (
            "put",
            Py::Dict(vec![
                ("by", client(s.put.by)),
                ("type", Py::str(&s.put.kind)),
                ("namespace", Py::str(&s.put.namespace)),
                ("chunk_bytes", opt_int(s.put.chunk_bytes)),
                ("replica_num", opt_int(s.put.replica_num)),
            ]),
        ),
        (
            "get",
            Py::Dict(vec![
                ("by", client(s.get.by)),
                ("type", Py::str(&s.get.kind)),
            ]),
        ),
        ("fields", Py::List(fields)),
    ])
}

fn data(d: &PyData) -> Py {
    match d {
        PyData::None => Py::None,
        PyData::Bool(b) => Py::Bool(*b),
        PyData::Int(i) => Py::Int(*i),
        PyData::Float(f) => Py::Float(*f),
        PyData::Str(s) => Py::str(s),
        PyData::List(items) => Py::Row(items.iter().map(data).collect()),
        PyData::Dict(items) => Py::Map(items.iter().map(|(k, v)| (k.clone(), data(v))).collect()),
    }
}
