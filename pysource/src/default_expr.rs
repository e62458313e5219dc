//! A comparison key for default-value expressions, so `'bundle'` and `"bundle"`, `1<<20` and
//! `1 << 20`, or `0x10` and `16` compare equal. The key is ruff's `ComparableExpr` (the
//! expression without ranges, literals by value) in its derived `Debug` form: two keys are
//! equal exactly when the expressions compare equal, and a `String` key lets the extracted
//! facts keep no borrowed AST.

use ruff_python_ast::Expr;
use ruff_python_ast::comparable::ComparableExpr;

/// The comparison key of `expr`, built from the AST alone.
pub fn canonical(expr: &Expr) -> String {
    format!("{:?}", ComparableExpr::from(expr))
}

/// The comparison key of a declared default (a Python expression in api.toml); text that does
/// not parse gets a key no parsed expression has.
pub fn canonical_declared(expr: &str) -> String {
    match ruff_python_parser::parse_expression(expr) {
        Ok(parsed) => canonical(parsed.expr()),
        Err(_) => format!("unparsable {expr:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::canonical_declared as c;

    #[test]
    fn quote_style_and_spacing_do_not_matter() {
        for (a, b) in [
            ("'bundle'", "\"bundle\""),
            ("1<<20", "1 << 20"),
            ("(1,2)", "( 1, 2 )"),
            ("{'a':1}", "{\"a\": 1}"),
            ("0x10", "16"),
            ("\"it's\"", "'it\\'s'"),
        ] {
            assert_eq!(c(a), c(b), "{a} vs {b}");
        }
    }

    #[test]
    fn different_values_differ() {
        for (a, b) in [
            ("'bundle'", "'bundles'"),
            ("None", "'None'"),
            ("1 << 20", "1 << 21"),
            ("(1 + 2) * 3", "1 + 2 * 3"),
            ("f(1)", "f(1,)x"),
        ] {
            assert_ne!(c(a), c(b), "{a} vs {b}");
        }
    }
}
