//! System 6 as the paper writes it, for an LP solver (good_lp with microlp): shared
//! by the LP cross-check test and the bidirectional benchmark, and (with HiGHS) by the
//! standalone comparison in `tools/highs-compare`.
//!
//! The LP knows nothing of prefix sums or circulations: variables `a_i` (items from
//! P_i to P_{i+1}) and `b_i` (items from P_{i+1} to P_i) on each link, conservation
//! `a_i + b_{i-1} - a_{i-1} - b_i = delta_i` at each processor, and every processor's
//! sending time and receiving time at most `tau`.

use good_lp::{
    constraint, microlp, variable, variables, Expression, Solution, Solver, SolverModel, Variable,
};
use hetbal::ring::RingInstance;

/// The rational optimum of System 6, by the LP solver.
pub fn lp_tau(ring: &RingInstance) -> f64 {
    let (model, tau) = system6_model(ring, microlp);
    model
        .solve()
        .expect("System 6 is always feasible")
        .value(tau)
}

/// System 6 built for `solver`, not yet solved, and its variable `tau` (the first one
/// declared), to minimise.
pub fn system6_model<S: Solver>(ring: &RingInstance, solver: S) -> (S::Model, Variable) {
    let n = ring.len();
    let cs = ring.c_succ();
    let cp: Vec<f64> = ring.c_pred().iter().map(|c| c.unwrap()).collect();
    let mut vars = variables!();
    let tau = vars.add(variable().min(0.0));
    let a: Vec<_> = (0..n).map(|_| vars.add(variable().min(0.0))).collect();
    let b: Vec<_> = (0..n).map(|_| vars.add(variable().min(0.0))).collect();
    let mut model = vars.minimise(tau).using(solver);
    for i in 0..n {
        let (p, s) = ((i + n - 1) % n, (i + 1) % n);
        model = model.with(constraint!(
            a[i] + b[p] - a[p] - b[i] == ring.delta(i) as f64
        ));
        let send: Expression = cs[i] * a[i] + cp[i] * b[p];
        let receive: Expression = cs[p] * a[p] + cp[s] * b[i];
        model = model.with(constraint!(send <= tau));
        model = model.with(constraint!(receive <= tau));
    }
    (model, tau)
}
