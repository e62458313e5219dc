//! What the images cannot give a consumer file, at every place it asks: each use (a native
//! member, a module of the package imported at module level) that one or more images' cores
//! cannot serve, once per place, naming every image that fails it.

use crate::images::ImageSide;
use crate::needs::serve;
use crate::requirements::requirements;
use mooncake_sos_pysource::surface::{Target, Use};
use serde::Serialize;

/// A use some images cannot serve.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SiteFinding {
    pub line: usize,
    /// 1-based column of the member's name (0: not known).
    pub col: usize,
    /// `native Class.member` or `sibling pkg.mod`.
    pub subject: String,
    /// What is asked of it: `call(3 args)`, `write on instance`, an import.
    pub usage: String,
    /// Each image that fails it: the image, its core (`package version`), why.
    pub images: Vec<ImageMiss>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ImageMiss {
    pub image: String,
    pub core: String,
    pub why: String,
}

impl SiteFinding {
    /// `native X.y: image: expected the cores of images cuda (P V), rocm (P V) to serve a
    /// call(1 arg), found absent`.
    pub fn message(&self) -> String {
        let cores: Vec<String> = self
            .images
            .iter()
            .map(|m| format!("{} ({})", m.image, m.core))
            .collect();
        let mut whys: Vec<&str> = self.images.iter().map(|m| m.why.as_str()).collect();
        whys.dedup();
        let found = match &whys[..] {
            [one] => (*one).to_owned(),
            _ => self
                .images
                .iter()
                .map(|m| format!("{}: {}", m.image, m.why))
                .collect::<Vec<_>>()
                .join("; "),
        };
        let whose = match cores.len() {
            1 => "the core of image",
            _ => "the cores of images",
        };
        format!(
            "{}: image: expected {whose} {} to serve a {}, found {found}",
            self.subject,
            cores.join(", "),
            self.usage
        )
    }
}

/// Every place in `uses` (one file's) that an image of `images` cannot serve, in the file's
/// order.
pub fn check_each(images: &[ImageSide], file: &str, uses: &[Use]) -> Vec<SiteFinding> {
    let mut out = Vec::new();
    for u in uses {
        let (subject, usage, misses) = match &u.target {
            Target::Native { path, .. } => {
                let needs = requirements(file, std::slice::from_ref(u));
                let Some(need) = needs.first() else {
                    continue;
                };
                let misses: Vec<ImageMiss> = images
                    .iter()
                    .filter_map(|side| {
                        let miss = serve(&side.core, &needs).missing.into_iter().next()?;
                        Some(ImageMiss {
                            image: side.image.clone(),
                            core: side.core.label(),
                            why: miss.reason(),
                        })
                    })
                    .collect();
                (format!("native {path}"), need.usage.label(), misses)
            }
            Target::Sibling { module } if u.required() => {
                let misses = images
                    .iter()
                    .filter(|side| !side.modules.contains_key(module))
                    .map(|side| ImageMiss {
                        image: side.image.clone(),
                        core: side.core.label(),
                        why: format!("none ({})", side.provided_by),
                    })
                    .collect();
                (
                    format!("sibling {module}"),
                    "module-level import".to_owned(),
                    misses,
                )
            }
            _ => continue,
        };
        if misses.is_empty() {
            continue;
        }
        out.push(SiteFinding {
            line: u.pos.0,
            col: u.pos.1,
            subject,
            usage,
            images: misses,
        });
    }
    out.sort_by_key(|f| (f.line, f.col));
    out.dedup();
    out
}

/// The names a core records under `path`'s owner (`Class` of `Class.member`, or the module),
/// and whether `path` itself is one of them.
fn near_names(
    core: &mooncake_sos_manifest::core_record::CoreSurface,
    path: &str,
) -> (Vec<String>, bool) {
    use mooncake_sos_manifest::core_record::Place;
    let Place::Found(ns, rest) = core.place(path) else {
        return (Vec::new(), false);
    };
    let (owner, name) = match rest.rsplit_once('.') {
        Some((o, n)) => (Some(o), n),
        None => (None, rest),
    };
    let names: Vec<String> = match owner {
        None => ns
            .classes
            .keys()
            .chain(ns.functions.keys())
            .chain(ns.values.keys())
            .cloned()
            .collect(),
        Some(class) => ns
            .classes
            .get(class)
            .map(|c| c.members.keys().cloned().collect())
            .unwrap_or_default(),
    };
    let has = names.iter().any(|n| n == name);
    (names, has)
}

/// "Did you mean" for an undeclared native `path`: none when an image's core has it (a real
/// member, just not declared), else the nearest name api.toml declares (`declared`, whole
/// paths) or a core records under the same owner.
pub fn suggestion(images: &[ImageSide], path: &str, declared: &[String]) -> Option<String> {
    let (owner, name) = path.rsplit_once('.').unwrap_or(("", path));
    let mut candidates: Vec<String> = declared
        .iter()
        .filter_map(|d| match d.rsplit_once('.') {
            Some((o, n)) if o == owner => Some(n.to_owned()),
            None if owner.is_empty() => Some(d.clone()),
            _ => None,
        })
        .collect();
    for side in images {
        let (names, has) = near_names(&side.core, path);
        if has {
            return None;
        }
        candidates.extend(names);
    }
    candidates.sort();
    candidates.dedup();
    let near = mooncake_sos_pysource::rules::nearest(name, candidates.iter().map(String::as_str))?;
    Some(match owner {
        "" => near,
        _ => format!("{owner}.{near}"),
    })
}
