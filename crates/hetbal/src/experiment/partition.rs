//! Weighted partitions compared: the cuts other balancers make against the
//! optimum, on weight profiles and processor speeds of real kinds.
//!
//! For each weight profile and kind of speeds, random instances of every size
//! are cut three ways, and each bottleneck is divided by the optimal one:
//! - **equal weights**: p4est's `p4est_partition`, which cuts the curve into
//!   equal weights and has no per-rank speed ([`equal_weight_cuts`]);
//! - **speed shares**: Zoltan's HSFC with part sizes and AMReX's SFC
//!   distribution, which cut greedily at shares proportional to the speeds
//!   ([`speed_share_cuts`]);
//! - **optimal**: [`partition`].
//!
//! ```
//! use hetbal::experiment::partition::{run, Settings};
//!
//! let table = run(&Settings { items: vec![2000], processors: vec![16], instances: 1, seed: 1 }).unwrap();
//! assert_eq!(table.rows.len(), 10); // 3 profiles x 3 kinds of speeds, and all together
//! assert!(table.rows.iter().all(|r| r.share.mean >= 1.0 && r.proven == r.instances));
//! ```

use serde::Serialize;

use super::Document;
use crate::partition::{
    bottleneck_of, equal_weight_cuts, partition, speed_share_cuts, PartitionError,
};
use crate::random::SplitMix64;

/// What to run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Settings {
    /// Numbers of items (cells, particles, rows).
    pub items: Vec<usize>,
    /// Numbers of processors.
    pub processors: Vec<usize>,
    /// Random instances per profile, kind of speeds, size and processor count.
    pub instances: usize,
    /// Seed of the random draws.
    pub seed: u64,
}

impl Default for Settings {
    /// 10^4 and 10^5 items on 16 to 1,024 processors, 3 instances each.
    fn default() -> Self {
        Settings {
            items: vec![10_000, 100_000],
            processors: vec![16, 64, 256, 1024],
            instances: 3,
            seed: 2008,
        }
    }
}

/// The weight profiles.
pub const PROFILES: [&str; 3] = ["uniform", "cluster", "power-law"];
/// The kinds of speeds.
pub const SPEEDS: [&str; 3] = ["mixed", "one-slow", "gpu-cpu"];

/// Bottleneck ratios to the optimum over a set of instances.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Ratio {
    /// The arithmetic mean.
    pub mean: f64,
    /// The largest.
    pub worst: f64,
}

/// One profile and kind of speeds (or `all`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartitionRow {
    /// The weight profile (`uniform`, `cluster`, `power-law`, or `all`).
    pub weights: String,
    /// The kind of speeds (`mixed`, `one-slow`, `gpu-cpu`, or `all`).
    pub speeds: String,
    /// Instances.
    pub instances: usize,
    /// Equal-weight cuts (p4est) over the optimum.
    pub equal: Ratio,
    /// Speed-share cuts (Zoltan HSFC, AMReX SFC) over the optimum.
    pub share: Ratio,
    /// Instances whose optimum was proven (bottleneck = certified lower bound).
    pub proven: usize,
}

/// The comparison's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartitionExperiment {
    /// What was run.
    pub settings: Settings,
    /// One row per profile and kind of speeds, then one for all instances.
    pub rows: Vec<PartitionRow>,
}

impl PartitionExperiment {
    /// The JSON document of `hetbal experiment partition --json`.
    pub fn document(&self) -> Document<&Settings, &[PartitionRow]> {
        Document {
            experiment: "partition",
            parameters: &self.settings,
            rows: &self.rows,
        }
    }
}

/// Weights of `n` items of a profile:
/// - `uniform`: independent, uniform in [0.5, 1.5);
/// - `cluster`: particles per cell of a 2-D grid along a Morton (Z-order)
///   curve (the first `n` cells of a 2^k x 2^k grid), one particle per cell in
///   the background and a Gaussian cluster of up to 1,000 per cell (width a
///   sixteenth of the box) at a random place;
/// - `power-law`: Pareto with exponent 1.5 (heavy tail: a few items weigh as
///   much as thousands).
///
/// # Panics
/// On a profile not in [`PROFILES`].
pub fn weights(profile: &str, n: usize, rng: &mut SplitMix64) -> Vec<f64> {
    match profile {
        "uniform" => (0..n).map(|_| rng.range((0.5, 1.5))).collect(),
        "cluster" => {
            let mut side = 1usize;
            while side * side < n {
                side *= 2;
            }
            let (cx, cy) = (rng.unit() * side as f64, rng.unit() * side as f64);
            let sigma = side as f64 / 16.0;
            (0..n)
                .map(|z| {
                    let (x, y) = morton_decode(z as u64);
                    let (dx, dy) = (x as f64 + 0.5 - cx, y as f64 + 0.5 - cy);
                    let density = (-(dx * dx + dy * dy) / (2.0 * sigma * sigma)).exp();
                    (1.0 + (1000.0 * density).round()).floor()
                })
                .collect()
        }
        "power-law" => (0..n)
            .map(|_| (1.0 - rng.unit()).powf(-1.0 / 1.5))
            .collect(),
        _ => panic!("unknown weight profile {profile:?}"),
    }
}

