//! Value domains, derived from the module's source: the only values a parameter or a
//! dataclass field takes.
//!
//! - `p: Literal["a", "b"]` (or `typing.Literal[...]`): the strings listed.
//! - A dataclass field (`FieldSchema.codec`) the module validates: a function taking the
//!   dataclass (`schema: FieldSchema`) whose body dispatches on the field (`schema.codec`, or a
//!   local `codec = schema.codec`) with `if`s comparing it to string literals (`==`, `in (...)`,
//!   `or`) and closes the dispatch by raising: an `if`/`elif` chain whose `else` ends in
//!   `raise`, or `if codec not in {...}: raise`. The domain is every string compared, the
//!   early `if codec == "auto": return ...` before it included. Several such functions: the
//!   union, in source order.
//!
//! Values are strings; a `Literal` with any other member, or an annotation that only contains
//! one (`Optional[Literal[...]]`), gives no domain.

use crate::facts::{BindingKind, FoundDomain, ModuleFacts};
use crate::source::Lines;
use ruff_python_ast::{self as ast, CmpOp, Expr, Stmt};
use ruff_text_size::Ranged;
use std::collections::BTreeMap;
use std::ops::Range;

/// The domain `Literal["a", "b"]` gives the parameter on `line`; `None` for any other
/// annotation.
pub(crate) fn literal_domain(annotation: &Expr, line: usize) -> Option<FoundDomain> {
    let Expr::Subscript(s) = annotation else {
        return None;
    };
    let head = match &*s.value {
        Expr::Name(n) => n.id.as_str(),
        Expr::Attribute(a) if is_typing(&a.value) => a.attr.as_str(),
        _ => return None,
    };
    if head != "Literal" {
        return None;
    }
    let values = match &*s.slice {
        Expr::Tuple(t) => strings(&t.elts),
        single => strings(std::slice::from_ref(single)),
    }?;
    let mut domain = FoundDomain::at(line);
    for (value, span) in values {
        domain.add(&value, span);
    }
    Some(domain)
}

/// `typing` or `typing_extensions`.
fn is_typing(e: &Expr) -> bool {
    matches!(e, Expr::Name(m) if matches!(m.id.as_str(), "typing" | "typing_extensions"))
}

/// A string value and where its literal is written (a byte range of the module's text).
type Written = (String, Range<usize>);

/// Every item a string literal: their values and places.
fn strings(items: &[Expr]) -> Option<Vec<Written>> {
    let mut out = Vec::new();
    for item in items {
        let Expr::StringLiteral(s) = item else {
            return None;
        };
        out.push((
            s.value.to_str().to_owned(),
            s.start().to_usize()..s.end().to_usize(),
        ));
    }
    (!out.is_empty()).then_some(out)
}

/// Dataclass fields without a `Literal` take the domain the module's dispatches give them.
pub(crate) fn attach_dispatched(body: &[Stmt], lines: &Lines, facts: &mut ModuleFacts) {
    let dataclasses: Vec<&str> = facts
        .bindings
        .iter()
        .filter(|(_, b)| matches!(&b.kind, BindingKind::Class(c) if c.dataclass.is_some()))
        .map(|(name, _)| name.as_str())
        .collect();
    for ((class, field), domain) in dispatched_fields(body, lines, &dataclasses) {
        if let Some(BindingKind::Class(c)) = facts.bindings.get_mut(&class).map(|b| &mut b.kind)
            && let Some(f) = c.fields.iter_mut().find(|f| f.name == field)
            && f.domain.is_none()
        {
            f.domain = Some(domain);
        }
    }
}

