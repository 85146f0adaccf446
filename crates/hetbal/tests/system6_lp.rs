//! System 6 as the paper writes it, solved as a linear program by a real solver
//! (good_lp with microlp), against hetbal's one-variable convex minimisation.
//!
//! The LP knows nothing of prefix sums or circulations: variables `a_i` (items from
//! P_i to P_{i+1}) and `b_i` (items from P_{i+1} to P_i) on each link, conservation
//! `a_i + b_{i-1} - a_{i-1} - b_i = delta_i` at each processor, and every processor's
//! sending time and receiving time at most `tau`.

use good_lp::{constraint, microlp, variable, variables, Expression, Solution, SolverModel};
use hetbal::ring::{system6, RingInstance};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, k: u64) -> u64 {
        self.next() % k
    }
}

fn lp_tau(ring: &RingInstance) -> f64 {
    let n = ring.len();
    let cs = ring.c_succ();
    let cp: Vec<f64> = ring.c_pred().iter().map(|c| c.unwrap()).collect();
    let mut vars = variables!();
    let tau = vars.add(variable().min(0.0));
    let a: Vec<_> = (0..n).map(|_| vars.add(variable().min(0.0))).collect();
    let b: Vec<_> = (0..n).map(|_| vars.add(variable().min(0.0))).collect();
    let mut model = vars.minimise(tau).using(microlp);
    for i in 0..n {
        let p = (i + n - 1) % n;
        let s = (i + 1) % n;
        let delta = ring.delta(i) as f64;
        model = model.with(constraint!(a[i] + b[p] - a[p] - b[i] == delta));
        let send: Expression = cs[i] * a[i] + cp[i] * b[p];
        let receive: Expression = cs[p] * a[p] + cp[s] * b[i];
        model = model.with(constraint!(send <= tau));
        model = model.with(constraint!(receive <= tau));
    }
    let solution = model.solve().expect("System 6 is always feasible");
    solution.value(tau)
}

#[test]
fn system6_matches_the_lp_solver() {
    let mut rng = Rng(0x1b5);
    let mut checked = 0;
    for _ in 0..1500 {
        let n = 2 + rng.below(25) as usize;
        let loads: Vec<u64> = (0..n).map(|_| 1 + rng.below(50)).collect();
        let mut targets: Vec<u64> = (0..n).map(|_| 1 + rng.below(50)).collect();
        let (sl, st): (u64, u64) = (loads.iter().sum(), targets.iter().sum());
        if st < sl {
            targets[0] += sl - st;
        } else if st - sl < targets[0] {
            targets[0] -= st - sl;
        } else {
            continue;
        }
        let costs = |rng: &mut Rng| -> Vec<f64> {
            (0..n)
                .map(|_| 0.1 + (rng.below(1000) as f64) / 100.0)
                .collect()
        };
        let (cs, cp) = (costs(&mut rng), costs(&mut rng));
        let ring = RingInstance::bidirectional(&loads, &targets, &cs, &cp).unwrap();
        let lp = lp_tau(&ring);
        let ours = system6(&ring).rational_tau;
        assert!(
            (lp - ours).abs() <= 1e-9 * lp.abs().max(1.0),
            "LP {lp} vs hetbal {ours} on {ring:?}"
        );
        checked += 1;
    }
    eprintln!("System 6: {checked} random rings, rational optimum = LP optimum within 1e-9");
    assert!(checked > 900);
}
