//! The one editor of api.toml: every change the tool makes to it (a pin, a first release, an
//! image moved to another strategy, the declarations `verify --fix` plans) is an [`Edit`] made
//! here with toml_edit, so the comments, the order and the spacing around what changes stay as
//! written. Edits take and give text without a byte order mark, in LF: the caller keeps the
//! file's own ([`crate::layout`]).

mod declarations;
mod image;
mod pins;

pub use image::move_image;
pub use pins::{set_first_release, set_pin};

use toml_edit::DocumentMut;

/// One declaration to add, change or remove.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edit {
    /// A `[[native]]` table: `object` and, for an attribute, `attribute`/`instance`/`access`;
    /// for a callable, `overload`.
    AddNative {
        object: String,
        attribute: Option<Attribute>,
        overload: Option<String>,
        optional: bool,
        reason: String,
    },
    AddSibling {
        module: String,
        optional: bool,
        reason: String,
    },
    /// A declared attribute used in more ways than declared, which every core allows.
    SetAccess {
        path: String,
        access: &'static str,
    },
    /// `--prune`: a declaration no use needs (`by = "consumer"` ones are never pruned).
    RemoveNative {
        path: String,
    },
    RemoveSibling {
        module: String,
    },
    /// A parameter's (or dataclass field's) `domain`, set to the module's; `None` removes it.
    /// `owner` declares it: `Sym` (its `fields` or `params`), `Sym.__init__`, `Sym.method`.
    SetDomain {
        owner: String,
        param: String,
        domain: Option<Vec<String>>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attribute {
    pub name: String,
    pub instance: bool,
    pub access: &'static str,
}

/// api.toml's text with `edits` made, everything else kept as written.
pub fn apply(text: &str, edits: &[Edit]) -> Result<String, String> {
    let mut doc: DocumentMut = text.parse().map_err(|e| format!("{e}"))?;
    for edit in edits {
        declarations::apply(&mut doc, edit)?;
    }
    Ok(doc.to_string())
}