/// The cell `(x, y)` at position `z` of the Morton (Z-order) curve.
pub fn morton_decode(z: u64) -> (u32, u32) {
    fn compact(mut v: u64) -> u32 {
        v &= 0x5555_5555_5555_5555;
        v = (v | (v >> 1)) & 0x3333_3333_3333_3333;
        v = (v | (v >> 2)) & 0x0F0F_0F0F_0F0F_0F0F;
        v = (v | (v >> 4)) & 0x00FF_00FF_00FF_00FF;
        v = (v | (v >> 8)) & 0x0000_FFFF_0000_FFFF;
        v = (v | (v >> 16)) & 0x0000_0000_FFFF_FFFF;
        v as u32
    }
    (compact(z), compact(z >> 1))
}

/// Seconds per unit of weight of `p` processors of a kind:
/// - `mixed`: independent, uniform in [1, 8) (up to 8 times apart);
/// - `one-slow`: all 1 but one processor at random, 100;
/// - `gpu-cpu`: a quarter of them (every fourth) GPUs at 0.05, CPUs at 1.
///
/// # Panics
/// On a kind not in [`SPEEDS`].
pub fn speeds(kind: &str, p: usize, rng: &mut SplitMix64) -> Vec<f64> {
    match kind {
        "mixed" => (0..p).map(|_| rng.range((1.0, 8.0))).collect(),
        "one-slow" => {
            let slow = rng.below(p);
            (0..p)
                .map(|j| if j == slow { 100.0 } else { 1.0 })
                .collect()
        }
        "gpu-cpu" => (0..p)
            .map(|j| if j % 4 == 0 { 0.05 } else { 1.0 })
            .collect(),
        _ => panic!("unknown kind of speeds {kind:?}"),
    }
}

/// Runs the comparison.
///
/// # Errors
/// A [`PartitionError`] (none for the settings' profiles, unless a count is 0).
///
/// # Complexity
/// O(n) per instance for the weights and cuts, plus [`partition`]'s.
pub fn run(settings: &Settings) -> Result<PartitionExperiment, PartitionError> {
    run_with_progress(settings, |_| {})
}

/// [`run`], calling `progress` with the number of instances done.
///
/// # Errors
/// As [`run`].
pub fn run_with_progress(
    settings: &Settings,
    mut progress: impl FnMut(usize),
) -> Result<PartitionExperiment, PartitionError> {
    let mut rng = SplitMix64::new(settings.seed);
    let mut rows = Vec::new();
    let mut all: Vec<(f64, f64, bool)> = Vec::new();
    let mut done = 0;
    for profile in PROFILES {
        for kind in SPEEDS {
            let mut ratios = Vec::new();
            for &n in &settings.items {
                for &p in &settings.processors {
                    for _ in 0..settings.instances {
                        let w = weights(profile, n, &mut rng);
                        let s = speeds(kind, p, &mut rng);
                        let best = partition(&w, &s)?;
                        let equal = bottleneck_of(&w, &s, &equal_weight_cuts(&w, p)?)?;
                        let share = bottleneck_of(&w, &s, &speed_share_cuts(&w, &s)?)?;
                        ratios.push((
                            equal / best.bottleneck,
                            share / best.bottleneck,
                            best.optimal,
                        ));
                        done += 1;
                        progress(done);
                    }
                }
            }
            rows.push(row(profile, kind, &ratios));
            all.extend(ratios);
        }
    }
    rows.push(row("all", "all", &all));
    Ok(PartitionExperiment {
        settings: settings.clone(),
        rows,
    })
}

fn row(weights: &str, speeds: &str, ratios: &[(f64, f64, bool)]) -> PartitionRow {
    let ratio = |pick: fn(&(f64, f64, bool)) -> f64| Ratio {
        mean: ratios.iter().map(pick).sum::<f64>() / ratios.len().max(1) as f64,
        worst: ratios.iter().map(pick).fold(1.0, f64::max),
    };
    PartitionRow {
        weights: weights.to_string(),
        speeds: speeds.to_string(),
        instances: ratios.len(),
        equal: ratio(|r| r.0),
        share: ratio(|r| r.1),
        proven: ratios.iter().filter(|r| r.2).count(),
    }
}