/// `(class, field)` -> the domain the module's closed dispatches give the field, for every
/// class in `dataclasses`.
fn dispatched_fields(
    body: &[Stmt],
    lines: &Lines,
    dataclasses: &[&str],
) -> BTreeMap<(String, String), FoundDomain> {
    let mut out: BTreeMap<(String, String), FoundDomain> = BTreeMap::new();
    let mut functions: Vec<&ast::StmtFunctionDef> = Vec::new();
    for stmt in body {
        match stmt {
            Stmt::FunctionDef(f) => functions.push(f),
            Stmt::ClassDef(c) => functions.extend(c.body.iter().filter_map(|s| match s {
                Stmt::FunctionDef(f) => Some(f),
                _ => None,
            })),
            _ => {}
        }
    }
    for f in functions {
        let p = &f.parameters;
        for param in p.posonlyargs.iter().chain(&p.args).chain(&p.kwonlyargs) {
            let Some(class) = param.parameter.annotation.as_deref().and_then(class_name) else {
                continue;
            };
            if !dataclasses.contains(&class) {
                continue;
            }
            let name = param.parameter.name.as_str();
            for (field, found) in dispatches(&f.body, name, lines) {
                let entry = out.entry((class.to_owned(), field));
                let domain = entry.or_insert(FoundDomain::at(found.line));
                for (v, span) in found.values.iter().zip(&found.spans) {
                    domain.add(v, span.clone());
                }
            }
        }
    }
    out
}

/// `C` or `"C"`.
fn class_name(annotation: &Expr) -> Option<&str> {
    match annotation {
        Expr::Name(n) => Some(n.id.as_str()),
        Expr::StringLiteral(s) => Some(s.value.to_str()),
        _ => None,
    }
}

/// The closed dispatches on fields of `param` among the top-level statements of `body`.
fn dispatches<'b>(body: &'b [Stmt], param: &str, lines: &Lines) -> Vec<(String, FoundDomain)> {
    // Locals bound to a field: `codec = schema.codec`.
    let mut locals: BTreeMap<&'b str, &'b str> = BTreeMap::new();
    for stmt in body {
        if let Stmt::Assign(a) = stmt
            && let [Expr::Name(target)] = &a.targets[..]
            && let Some(field) = field_of(&a.value, param)
        {
            locals.insert(target.id.as_str(), field);
        }
    }
    let subject = |e: &'b Expr| match e {
        Expr::Name(n) => locals.get(n.id.as_str()).copied(),
        other => field_of(other, param),
    };
    // Per field: the strings compared so far, and the first comparison's line.
    let mut open: BTreeMap<&'b str, FoundDomain> = BTreeMap::new();
    let mut closed: Vec<(String, FoundDomain)> = Vec::new();
    for stmt in body {
        let Stmt::If(s) = stmt else { continue };
        let line = lines.line(s.start());
        let mut record = |field: &'b str, values: Vec<Written>, closes: bool| {
            let domain = open.entry(field).or_insert(FoundDomain::at(line));
            for (v, span) in values {
                domain.add(&v, span);
            }
            if closes {
                closed.push((field.to_owned(), domain.clone()));
            }
        };
        let Some(test) = test_of(&s.test, &subject) else {
            continue;
        };
        match (test.negated, &s.elif_else_clauses[..]) {
            // `if codec not in {...}: raise ...`
            (true, []) if ends_in_raise(&s.body) => record(test.field, test.values, true),
            // `if codec == "auto": return ...`: accepted before the dispatch.
            (false, []) if ends_in_return(&s.body) => record(test.field, test.values, false),
            // `if ... elif ... else: raise ...`, every test on the same field.
            (false, [tests @ .., last]) => {
                if last.test.is_some() || !ends_in_raise(&last.body) {
                    continue;
                }
                let mut values = test.values;
                let mut all = true;
                for clause in tests {
                    match clause.test.as_ref().and_then(|t| test_of(t, &subject)) {
                        Some(t) if !t.negated && t.field == test.field => values.extend(t.values),
                        _ => all = false,
                    }
                }
                if all {
                    record(test.field, values, true);
                }
            }
            _ => {}
        }
    }
    closed
}

/// `param.field`.
fn field_of<'e>(e: &'e Expr, param: &str) -> Option<&'e str> {
    match e {
        Expr::Attribute(a) if matches!(&*a.value, Expr::Name(n) if n.id.as_str() == param) => {
            Some(a.attr.as_str())
        }
        _ => None,
    }
}

