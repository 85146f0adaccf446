//! The paper's linear programme for a scatter in a fixed order, as it writes it,
//! for an LP solver (good_lp with microlp). Shared through `#[path]`.
//!
//! Variables `n_k >= 0` (rational items of position k) and `T`; minimise `T`
//! subject to `sum_{j<=k} (a_j n_j + b_j) + w_k n_k + s_k <= T` for every position
//! k and `sum n_k = N`, with `Tcomm_j(x) = a_j x + b_j`, `Tcomp_k(x) = w_k x + s_k`
//! (every startup paid).
#![allow(dead_code)]

use good_lp::{constraint, microlp, variable, variables, Expression, Solution, SolverModel};
use hetbal::scatter::{Cost, ScatterInstance};

/// `(a, b, w, s)` of processor `i` (affine costs only).
pub fn line(instance: &ScatterInstance, i: usize) -> (f64, f64, f64, f64) {
    let affine = |c: &Cost| match c {
        Cost::Affine { per_item, startup } => (*per_item, *startup),
        Cost::Table(_) => panic!("the LP takes affine costs"),
    };
    let (a, b) = affine(instance.comm(i));
    let (w, s) = affine(instance.comp(i));
    (a, b, w, s)
}

/// The rational optimum T and the shares, by the LP solver.
pub fn lp_optimum(instance: &ScatterInstance, order: &[usize]) -> (f64, Vec<f64>) {
    let mut vars = variables!();
    let t = vars.add(variable().min(0.0));
    let n: Vec<_> = order
        .iter()
        .map(|_| vars.add(variable().min(0.0)))
        .collect();
    let mut model = vars.minimise(t).using(microlp);
    let mut sent = Expression::from(0.0);
    let mut total = Expression::from(0.0);
    for (k, &i) in order.iter().enumerate() {
        let (a, b, w, s) = line(instance, i);
        sent += a * n[k] + b;
        total += n[k];
        let finish: Expression = sent.clone() + w * n[k] + s;
        model = model.with(constraint!(finish <= t));
    }
    model = model.with(constraint!(total == instance.items() as f64));
    let solution = model.solve().expect("the scatter LP is feasible");
    (
        solution.value(t),
        n.iter().map(|&v| solution.value(v)).collect(),
    )
}
