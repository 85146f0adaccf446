//! `hetbal experiment mapping`: the mapping slides' comparison of the heuristic
//! blind to link sharing (H1) with the one aware of it (H2), on generated
//! platforms whose ring exchanges share links, at the slides' three
//! border-to-work ratios. The library runs it (`hetbal::experiment::mapping`);
//! this module prints its table.

use clap::Args;
use hetbal::experiment::mapping::{run as run_experiment, Platforms, Settings};

use crate::common::CliError;

/// Arguments of `hetbal experiment mapping`.
#[derive(Args)]
pub struct MappingExperimentArgs {
    /// Random platforms drawn per ratio (seeds 0, 1, ...).
    #[arg(long, default_value_t = 5)]
    draws: u64,
    /// `clusters` (clusters of clusters: hubs and switches joined by a WAN with
    /// several paths between sites) or `tiers` (a WAN/MAN/LAN tree).
    #[arg(long, default_value = "clusters")]
    platform: String,
    /// tiers: hosts per LAN (2 WAN routers, 2 MAN routers per WAN router, 2 LANs
    /// per MAN router).
    #[arg(long, default_value_t = 3)]
    hosts_per_lan: usize,
    /// Print the experiment table as JSON (formats.md).
    #[arg(long)]
    json: bool,
}

/// Runs the experiment and prints its table.
pub fn run(args: &MappingExperimentArgs) -> Result<u8, CliError> {
    if args.draws == 0 || args.hosts_per_lan == 0 {
        return Err(CliError::input(
            "--draws and --hosts-per-lan must be at least 1",
        ));
    }
    let platforms = match args.platform.as_str() {
        "clusters" => Platforms::Clusters,
        "tiers" => Platforms::Tiers {
            hosts_per_lan: args.hosts_per_lan,
        },
        other => {
            return Err(CliError::input(format!(
                "--platform {other:?}: choose clusters or tiers"
            )))
        }
    };
    let settings = Settings {
        draws: args.draws,
        platforms,
    };
    let table = run_experiment(&settings).map_err(|e| CliError::input(e.to_string()))?;
    if args.json {
        let document = table.document(&settings);
        println!("{}", serde_json::to_string_pretty(&document).expect("JSON"));
        return Ok(0);
    }
    let (description, hosts) = (platforms.description(), &table.hosts);
    println!(
        "mapping on {description} ({} draws per ratio, hosts {hosts:?}): T_step / D_w, mean over draws (mean ring size)",
        args.draws
    );
    println!(
        "   D_c/D_w   H1 (blind)          H2 fixed routes  H2 (aware)          H2 gain  H2 better"
    );
    for m in &table.means {
        println!(
            "{:>8}  {:>10.6} ({:>4.1})  {:>12.6}  {:>10.6} ({:>4.1})  {:>7.1}%  {}/{}",
            m.ratio,
            m.blind,
            m.blind_processors,
            m.fixed_routes,
            m.aware,
            m.aware_processors,
            100.0 * m.gain,
            m.aware_wins,
            args.draws
        );
    }
    println!("H1 labels each pair with the bandwidth of its widest path alone and runs the complete-graph greedy; H2 inserts processors along widest paths of the bandwidth left by the ring; \"H2 fixed routes\" is H2 keeping the platform's shortest-hop routes. All are evaluated with max-min fair sharing.");
    Ok(0)
}
