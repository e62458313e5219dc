//! What a module needs of a native core, and whether a core serves it: a list of uses
//! (object path, kind, required or probed) checked against a [`CoreSurface`] into a verdict
//! naming the first use the core cannot serve and why. A module's uses come from its derived
//! surface ([`super::requirements`]); api.toml's `[[native]]` entries are uses too ([`from_manifest`]).

pub use super::fit::Why;
use super::fit::callable;
use mooncake_sos_manifest::core_record::{Access, Class, CoreSurface, Instance, Member, Place};
use mooncake_sos_manifest::model::native::qualified;
use mooncake_sos_manifest::model::{NativeCheck, NativeRequirement};
use mooncake_sos_manifest::signature::CallShape;
use serde::Serialize;

/// One use of the native core.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Requirement {
    /// Dotted path inside the core: `ReplicateConfig`, `MooncakeDistributedStore.put_from`,
    /// `ReplicateConfig.group_ids`, `bind_to_numa_node`.
    pub object: String,
    pub usage: Usage,
    /// `false` for a use the module probes first (`getattr(store, "put_from", None)`).
    pub required: bool,
    /// Where the use comes from, for messages: `module.py:1234`, `api.toml [[native]] 3`.
    pub origin: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Usage {
    /// A call of a method or function (of a class: making an instance). With `overload`, one
    /// docstring overload must have exactly these parameters after `self` (whitespace aside);
    /// with `shapes`, one overload must take a call of one of these shapes (alternatives: the
    /// shapes a forwarding helper may pass, of which each call takes one).
    Call {
        #[serde(skip_serializing_if = "Option::is_none")]
        overload: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        shapes: Vec<CallShape>,
    },
    /// Reading an attribute, on an instance or on the class / module itself.
    Read { on: On },
    /// Assigning an attribute.
    Write { on: On },
    /// Making an instance: with no arguments (`overload` None), or through an `__init__`
    /// overload with exactly these parameters.
    Construct {
        #[serde(skip_serializing_if = "Option::is_none")]
        overload: Option<String>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum On {
    Instance,
    Class,
}

/// One use a core does not serve.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Miss {
    pub requirement: Requirement,
    #[serde(flatten)]
    pub why: Why,
}

impl Miss {
    /// Why, in a few words: `absent`, `` `Foo` absent`` (the path breaks off earlier), ...
    pub fn reason(&self) -> String {
        match &self.why {
            Why::Absent { missing } if *missing == self.requirement.object => "absent".into(),
            why => why.short(),
        }
    }

    /// `ReplicateConfig.group_ids (write on instance): absent [origin]`.
    pub fn line(&self) -> String {
        format!(
            "{} ({}): {} [{}]",
            self.requirement.object,
            self.requirement.usage.label(),
            self.reason(),
            self.requirement.origin
        )
    }
}

impl Usage {
    pub fn label(&self) -> String {
        let on = |on: &On| match on {
            On::Instance => "on instance",
            On::Class => "on class",
        };
        match self {
            Usage::Call { overload, shapes } => {
                let mut label = match shapes.len() {
                    0 => "call".to_owned(),
                    _ => shapes
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(" | "),
                };
                if let Some(o) = overload {
                    label.push_str(&format!(" ({o})"));
                }
                label
            }
            Usage::Read { on: o } => format!("read {}", on(o)),
            Usage::Write { on: o } => format!("write {}", on(o)),
            Usage::Construct { overload: None } => "construct with no arguments".into(),
            Usage::Construct { overload: Some(o) } => format!("construct ({o})"),
        }
    }
}

/// Whether a core serves a module: every use it cannot serve (in the order given, so the first
/// is the first the module would hit), and the probed ones it lacks. A probed use is served
/// by a core that lacks the member (the module falls back); one that has it must serve the use
/// as made (a call that fits, a writable attribute), since the module then takes that path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub compatible: bool,
    pub missing: Vec<Miss>,
    pub optional_missing: Vec<Miss>,
}

