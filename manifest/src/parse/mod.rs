//! Step 1 of 3: api.toml as written, with the span of every value, before any meaning is
//! given to it. Unknown keys, missing keys and wrong types are rejected here by serde;
//! everything else is checked in `model::validate`.

mod layers;
mod scenarios;

pub use layers::{RawImageCore, RawRelease, RawUpstreamFile, RawWheel};
pub use scenarios::{RawClient, RawField, RawGet, RawPut, RawScenario};

use mooncake_sos_support::diag::{Diagnostic, Source};
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

pub type S<T> = Spanned<T>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawManifest {
    pub name: S<String>,
    pub upstream: S<RawUpstream>,
    pub shim: S<RawShim>,
    pub drop: S<RawDrop>,
    #[serde(default)]
    pub symbol: Vec<S<RawSymbol>>,
    #[serde(default)]
    pub native: Vec<S<RawNative>>,
    #[serde(default)]
    pub sibling: Vec<S<RawSibling>>,
    #[serde(default)]
    pub image: BTreeMap<String, S<RawImage>>,
    /// `[[release]]`: releases whose wheels (with their sha256) a `pin` image installs.
    #[serde(default)]
    pub release: Vec<S<RawRelease>>,
    #[serde(default)]
    pub scenario: Vec<S<RawScenario>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawUpstream {
    pub repo: S<String>,
    pub path: S<String>,
    pub module: S<String>,
    pub commit: S<String>,
    pub sha256: S<String>,
    #[serde(default)]
    pub prs: Vec<S<i64>>,
    pub raw_base_url: S<String>,
    pub native_module: Option<S<String>>,
    /// Parameter name -> the native class whose instance it carries (`store = "..."`).
    pub native_roles: Option<S<BTreeMap<String, S<String>>>>,
    /// `[[upstream.file]]`: more files of the repository overlaid with the module.
    #[serde(default)]
    pub file: Vec<S<RawUpstreamFile>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawShim {
    pub module: S<String>,
    /// No longer a key (the path is derived from `module`): kept only to say so, located.
    pub image_copy_from: Option<S<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDrop {
    pub condition: S<String>,
    pub first_release: Option<S<String>>,
    pub first_release_package: Option<S<String>>,
}

/// One `[[symbol]]`. Which keys apply depends on `kind`; validation says which are wrong.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSymbol {
    pub name: S<String>,
    pub kind: S<String>,
    pub frozen: Option<S<bool>>,
    pub fields: Option<S<Vec<S<RawParam>>>>,
    pub init: Option<S<Vec<S<RawParam>>>>,
    #[serde(default)]
    pub method: Vec<S<RawMethod>>,
    pub target: Option<S<String>>,
    pub params: Option<S<Vec<S<RawParam>>>>,
    pub returns: Option<S<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMethod {
    pub name: S<String>,
    pub staticmethod: Option<S<bool>>,
    #[serde(default)]
    pub params: Vec<S<RawParam>>,
    pub returns: Option<S<String>>,
}

/// A parameter or a dataclass field.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawParam {
    pub name: S<String>,
    pub kind: Option<S<String>>,
    #[serde(rename = "type")]
    pub annotation: Option<S<String>>,
    pub default: Option<S<String>>,
    pub default_factory: Option<S<String>>,
    /// The values the module accepts (`Literal[...]`, a closed dispatch), strings as written.
    pub domain: Option<S<Vec<S<String>>>>,
    pub rust: Option<S<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNative {
    /// The extension module `object` is in, when not `[upstream] native_module`.
    pub module: Option<S<String>>,
    pub object: S<String>,
    pub overload: Option<S<String>>,
    pub attribute: Option<S<String>>,
    pub instance: Option<S<bool>>,
    pub access: Option<S<String>>,
    #[serde(rename = "use")]
    pub usage: Option<S<String>>,
    pub by: Option<S<String>>,
    /// The keys of the dict a callable takes as its first argument (`setup({...})`).
    pub dict_keys: Option<S<Vec<S<String>>>>,
    pub reason: S<String>,
}

/// One `[[sibling]]`: a module of the same package the upstream module imports.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSibling {
    pub module: S<String>,
    #[serde(rename = "use")]
    pub usage: Option<S<String>>,
    pub reason: S<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawImage {
    pub dockerfile: S<String>,
    pub strategy: S<String>,
    pub base_image: S<String>,
    pub base_tag: S<String>,
    pub base_package: Option<S<String>>,
    pub base_version: Option<S<String>>,
    pub fill_package: Option<S<String>>,
    pub fill_version: Option<S<String>>,
    /// Strategy `pin`: the release of `base_package` the image installs (a `[[release]]`).
    pub pin_version: Option<S<String>>,
    pub build_py: Option<S<String>>,
    pub build_py_variant: Option<S<String>>,
    /// The native core the image runs on, when its base image does not install it from a wheel.
    pub core: Option<S<RawImageCore>>,
    /// The base image's other users of the package, `"dist==version"` each (sglang).
    #[serde(default)]
    pub users: Vec<S<String>>,
    /// Extension modules of the package the users import unguarded (`mooncake.engine`).
    #[serde(default)]
    pub user_modules: Vec<S<String>>,
}

/// Keys whose values are prose: they may hold line breaks (renderers wrap or quote them).
/// Every other value is one line.
const PROSE_KEYS: &[&str] = &["condition", "reason"];

/// Parses api.toml text; a syntax or shape error, or a string holding a character no
/// generated file can carry (a control character; a line break outside prose), comes back
/// located.
pub fn parse(source: &Source) -> Result<RawManifest, Diagnostic> {
    // One TOML parse serves both: the strings are checked on it before serde takes it, and
    // a shape error (an unknown key, a wrong type) is still the one reported first.
    let table = toml::de::DeTable::parse(&source.text).map_err(|e| toml_error(source, &e))?;
    let strings = strings_in_table(source, table.get_ref());
    let raw = RawManifest::deserialize(toml::de::Deserializer::from(table))
        .map_err(|e| toml_error(source, &e))?;
    strings.map(|()| raw)
}

fn strings_in_table(source: &Source, table: &toml::de::DeTable<'_>) -> Result<(), Diagnostic> {
    for (key, value) in table {
        strings_in_value(source, value, key.get_ref())?;
    }
    Ok(())
}

fn strings_in_value(
    source: &Source,
    value: &S<toml::de::DeValue<'_>>,
    key: &str,
) -> Result<(), Diagnostic> {
    use toml::de::DeValue;
    match value.get_ref() {
        DeValue::String(s) => {
            if let Some(why) = unfit_string(key, s) {
                return Err(Diagnostic::new(source, value.span(), why));
            }
        }
        DeValue::Array(items) => {
            for item in items {
                strings_in_value(source, item, key)?;
            }
        }
        DeValue::Table(t) => strings_in_table(source, t)?,
        _ => {}
    }
    Ok(())
}

/// Why `value` cannot be the value of `key` (a string, or an item of an array of strings):
/// it holds a character no generated file can carry (a control character; a line break
/// outside prose). `None`: it can.
pub fn unfit_string(key: &str, value: &str) -> Option<String> {
    let bad = value.chars().find(|&c| {
        (c.is_control() && c != '\t' && (c != '\n' || !PROSE_KEYS.contains(&key)))
            || matches!(c, '\u{2028}' | '\u{2029}')
    })?;
    Some(if bad == '\n' {
        format!(
            "a line break in `{key}`: only {} may span lines",
            PROSE_KEYS.join(" and ")
        )
    } else {
        format!("a control character (U+{:04X}) in `{key}`", u32::from(bad))
    })
}

/// serde's shape check: unknown, missing and mistyped keys.
fn toml_error(source: &Source, e: &toml::de::Error) -> Diagnostic {
    let span = e.span().unwrap_or(0..0);
    // toml's message repeats the snippet on later lines: keep its first line.
    let message = e.message().lines().next().unwrap_or("invalid TOML");
    Diagnostic::new(source, span, message)
}
