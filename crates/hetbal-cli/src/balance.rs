//! `hetbal balance`: the items each processor should hold when its time
//! depends on its load, from measured `(load, seconds)` points (the library's
//! `hetbal::functional`, the document read by
//! `hetbal::document::parse_points_instance`), as a report or JSON.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use hetbal::functional::PointsBalance;

use crate::common::{name_column, print_plan, CliError};
use crate::input::read_points_instance;
use crate::report::secs;

/// `hetbal balance` options.
#[derive(Args)]
pub struct BalanceArgs {
    /// The measured points (JSON, or TOML if the name ends in .toml): `total`,
    /// optionally `model`, and `processors`, each with its `points` (formats.md,
    /// "Measured points").
    pub points: PathBuf,
    /// Print the balance as JSON (formats.md) instead of the report.
    #[arg(long)]
    pub json: bool,
}

/// Runs `hetbal balance`.
pub fn run(args: &BalanceArgs) -> Result<u8, CliError> {
    let instance = read_points_instance(&args.points)?;
    let balance = instance
        .balance()
        .map_err(|e| CliError::input(format!("{}: {e}", args.points.display())))?;
    print_plan(args.json, &balance, || report(&balance), None)
}

/// The report: one row per processor, then the predicted iteration time.
fn report(b: &PointsBalance) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} items over {} processors, {} model between the measured points",
        b.total,
        b.processors.len(),
        b.model.name()
    );
    let width = name_column("name", b.processors.iter().map(|p| p.name.as_str()));
    let digits = b
        .processors
        .iter()
        .map(|p| p.target.to_string().len())
        .max()
        .unwrap_or(0)
        .max(6);
    let _ = writeln!(
        out,
        "{:>9}  {:<width$}  {:>digits$}  {:>13}",
        "processor", "name", "target", "predicted (s)"
    );
    for (i, p) in b.processors.iter().enumerate() {
        let _ = writeln!(
            out,
            "{i:>9}  {:<width$}  {:>digits$}  {:>13}",
            p.name,
            p.target,
            secs(p.seconds)
        );
    }
    let _ = writeln!(
        out,
        "predicted iteration time: {} s (the slowest processor's; no split of the items is faster)",
        secs(b.time)
    );
    out
}