/// A comparison of a field with string literals.
struct Test<'e> {
    field: &'e str,
    values: Vec<Written>,
    /// `!=` / `not in`.
    negated: bool,
}

fn test_of<'e>(e: &'e Expr, subject: &impl Fn(&'e Expr) -> Option<&'e str>) -> Option<Test<'e>> {
    match e {
        Expr::BoolOp(b) if b.op == ast::BoolOp::Or => {
            let mut parts = b.values.iter().map(|v| test_of(v, subject));
            let mut first = parts.next()??;
            for part in parts {
                let part = part?;
                if part.negated || first.negated || part.field != first.field {
                    return None;
                }
                first.values.extend(part.values);
            }
            Some(first)
        }
        Expr::Compare(c) if c.ops.len() == 1 && c.comparators.len() == 1 => {
            let (left, right) = (&*c.left, &c.comparators[0]);
            let (negated, members) = match c.ops[0] {
                CmpOp::Eq | CmpOp::NotEq => {
                    let negated = c.ops[0] == CmpOp::NotEq;
                    // Either side may be the literal.
                    if let (Some(field), Some(v)) =
                        (subject(left), strings(std::slice::from_ref(right)))
                    {
                        return Some(Test {
                            field,
                            values: v,
                            negated,
                        });
                    }
                    let field = subject(right)?;
                    let values = strings(std::slice::from_ref(left))?;
                    return Some(Test {
                        field,
                        values,
                        negated,
                    });
                }
                CmpOp::In => (false, right),
                CmpOp::NotIn => (true, right),
                _ => return None,
            };
            let items = match members {
                Expr::Tuple(t) => &t.elts,
                Expr::Set(s) => &s.elts,
                Expr::List(l) => &l.elts,
                _ => return None,
            };
            Some(Test {
                field: subject(left)?,
                values: strings(items)?,
                negated,
            })
        }
        _ => None,
    }
}

fn ends_in_raise(body: &[Stmt]) -> bool {
    matches!(body.last(), Some(Stmt::Raise(_)))
}

fn ends_in_return(body: &[Stmt]) -> bool {
    matches!(body.last(), Some(Stmt::Return(_)))
}

/// A string as Python's `repr` writes it: `'dict'`, `"it's"`.
pub fn repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::from(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') => {
                let n = u32::from(c);
                if n <= 0xff {
                    out.push_str(&format!("\\x{n:02x}"));
                } else {
                    out.push_str(&format!("\\u{n:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// `one of 'a', 'b'`, or `no domain`.
pub fn one_of(values: Option<&[String]>) -> String {
    match values {
        None => "no domain".into(),
        Some(v) => {
            let shown: Vec<String> = v.iter().map(|s| repr(s)).collect();
            format!("one of {}", shown.join(", "))
        }
    }
}

/// `Some((expected, found))` when the declared domain and the one found differ as sets; the
/// found side names the difference (`also 'x'`, `not 'y'`).
pub(crate) fn difference(
    declared: Option<&[String]>,
    found: Option<&[String]>,
) -> Option<(String, String)> {
    let (expected, got) = (one_of(declared), one_of(found));
    match (declared, found) {
        (None, None) => None,
        (Some(want), Some(have)) => {
            let extra: Vec<String> = have
                .iter()
                .filter(|v| !want.contains(v))
                .map(|v| repr(v))
                .collect();
            let lacking: Vec<String> = want
                .iter()
                .filter(|v| !have.contains(v))
                .map(|v| repr(v))
                .collect();
            let mut notes = Vec::new();
            if !extra.is_empty() {
                notes.push(format!("also {}", extra.join(", ")));
            }
            if !lacking.is_empty() {
                notes.push(format!("not {}", lacking.join(", ")));
            }
            (!notes.is_empty()).then(|| (expected, format!("{got} ({})", notes.join("; "))))
        }
        _ => Some((expected, got)),
    }
}

#[cfg(test)]
#[path = "domain_tests.rs"]
mod tests;
