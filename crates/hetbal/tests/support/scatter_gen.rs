//! Random scatter instances for tests and benchmarks, drawn from the project's
//! deterministic generator (`hetbal::random::SplitMix64`). Shared through `#[path]`.
#![allow(dead_code)] // each target uses part of it

use hetbal::scatter::{CostSpec, ProcessorSpec, ScatterInstance, ScatterInstanceSpec, StartupRule};

use hetbal::random::SplitMix64;

/// What to draw.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Processors, root included: 1 to `max_p`.
    pub max_p: usize,
    /// Items: 0 to `max_items`.
    pub max_items: u64,
    /// Tabulated costs drawn too (about one cost in three).
    pub tables: bool,
    /// Affine startups drawn too.
    pub startups: bool,
    /// Every number a multiple of 1/8 below 2^20, so that every sum is exact in f64
    /// and two ways of adding up the same times agree to the last bit.
    pub dyadic: bool,
    /// The startup rule, or `None` for either.
    pub rule: Option<StartupRule>,
}

impl Shape {
    /// Small dyadic instances of every kind.
    pub fn small() -> Shape {
        Shape {
            max_p: 5,
            max_items: 30,
            tables: true,
            startups: true,
            dyadic: true,
            rule: None,
        }
    }
}

/// A number of seconds: k/8 for k in 0..=`eighths` (dyadic), or uniform in
/// [0, eighths/8) otherwise.
fn seconds(rng: &mut SplitMix64, eighths: u64, dyadic: bool) -> f64 {
    if dyadic {
        rng.below_u64(eighths + 1) as f64 / 8.0
    } else {
        rng.range((0.0, eighths as f64 / 8.0))
    }
}

/// A non-decreasing table t(0) = 0, …, t(n): flat steps, small steps, jumps.
fn table(rng: &mut SplitMix64, n: u64, dyadic: bool) -> Vec<f64> {
    let mut t = vec![0.0];
    let mut at = 0.0;
    for x in 1..=n {
        let step = match rng.below_u64(6) {
            0 => 0.0,
            1 if x == 1 => seconds(rng, 80, dyadic), // a startup
            1 => seconds(rng, 200, dyadic),          // a jump
            _ => seconds(rng, 24, dyadic),
        };
        at += step;
        t.push(at);
    }
    t
}

fn cost(rng: &mut SplitMix64, shape: &Shape, n: u64, per_item_eighths: u64) -> CostSpec {
    if shape.tables && rng.below_u64(3) == 0 {
        return CostSpec::table(table(rng, n, shape.dyadic));
    }
    let per_item = seconds(rng, per_item_eighths, shape.dyadic);
    let startup = if shape.startups && rng.below_u64(2) == 0 {
        seconds(rng, 40, shape.dyadic)
    } else {
        0.0
    };
    CostSpec::affine(per_item, startup)
}

/// A random valid instance of `shape`.
pub fn instance(rng: &mut SplitMix64, shape: &Shape) -> ScatterInstance {
    let p = 1 + rng.below(shape.max_p);
    let n = rng.below_u64(shape.max_items + 1);
    let root = rng.below(p);
    let rule = shape.rule.unwrap_or(if rng.below_u64(2) == 0 {
        StartupRule::WhenUsed
    } else {
        StartupRule::Always
    });
    let processors = (0..p)
        .map(|i| {
            let comm = if i == root {
                if shape.tables && rng.below_u64(4) == 0 {
                    CostSpec::table(vec![0.0; n as usize + 1])
                } else {
                    CostSpec::affine(0.0, 0.0)
                }
            } else {
                cost(rng, shape, n, 32)
            };
            ProcessorSpec {
                name: Some(format!("P{i}")),
                comm,
                comp: cost(rng, shape, n, 64),
            }
        })
        .collect();
    ScatterInstance::from_spec(ScatterInstanceSpec {
        items: n,
        root: format!("P{root}"),
        startup_rule: rule,
        processors,
    })
    .expect("generated instances are valid")
}

/// A random order: every processor once, the root last.
pub fn random_order(rng: &mut SplitMix64, instance: &ScatterInstance) -> Vec<usize> {
    let root = instance.root();
    let mut others: Vec<usize> = (0..instance.len()).filter(|&i| i != root).collect();
    for k in (1..others.len()).rev() {
        let j = rng.below_u64(k as u64 + 1) as usize;
        others.swap(k, j);
    }
    others.push(root);
    others
}

/// A platform like the paper's: `p` processors (root last), linear costs, items
/// cheap to send (1e-5 to 1e-3 s) and costly to process (4e-3 to 2e-2 s).
pub fn grid_like(rng: &mut SplitMix64, p: usize, items: u64, startups: bool) -> ScatterInstance {
    let comm: Vec<(f64, f64)> = (0..p)
        .map(|i| {
            if i + 1 == p {
                (0.0, 0.0)
            } else {
                let startup = if startups { rng.range((0.0, 0.5)) } else { 0.0 };
                (10f64.powf(rng.range((-5.0, -3.0))), startup)
            }
        })
        .collect();
    let comp: Vec<(f64, f64)> = (0..p)
        .map(|_| {
            let startup = if startups { rng.range((0.0, 2.0)) } else { 0.0 };
            (rng.range((4e-3, 2e-2)), startup)
        })
        .collect();
    ScatterInstance::affine(items, p - 1, &comm, &comp, StartupRule::WhenUsed)
        .expect("valid platform")
}
