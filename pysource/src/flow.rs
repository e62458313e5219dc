//! What the Python walkers (the consumer scan's and the native surface's) share about how
//! values flow: an assignment's targets and the values they take.

use ruff_python_ast::{Expr, StmtAssign, StmtWith};

/// A walker that evaluates expressions to values of its own kind and binds targets to them.
pub trait Binder<'a> {
    type Value: Clone;
    fn evaluate(&mut self, e: &'a Expr) -> Self::Value;
    fn assign_to(&mut self, target: &'a Expr, value: Self::Value);

    /// `a, b = X, Y` binds pairwise when the two have the same length and no value is starred
    /// (a starred target then takes one value: `a, *b = X, Y`); any other assignment binds
    /// the whole value to every target.
    fn bind_assignment(&mut self, a: &'a StmtAssign) {
        match (&a.targets[..], &*a.value) {
            ([Expr::Tuple(ts)], Expr::Tuple(vs))
                if ts.elts.len() == vs.elts.len() && !vs.elts.iter().any(Expr::is_starred_expr) =>
            {
                for (target, value) in ts.elts.iter().zip(&vs.elts) {
                    let value = self.evaluate(value);
                    self.assign_to(target, value);
                }
            }
            _ => {
                let value = self.evaluate(&a.value);
                for target in &a.targets {
                    self.assign_to(target, value.clone());
                }
            }
        }
    }

    /// `with X(...) as x`: each target takes what its context expression evaluates to (the
    /// context manager's `__enter__` is taken to give itself).
    fn bind_with(&mut self, w: &'a StmtWith) {
        for item in &w.items {
            let value = self.evaluate(&item.context_expr);
            if let Some(target) = &item.optional_vars {
                self.assign_to(target, value);
            }
        }
    }
}