impl Verdict {
    pub fn first_missing(&self) -> Option<&Miss> {
        self.missing.first()
    }

    /// The objects of the required uses the core does not serve, in order.
    pub fn missing_objects(&self) -> Vec<&str> {
        self.missing
            .iter()
            .map(|m| m.requirement.object.as_str())
            .collect()
    }
}

/// Checks every use in `needs` against `core`.
pub fn serve(core: &CoreSurface, needs: &[Requirement]) -> Verdict {
    let (mut missing, mut optional_missing) = (Vec::new(), Vec::new());
    for need in needs {
        if let Err(why) = serves(core, need) {
            let absent = matches!(why, Why::Absent { .. });
            let miss = Miss {
                requirement: need.clone(),
                why,
            };
            if need.required || !absent {
                missing.push(miss);
            } else {
                optional_missing.push(miss);
            }
        }
    }
    Verdict {
        compatible: missing.is_empty(),
        missing,
        optional_missing,
    }
}

/// The uses api.toml's `[[native]]` entries declare (all required).
pub fn from_manifest(native: &[NativeRequirement]) -> Vec<Requirement> {
    native
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let object = qualified(n.module.as_deref(), &n.object);
            let (object, usage) = match &n.check {
                NativeCheck::Overload(o) => (
                    object,
                    Usage::Call {
                        overload: Some(o.clone()),
                        shapes: Vec::new(),
                    },
                ),
                NativeCheck::Attribute { name, instance } => (
                    format!("{object}.{name}"),
                    Usage::Read {
                        on: if *instance { On::Instance } else { On::Class },
                    },
                ),
            };
            Requirement {
                object,
                usage,
                required: true,
                origin: format!("api.toml [[native]] #{}", i + 1),
            }
        })
        .collect()
}

