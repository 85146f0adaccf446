//! hetbal's System 6 bound and whole bidirectional plan against HiGHS solving the
//! paper's LP (System 6), in one run, on the forwarding ring of
//! `crates/hetbal/benches/bidirectional.rs` and `examples/system6_lp_timing.rs`.
//!
//! ```text
//! cd tools/highs-compare
//! cargo run --release -- [N] [--threads T] [--reps R] [--highs-reps H] [--verbose]
//! ```
//!
//! N: processors (default 20000; the ring is drawn with seed N). HiGHS runs on
//! `--threads` threads (default 1; 0 = HiGHS's own default), presolve and solver on
//! HiGHS's defaults ("choose"); `--verbose` prints HiGHS's log of the first solve,
//! with the number of threads its scheduler started. hetbal is timed `--reps` times (default 7), HiGHS
//! `--highs-reps` times (default 3); the best and the median of each are printed.
//!
//! The LP is built by `crates/hetbal/tests/support/system6_lp.rs` (good_lp), the same
//! function that the LP cross-check test solves with microlp. HiGHS is timed in three
//! parts: good_lp building the model (expressions and a row-wise problem), handing it
//! to HiGHS (conversion to columns and `Highs_passLp`), and `Highs_run`, the solve.
//! The ratios compare the solve alone (HiGHS's best case: no model building), and
//! also the three parts together.
//!
//! Exits with an error if HiGHS does not report an optimum or if its tau differs from
//! System 6's rational tau by more than a relative 1e-9.

use std::time::{Duration, Instant};

use hetbal::ring::{circulation_bound, plan};

#[allow(dead_code)]
#[path = "../../../crates/hetbal/tests/support/system6_lp.rs"]
mod system6_lp;

#[path = "../../../crates/hetbal/tests/support/forwarding_ring.rs"]
mod forwarding_ring;
use forwarding_ring::shifted_ring;

struct Args {
    n: usize,
    threads: i32,
    reps: usize,
    highs_reps: usize,
    verbose: bool,
}

fn parse_args() -> Args {
    let mut args = Args {
        n: 20_000,
        threads: 1,
        reps: 7,
        highs_reps: 3,
        verbose: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |name: &str| -> usize {
            it.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name}: a number"))
        };
        match a.as_str() {
            "--threads" => args.threads = value("--threads") as i32,
            "--reps" => args.reps = value("--reps").max(1),
            "--highs-reps" => args.highs_reps = value("--highs-reps").max(1),
            "--verbose" => args.verbose = true,
            n => args.n = n.parse().expect("N: a number of processors"),
        }
    }
    args
}

/// Best and median of some durations, in seconds.
fn best_median(times: &[Duration]) -> (f64, f64) {
    let mut s: Vec<f64> = times.iter().map(Duration::as_secs_f64).collect();
    s.sort_by(f64::total_cmp);
    (s[0], s[s.len() / 2])
}

fn show(name: &str, times: &[Duration]) -> (f64, f64) {
    let (best, median) = best_median(times);
    let all: Vec<String> = times
        .iter()
        .map(|t| format!("{:.4}", t.as_secs_f64()))
        .collect();
    println!(
        "{name:<28} best {best:.4} s  median {median:.4} s  (all: {})",
        all.join(" ")
    );
    (best, median)
}

