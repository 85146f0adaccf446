//! `hetbal demo`: the main job on a built-in heterogeneous ring.

use std::path::Path;

use hetbal::ring::{ProcessorSpec, RingInstance, RingInstanceSpec, RingKind};

use crate::common::CliError;
use crate::report::{plan_report, secs};

/// The built-in ring: 8 processors of different speeds on links of different costs,
/// holding an even split of 1,600 items that suits none of them.
pub struct DemoRing {
    /// Processor names.
    pub names: [&'static str; 8],
    /// Items held now.
    pub loads: [u64; 8],
    /// Seconds of computation per item.
    pub time_per_item: [f64; 8],
    /// Seconds to send one item to the successor.
    pub c_succ: [f64; 8],
}

/// The demo's data.
pub const DEMO: DemoRing = DemoRing {
    names: [
        "fast-0", "slow-1", "mid-2", "fast-3", "slow-4", "mid-5", "old-6", "mid-7",
    ],
    loads: [200; 8],
    time_per_item: [0.010, 0.040, 0.020, 0.008, 0.035, 0.018, 0.060, 0.022],
    c_succ: [0.002, 0.004, 0.003, 0.001, 0.005, 0.002, 0.003, 0.004],
};

/// The demo ring as an instance whose targets are its loads (nothing to move yet).
pub fn demo_instance() -> RingInstance {
    let spec = RingInstanceSpec {
        ring: RingKind::Unidirectional,
        processors: (0..8)
            .map(|i| ProcessorSpec {
                name: Some(DEMO.names[i].to_string()),
                load: DEMO.loads[i],
                target: DEMO.loads[i],
                c_succ: DEMO.c_succ[i],
                c_pred: None,
                l_succ: 0.0,
                l_pred: 0.0,
            })
            .collect(),
        path: false,
    };
    RingInstance::from_spec(spec).expect("the built-in demo ring is valid")
}

fn step_time(counts: &[u64], times: &[f64]) -> f64 {
    counts
        .iter()
        .zip(times)
        .map(|(&k, &w)| k as f64 * w)
        .fold(0.0, f64::max)
}

/// Runs the demo and writes `hetbal-demo.svg` into `out_dir`.
pub fn run(out_dir: &Path) -> Result<u8, CliError> {
    let path = out_dir.join("hetbal-demo.svg");
    let svg_file = crate::common::SvgFile::create(&path)?;
    let ring = demo_instance();
    println!("hetbal demo: an iterative application on a unidirectional ring of 8 processors");
    println!(
        "whose speeds differ by 7x. Each holds {} of the {} items; every iteration",
        DEMO.loads[0],
        ring.total_items()
    );
    println!("waits for the slowest processor.\n");
    let balanced = crate::common::balance(&ring, &DEMO.time_per_item)?;
    let before = step_time(ring.loads(), &DEMO.time_per_item);
    let after = step_time(balanced.targets(), &DEMO.time_per_item);
    println!(
        "{:>8}  {:>14}  {:>6}  {:>8}",
        "name", "s per item", "now", "balanced"
    );
    for i in 0..ring.len() {
        println!(
            "{:>8}  {:>14}  {:>6}  {:>8}",
            ring.name(i),
            secs(DEMO.time_per_item[i]),
            ring.loads()[i],
            balanced.targets()[i]
        );
    }
    println!(
        "\niteration time: {} s now, {} s balanced (exact integer optimum)\n",
        secs(before),
        secs(after)
    );
    let plan = crate::common::make_plan(&balanced, None)?;
    let schedule = plan.schedule();
    let svg = crate::common::ring_svg(&balanced, &plan, &schedule)?;
    print!("{}", plan_report(&balanced, &plan, &plan.report, true));
    let gain = before - after;
    if gain > 0.0 {
        println!(
            "\nmoving the data takes {} s and saves {} s per iteration: it pays off after {} iteration(s).",
            secs(plan.makespan),
            secs(gain),
            (plan.makespan / gain).ceil().max(1.0) as u64
        );
    }
    svg_file.write(&svg)?;
    println!("Gantt chart of the schedule: {}", path.display());
    Ok(0)
}
