//! Dataclass structs, class wrappers with option structs, and module-level functions. Each
//! generated body is one chain over the runtime's call helper (`rt::Call`), which owns
//! argument building, error context and the master's liveness.

use super::{doc, ident};
use crate::render::RenderError;
use mooncake_sos_manifest::model::names;
use mooncake_sos_manifest::model::{
    Api, DefaultValue, Method, Param, ParamKind, PyLiteral, RustType, SymbolKind, ValueType,
};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

pub(super) fn tokens(api: &Api) -> Result<TokenStream, RenderError> {
    let mut out = Vec::new();
    for symbol in &api.symbols {
        out.push(match &symbol.kind {
            SymbolKind::Dataclass { frozen, fields } => dataclass(&symbol.name, *frozen, fields)?,
            SymbolKind::Class { init, methods } => class(&symbol.name, init, methods),
            SymbolKind::Function { params, returns }
            | SymbolKind::Alias {
                params, returns, ..
            } => function(&symbol.name, params, *returns),
        });
    }
    Ok(quote! { #(#out)* })
}

/// The Rust type of a dataclass field (validation admits only these).
fn field_type(p: &Param) -> Result<TokenStream, RenderError> {
    Ok(match p.value_type {
        ValueType::Str => quote! { String },
        ValueType::Bool => quote! { bool },
        ValueType::Int => quote! { i64 },
        ValueType::Float => quote! { f64 },
        ValueType::StrDict => quote! { BTreeMap<String, rt::serde_json::Value> },
        ValueType::Object => quote! { rt::serde_json::Value },
        other => {
            return Err(RenderError(format!(
                "dataclass field {}: no Rust type for {other:?}",
                p.name
            )));
        }
    })
}

/// The Rust value of a dataclass field's default (validation admits only these).
fn default_value(p: &Param) -> Result<TokenStream, RenderError> {
    let literal = match &p.default {
        Some(DefaultValue::Expr(e)) => e.literal.as_ref(),
        Some(DefaultValue::Factory(f)) if f == "dict" => return Ok(quote! { BTreeMap::new() }),
        _ => None,
    };
    Ok(match literal {
        Some(PyLiteral::Bool(b)) => quote! { #b },
        Some(PyLiteral::Int(i)) => {
            let v = proc_macro2::Literal::i64_unsuffixed(*i);
            quote! { #v }
        }
        Some(PyLiteral::Str(s)) => quote! { #s.to_owned() },
        other => {
            return Err(RenderError(format!(
                "dataclass field {}: no Rust value for default {other:?}",
                p.name
            )));
        }
    })
}

fn dataclass(name: &str, frozen: bool, fields: &[Param]) -> Result<TokenStream, RenderError> {
    let ty = format_ident!("{}", name);
    let names: Vec<_> = fields.iter().map(|f| ident(&f.name)).collect();
    let keys: Vec<_> = fields.iter().map(|f| f.name.as_str()).collect();
    let types = fields
        .iter()
        .map(field_type)
        .collect::<Result<Vec<_>, _>>()?;
    let mut args = Vec::new();
    let mut inits = Vec::new();
    for (f, (n, t)) in fields.iter().zip(names.iter().zip(&types)) {
        if f.default.is_none() && f.value_type == ValueType::Str {
            args.push(quote! { #n: impl Into<String> });
            inits.push(quote! { #n: #n.into() });
        } else if f.default.is_none() {
            args.push(quote! { #n: #t });
            inits.push(quote! { #n });
        } else {
            let v = default_value(f)?;
            inits.push(quote! { #n: #v });
        }
    }
    let about = doc(&format!(
        " The Python dataclass `{name}`; converts to it when passed to a call."
    ));
    let new_doc = doc(" The required fields; the others take the Python defaults.");
    let make = quote! {
        rt::Call::function(py, m, #name)
            #(.kw(#keys, &self.#names))*
            .invoke()
    };
    // A frozen dataclass cannot change: equal values share one Python object.
    let convert = if frozen {
        quote! {
            static MADE: rt::FrozenObjects<#ty> = rt::FrozenObjects::new();
            MADE.get_or_make(m, self, || #make)
        }
    } else {
        make
    };
    Ok(quote! {
        #about
        #[derive(Debug, Clone, PartialEq)]
        pub struct #ty {
            #(pub #names: #types,)*
        }

        impl #ty {
            #new_doc
            pub fn new(#(#args),*) -> Self {
                #ty { #(#inits),* }
            }
        }

        impl ToPy for #ty {
            fn to_py<'py>(&self, py: Python<'py>, m: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
                #convert
            }
        }
    })
}

fn rust_type(t: RustType) -> TokenStream {
    match t {
        RustType::String => quote! { String },
        RustType::U64 => quote! { u64 },
        RustType::Bool => quote! { bool },
        RustType::Strings => quote! { Vec<String> },
        RustType::Rows => quote! { Rows },
        RustType::FieldSchemas => quote! { BTreeMap<String, FieldSchema> },
        RustType::ReplicateConfig => quote! { ReplicateConfig },
    }
}

/// An options struct for the parameters that carry a Rust type; `None` = the Python default.
fn options(name: &syn::Ident, what: &str, params: &[&Param]) -> TokenStream {
    let fields = params.iter().map(|p| {
        let (n, t) = (
            ident(&p.name),
            rust_type(p.rust.unwrap_or(RustType::String)),
        );
        let default = match &p.default {
            Some(DefaultValue::Expr(e)) => format!(" `{}` (Python default: `{e}`).", p.name),
            Some(DefaultValue::Factory(f)) => {
                format!(" `{}` (Python default: `{f}()`).", p.name)
            }
            None => format!(" `{}`.", p.name),
        };
        let d = doc(&default);
        quote! { #d pub #n: Option<#t>, }
    });
    let about = doc(&format!(
        " Keyword arguments of `{what}`; a `None` field is left to the module's default."
    ));
    quote! {
        #about
        #[derive(Debug, Clone, Default)]
        pub struct #name { #(#fields)* }
    }
}

/// The call steps that pass `options`; a `config` defaults to the store's `ReplicateConfig`.
fn option_steps(params: &[&Param]) -> Vec<TokenStream> {
    params
        .iter()
        .map(|p| {
            let (n, key) = (ident(&p.name), p.name.as_str());
            if p.rust == Some(RustType::ReplicateConfig) {
                quote! { .config(#key, options.#n.as_ref()) }
            } else {
                quote! { .opt(#key, options.#n.as_ref()) }
            }
        })
        .collect()
}

/// Required positional parameters become `&impl ToPy` arguments, in order.
fn positional(params: &[Param]) -> Vec<syn::Ident> {
    params
        .iter()
        .filter(|p| p.kind == ParamKind::Positional && p.default.is_none())
        .map(|p| ident(&p.name))
        .collect()
}

fn keyword_options(params: &[Param]) -> Vec<&Param> {
    params.iter().filter(|p| p.rust.is_some()).collect()
}

/// (return type, the step that converts the call's result) for what a call returns.
fn returns(ty: ValueType) -> (TokenStream, TokenStream) {
    match ty {
        ValueType::Nothing => (quote! { () }, quote! { .map(|_| ()) }),
        ValueType::DataProtoRef => (quote! { DataProtoRef }, quote! { .map(DataProtoRef::from) }),
        ValueType::StrDict => (
            quote! { rt::serde_json::Value },
            quote! { .and_then(|out| rt::py_to_json(&out)) },
        ),
        _ => (quote! { Bound<'py, PyAny> }, quote! {}),
    }
}

fn class(name: &str, init: &[Param], methods: &[Method]) -> TokenStream {
    let ty = format_ident!("{}", name);
    let store_param = init.iter().find(|p| p.value_type == ValueType::Store);
    let store_name = store_param.map(|p| p.name.as_str()).unwrap_or("store");
    let init_opts = keyword_options(init);
    let init_opts_ty = format_ident!("{}", names::options_struct(name));
    let init_struct = options(&init_opts_ty, &format!("{name}(...)"), &init_opts);
    let init_steps = option_steps(&init_opts);
    let unused = init_steps.is_empty().then(|| quote! { let _ = options; });
    let mut items = vec![init_struct];
    let mut fns = Vec::new();
    for method in methods {
        let opts = keyword_options(&method.params);
        let opts_ty = format_ident!("{}", names::options_struct(&method.name));
        let args = positional(&method.params);
        let (ret, convert) = returns(method.returns);
        let key = method.name.as_str();
        let fn_name = ident(&method.name);
        let static_note = if method.staticmethod {
            " (a staticmethod upstream)"
        } else {
            ""
        };
        let d = doc(&format!(" `{name}.{key}`{static_note}."));
        let (opt_arg, steps) = if opts.is_empty() {
            (quote! {}, Vec::new())
        } else {
            items.push(options(&opts_ty, &format!("{name}.{key}"), &opts));
            (quote! { options: &#opts_ty, }, option_steps(&opts))
        };
        fns.push(quote! {
            #d
            pub fn #fn_name<'py>(&self, py: Python<'py>, #(#args: &impl ToPy,)* #opt_arg) -> Result<#ret> {
                self.0.call(py, #key)
                    #(.arg(#args))*
                    #(#steps)*
                    .invoke()
                    #convert
            }
        });
    }
    let about = doc(&format!(" A Python `{name}` over a [`Store`]."));
    let new_doc = doc(&format!(
        " `{name}({store_name}, ...)`; a store with `replica_num` set passes its `ReplicateConfig` to every write that takes a `config`."
    ));
    items.push(quote! {
        #about
        pub struct #ty(rt::Instance);

        impl #ty {
            #new_doc
            pub fn new(py: Python<'_>, module: &Module, store: &Store, options: &#init_opts_ty) -> Result<Self> {
                #unused
                rt::Instance::construct(py, module, #name, store)
                    #(#init_steps)*
                    .instance()
                    .map(Self)
            }

            /// The Python object.
            pub fn object<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
                self.0.object(py)
            }

            #(#fns)*
        }
    });
    quote! { #(#items)* }
}

fn function(name: &str, params: &[Param], ret: ValueType) -> TokenStream {
    let fn_name = ident(name);
    let args = positional(params);
    let (ret, convert) = returns(ret);
    let d = doc(&format!(" `{name}(...)`, a module-level function."));
    quote! {
        #d
        pub fn #fn_name<'py>(py: Python<'py>, module: &Module, #(#args: &impl ToPy),*) -> Result<#ret> {
            module.call(py, #name)
                #(.arg(#args))*
                .invoke()
                #convert
        }
    }
}