fn main() {
    let args = parse_args();
    let n = args.n;
    let ring = shifted_ring(n, 0, n as u64);
    println!(
        "n = {n} (forwarding ring, seed {n}); HiGHS threads option {} ({}), presolve and solver: HiGHS defaults",
        args.threads,
        if args.threads == 0 { "HiGHS's default" } else { "set" }
    );

    // hetbal: the System 6 bound, then the whole plan.
    let mut bound_times = Vec::new();
    let mut s6 = None;
    for _ in 0..args.reps {
        let t = Instant::now();
        let b = std::hint::black_box(circulation_bound(&ring));
        bound_times.push(t.elapsed());
        s6 = Some(b);
    }
    let s6 = s6.expect("at least one repetition");
    let mut plan_times = Vec::new();
    let mut last_plan = None;
    for _ in 0..args.reps {
        let t = Instant::now();
        let p = std::hint::black_box(plan(&ring, None));
        plan_times.push(t.elapsed());
        last_plan = Some(p);
    }
    match last_plan.expect("at least one repetition") {
        Ok(p) => println!(
            "hetbal: System 6 rational tau {} (integer {}); plan {} makespan {} bound {} optimal {} ({} transfers)",
            s6.rational_tau,
            s6.tau,
            p.algorithm,
            p.makespan,
            p.lower_bound,
            p.optimal,
            p.transfers.len()
        ),
        Err(e) => println!("hetbal: plan failed: {e}"),
    }

    // HiGHS: the same LP, built by the shared support file.
    let mut build_times = Vec::new();
    let mut pass_times = Vec::new();
    let mut solve_times = Vec::new();
    let mut highs_tau = f64::NAN;
    let mut iterations = (0, 0);
    for rep in 0..args.highs_reps {
        let t = Instant::now();
        let (problem, _tau) = system6_lp::system6_model(&ring, good_lp::solvers::highs::highs);
        let t_build = t.elapsed();
        let t = Instant::now();
        let mut model = problem.into_inner();
        let t_pass = t.elapsed();
        model.set_option("threads", args.threads);
        if args.verbose && rep == 0 {
            model.set_option("output_flag", true);
            model.set_option("log_to_console", true);
            // Also the scheduler's line: "Scheduler initialized: T threads".
            model.set_option("log_dev_level", 1);
        }
        let t = Instant::now();
        let solved = model.solve();
        let t_solve = t.elapsed();
        assert_eq!(
            solved.status(),
            highs::HighsModelStatus::Optimal,
            "HiGHS: no optimum"
        );
        // tau is the first variable declared, so HiGHS's column 0, and the objective.
        let objective = solved.objective_value();
        let column0 = solved.get_solution().columns()[0];
        assert!(
            (objective - column0).abs() <= 1e-9 * objective.abs().max(1.0),
            "HiGHS: objective {objective} is not column 0 ({column0})"
        );
        highs_tau = objective;
        iterations = (
            solved.simplex_iteration_count(),
            solved.ipm_iteration_count(),
        );
        build_times.push(t_build);
        pass_times.push(t_pass);
        solve_times.push(t_solve);
    }
    let relative = (highs_tau - s6.rational_tau).abs() / s6.rational_tau;
    println!(
        "HiGHS: tau {highs_tau} ({} simplex, {} IPM iterations); relative difference to System 6 {relative:.2e}",
        iterations.0, iterations.1
    );

    println!();
    let bound = show("hetbal circulation_bound", &bound_times);
    let whole = show("hetbal plan (whole)", &plan_times);
    show("HiGHS: good_lp model", &build_times);
    show("HiGHS: to HiGHS (passLp)", &pass_times);
    let solve = show("HiGHS: solve (Highs_run)", &solve_times);
    let total: Vec<Duration> = (0..args.highs_reps)
        .map(|i| build_times[i] + pass_times[i] + solve_times[i])
        .collect();
    let total = show("HiGHS: all three", &total);

    println!();
    println!("ratios (best / best, median / median):");
    let ratio = |name: &str, a: (f64, f64), b: (f64, f64), goal: f64| {
        let (r_best, r_median) = (a.0 / b.0, a.1 / b.1);
        println!(
            "  {name:<34} {r_best:>9.0}x {r_median:>9.0}x   goal {goal:.0}x: {}",
            if r_best.min(r_median) >= goal {
                "met"
            } else if r_best.max(r_median) >= goal {
                "met by one of the two"
            } else {
                "not met"
            }
        );
    };
    ratio("HiGHS solve / System 6 bound", solve, bound, 1000.0);
    ratio("HiGHS solve / whole plan", solve, whole, 100.0);
    ratio("HiGHS all three / System 6 bound", total, bound, 1000.0);
    ratio("HiGHS all three / whole plan", total, whole, 100.0);

    if relative.is_nan() || relative > 1e-9 {
        eprintln!("HiGHS's tau differs from System 6's rational tau by {relative:.2e} > 1e-9");
        std::process::exit(1);
    }
    println!("tau agrees to {relative:.2e} (<= 1e-9)");
}
