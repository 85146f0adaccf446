//! Human-readable reports.

use std::fmt::Write;

use hetbal::ring::{RingAlgorithm, RingInstance, RingPlan};
use hetbal::ScheduleReport;

use crate::common::name_column;

/// Formats seconds compactly ([`hetbal_draw::short_number`]).
pub fn secs(x: f64) -> String {
    hetbal_draw::short_number(x)
}

/// How far `a` is above `b`, in percent: `100 (a / b - 1)`, 0 when b is 0.
pub fn percent_above(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        100.0 * (a / b - 1.0)
    } else {
        0.0
    }
}

/// Processors the plan report's table shows unless every row is asked for.
pub const TABLE_ROWS: usize = 40;

/// The per-processor table and the summary of a plan: the table's first
/// [`TABLE_ROWS`] rows, or every row with `all_rows`.
pub fn plan_report(
    instance: &RingInstance,
    plan: &RingPlan,
    stats: &ScheduleReport,
    all_rows: bool,
) -> String {
    let mut out = String::new();
    let n = instance.len();
    let _ = writeln!(
        out,
        "{} {} of {n} processors, {} items",
        instance.kind(),
        if instance.is_path() {
            "path (no link from the last processor to the first)"
        } else {
            "ring"
        },
        instance.total_items()
    );
    let _ = writeln!(
        out,
        "algorithm: {} ({})\n",
        plan.algorithm,
        RingAlgorithm::from_name(&plan.algorithm).map_or("", RingAlgorithm::description)
    );
    let name_width = name_column("name", instance.names().iter().map(String::as_str));
    let _ = writeln!(
        out,
        "{:>4}  {:<name_width$}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}",
        "#", "name", "load", "target", "to succ", "to pred", "received", "busy (s)"
    );
    let shown = if all_rows { n } else { n.min(TABLE_ROWS) };
    for i in 0..shown {
        let _ = writeln!(
            out,
            "{:>4}  {:<name_width$}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}",
            i,
            instance.name(i),
            instance.loads()[i],
            instance.targets()[i],
            stats.sent_to_succ[i],
            stats.sent_to_pred[i],
            stats.received[i],
            secs(stats.send_busy[i]),
        );
    }
    if shown < n {
        let _ = writeln!(
            out,
            "{:>4}  ... {} more processors (--all-rows prints every one; --json lists the plan)",
            "",
            n - shown
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "makespan     {} s", secs(plan.makespan));
    if instance.has_startups() {
        let bound = hetbal::ring::startup_lower_bound(instance);
        let why = if plan.lower_bound > bound.value {
            "the optimum, found by exhaustive search".to_string()
        } else {
            format!("{} bound: {}", bound.kind.name(), bound.kind.description())
        };
        let _ = writeln!(out, "lower bound  {} s ({why})", secs(plan.lower_bound));
    } else {
        let _ = writeln!(out, "lower bound  {} s", secs(plan.lower_bound));
    }
    let _ = writeln!(
        out,
        "optimal      {}",
        if plan.optimal {
            "yes (proven: the schedule is valid and meets the lower bound)"
        } else {
            "not proven (the makespan exceeds the best lower bound known)"
        }
    );
    if !plan.optimal && plan.lower_bound > 0.0 {
        let _ = writeln!(
            out,
            "gap          {:.2}% above the lower bound",
            percent_above(plan.makespan, plan.lower_bound)
        );
    }
    let _ = writeln!(
        out,
        "light        {}",
        if plan.light {
            "yes (no processor sends more items than it holds at the start)"
        } else {
            "no (some processor forwards items it receives)"
        }
    );
    let (paced, paced_items) = plan
        .transfers
        .iter()
        .filter(|t| t.period.is_some())
        .fold((0u64, 0u128), |(k, m), t| (k + 1, m + u128::from(t.items)));
    if paced == 0 {
        let _ = writeln!(out, "transfers    {}", plan.transfers.len());
    } else {
        let _ = writeln!(
            out,
            "transfers    {} ({paced} paced train{}: {paced_items} items sent one at a time, each as it arrives)",
            plan.transfers.len(),
            if paced == 1 { "" } else { "s" }
        );
    }
    if instance.has_startups() {
        let _ = writeln!(out, "{}", startups_line(instance, plan, stats));
    }
    out
}

/// How many transfers paid a start-up (one message each) and what the start-ups
/// cost, against the time links spend sending.
fn startups_line(instance: &RingInstance, plan: &RingPlan, stats: &ScheduleReport) -> String {
    let (messages, total) = plan
        .transfers
        .iter()
        .map(|t| instance.startup(t.from, t.to))
        .filter(|&l| l > 0.0)
        .fold((0u64, 0.0f64), |(m, s), l| (m + 1, s + l));
    let busy: f64 = stats.send_busy.iter().sum();
    format!(
        "start-ups    {messages} messages pay one: {} s in all, {:.1}% of the links' sending time",
        secs(total),
        if busy > 0.0 {
            100.0 * total / busy
        } else {
            0.0
        }
    )
}