/// What a path names in the core.
enum Target<'a> {
    Class(&'a Class),
    /// A member of a class: its class-level entry, `None` when only an instance has it.
    Member {
        class: &'a Class,
        name: &'a str,
        member: Option<&'a Member>,
    },
    Function(&'a [String]),
    Value,
}

fn resolve<'a>(core: &'a CoreSurface, path: &'a str) -> Result<Target<'a>, Why> {
    let (ns, local) = match core.place(path) {
        Place::Found(ns, local) => (ns, local),
        Place::NoModule(module) => {
            return Err(Why::Absent {
                missing: module.to_owned(),
            });
        }
        Place::Unread(module, why) => {
            return Err(Why::Unverified {
                reason: format!("{module} could not be read here ({why})"),
            });
        }
    };
    // `missing` is named as the use names it: qualified when the path is.
    let prefix = &path[..path.len() - local.len()];
    let absent = |upto: &str| Why::Absent {
        missing: format!("{prefix}{upto}"),
    };
    let (head, rest) = local.split_once('.').unwrap_or((local, ""));
    if let Some(class) = ns.classes.get(head) {
        if rest.is_empty() {
            return Ok(Target::Class(class));
        }
        // Members of nested classes are not read: a deeper path is absent below the member.
        let (name, deeper) = rest.split_once('.').unwrap_or((rest, ""));
        let member = class.members.get(name);
        if member.is_none() && instance_access(class, name).is_none() {
            return Err(absent(&local[..head.len() + 1 + name.len()]));
        }
        if !deeper.is_empty() {
            return Err(absent(local));
        }
        return Ok(Target::Member {
            class,
            name,
            member,
        });
    }
    if !rest.is_empty() {
        return Err(absent(head));
    }
    if let Some(f) = ns.functions.get(head) {
        return Ok(Target::Function(&f.overloads));
    }
    if ns.values.contains_key(head) {
        return Ok(Target::Value);
    }
    Err(absent(head))
}

fn instance_access(class: &Class, name: &str) -> Option<Access> {
    match &class.instance {
        Instance::Made { members, .. } => members.get(name).copied(),
        Instance::Failed { .. } => None,
    }
}

fn serves(core: &CoreSurface, need: &Requirement) -> Result<(), Why> {
    // An instance that takes new attributes serves any write, even of a name it lacks.
    if let (Usage::Write { on: On::Instance }, Place::Found(ns, local)) =
        (&need.usage, core.place(&need.object))
        && let Some((head, _)) = local.split_once('.')
        && let Some(Class {
            instance:
                Instance::Made {
                    new_attributes: true,
                    ..
                },
            ..
        }) = ns.classes.get(head)
    {
        return Ok(());
    }
    let target = resolve(core, &need.object)?;
    match (&need.usage, target) {
        // Calling a class makes an instance.
        (Usage::Call { overload, shapes }, Target::Class(class)) => {
            construct(class, overload, shapes)
        }
        (Usage::Construct { overload }, Target::Class(class)) => construct(class, overload, &[]),
        (Usage::Construct { .. }, _) => Err(Why::NotCallable),
        (Usage::Call { overload, shapes }, Target::Function(found)) => {
            callable(found, overload, shapes)
        }
        (
            Usage::Call { overload, shapes },
            Target::Member {
                member: Some(member),
                ..
            },
        ) => match member.overloads() {
            Some(found) => callable(found, overload, shapes),
            None if matches!(member, Member::Class) => Ok(()),
            None => Err(Why::NotCallable),
        },
        (Usage::Call { .. }, _) => Err(Why::NotCallable),
        // What only an instance has is not on the class.
        (Usage::Read { on: On::Class }, Target::Member { member: None, .. }) => Err(Why::Absent {
            missing: need.object.clone(),
        }),
        // Python lets a class or module attribute be read if it is there (resolved above),
        // and assigned whether or not it is.
        (Usage::Read { on: On::Class } | Usage::Write { on: On::Class }, _) => Ok(()),
        (Usage::Read { on: On::Instance }, Target::Member { class, name, .. }) => {
            match instance_access(class, name) {
                Some(access) if !access.read => Err(Why::Unreadable),
                _ => Ok(()),
            }
        }
        (
            Usage::Write { on: On::Instance },
            Target::Member {
                class,
                name,
                member,
            },
        ) => write_on_instance(class, name, member),
        // A module-level name: no instance to speak of.
        (Usage::Read { on: On::Instance } | Usage::Write { on: On::Instance }, _) => Ok(()),
    }
}

/// Making an instance: with no arguments (measured: an instance was made or not), or through
/// an `__init__` overload (the declared one, or one taking a call of the shapes made).
fn construct(class: &Class, overload: &Option<String>, shapes: &[CallShape]) -> Result<(), Why> {
    let no_arguments = overload.is_none() && shapes.iter().all(|s| *s == CallShape::default());
    if no_arguments {
        return match &class.instance {
            Instance::Made { .. } => Ok(()),
            Instance::Failed { error } => Err(Why::NotConstructible {
                error: error.clone(),
            }),
        };
    }
    let found = class
        .members
        .get("__init__")
        .and_then(Member::overloads)
        .unwrap_or_default();
    callable(found, overload, shapes)
}

/// Measured on the instance when one could be made; else judged from the class, which can
/// say so only for a property (its setter).
fn write_on_instance(class: &Class, name: &str, member: Option<&Member>) -> Result<(), Why> {
    match (&class.instance, instance_access(class, name), member) {
        (_, Some(access), _) if access.write => Ok(()),
        (_, Some(_), _) => Err(Why::ReadOnly),
        // A method or nested class: only an instance taking new attributes could shadow it.
        (Instance::Made { .. }, None, _) => Err(Why::ReadOnly),
        (Instance::Failed { .. }, None, Some(Member::Property { readonly: false })) => Ok(()),
        (Instance::Failed { .. }, None, Some(Member::Property { readonly: true })) => {
            Err(Why::ReadOnly)
        }
        (Instance::Failed { error }, None, _) => Err(Why::Unverified {
            reason: format!("no instance could be made to try it: {error}"),
        }),
    }
}

#[cfg(test)]
#[path = "needs_tests.rs"]
mod tests;
