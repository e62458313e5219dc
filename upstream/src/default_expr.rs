//! A normal form for default-value expressions, so `'bundle'` and `"bundle"`, or `1<<20`
//! and `1 << 20`, compare equal. Like Python's `ast.unparse` for the forms defaults take;
//! anything else falls back to its source text with whitespace collapsed.

use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

/// The normal form of `expr`, whose ranges point into `text`.
pub fn canonical(expr: &Expr, text: &str) -> String {
    let mut out = String::new();
    write(expr, text, &mut out);
    out
}

/// The normal form of a declared default (a Python expression in api.toml).
pub fn canonical_declared(expr: &str) -> String {
    match ruff_python_parser::parse_expression(expr) {
        Ok(parsed) => canonical(parsed.expr(), expr),
        Err(_) => collapse(expr),
    }
}

fn write(expr: &Expr, text: &str, out: &mut String) {
    let list = |items: &[Expr], out: &mut String| {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write(item, text, out);
        }
    };
    match expr {
        Expr::StringLiteral(s) => python_repr(s.value.to_str(), out),
        Expr::NumberLiteral(n) => match &n.value {
            ast::Number::Int(i) => out.push_str(&i.to_string()),
            _ => out.push_str(&collapse(&text[n.range()])),
        },
        Expr::BooleanLiteral(b) => out.push_str(if b.value { "True" } else { "False" }),
        Expr::NoneLiteral(_) => out.push_str("None"),
        Expr::EllipsisLiteral(_) => out.push_str("..."),
        Expr::Name(n) => out.push_str(&n.id),
        Expr::Attribute(a) => {
            write(&a.value, text, out);
            out.push('.');
            out.push_str(&a.attr);
        }
        Expr::Tuple(t) => {
            out.push('(');
            list(&t.elts, out);
            if t.elts.len() == 1 {
                out.push(',');
            }
            out.push(')');
        }
        Expr::List(l) => {
            out.push('[');
            list(&l.elts, out);
            out.push(']');
        }
        Expr::Set(s) => {
            out.push('{');
            list(&s.elts, out);
            out.push('}');
        }
        Expr::Dict(d) => {
            out.push('{');
            for (i, item) in d.items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match &item.key {
                    Some(k) => {
                        write(k, text, out);
                        out.push_str(": ");
                    }
                    None => out.push_str("**"),
                }
                write(&item.value, text, out);
            }
            out.push('}');
        }
        Expr::UnaryOp(u) => {
            out.push_str(match u.op {
                ast::UnaryOp::Not => "not ",
                op => op.as_str(),
            });
            write(&u.operand, text, out);
        }
        Expr::BinOp(b) => {
            out.push('(');
            write(&b.left, text, out);
            out.push(' ');
            out.push_str(b.op.as_str());
            out.push(' ');
            write(&b.right, text, out);
            out.push(')');
        }
        Expr::Call(c) => {
            write(&c.func, text, out);
            out.push('(');
            list(&c.arguments.args, out);
            for (i, kw) in c.arguments.keywords.iter().enumerate() {
                if i > 0 || !c.arguments.args.is_empty() {
                    out.push_str(", ");
                }
                match &kw.arg {
                    Some(name) => {
                        out.push_str(name);
                        out.push('=');
                    }
                    None => out.push_str("**"),
                }
                write(&kw.value, text, out);
            }
            out.push(')');
        }
        other => out.push_str(&collapse(&text[other.range()])),
    }
}

/// Python's `repr(str)`: single quotes unless the text has a `'` and no `"`.
fn python_repr(value: &str, out: &mut String) {
    let quote = if value.contains('\'') && !value.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for ch in value.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::canonical_declared as c;

    #[test]
    fn quote_style_and_spacing_do_not_matter() {
        assert_eq!(c("'bundle'"), c("\"bundle\""));
        assert_eq!(c("1<<20"), c("1 << 20"));
        assert_eq!(c("(1,2)"), c("( 1, 2 )"));
        assert_eq!(c("{'a':1}"), c("{\"a\": 1}"));
        assert_eq!(c("0x10"), c("16"));
    }

    #[test]
    fn different_values_differ() {
        assert_ne!(c("'bundle'"), c("'bundles'"));
        assert_ne!(c("None"), c("'None'"));
        assert_ne!(c("1 << 20"), c("1 << 21"));
        assert_ne!(c("(1 + 2) * 3"), c("1 + 2 * 3"));
        assert_eq!(c("\"it's\""), "\"it's\"");
    }
}
