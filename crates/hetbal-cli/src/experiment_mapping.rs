//! `hetbal experiment mapping`: the mapping slides' comparison of the heuristic
//! blind to link sharing (H1) with the one aware of it (H2), on generated
//! platforms whose ring exchanges share links, at the slides' three
//! border-to-work ratios.

use clap::Args;
use hetbal::mapping::{map_shared_with, Routing};
use hetbal::platform::generate::{clusters, tiers, ClustersOptions, TiersOptions};
use hetbal::platform::Platform;

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

/// The mean of each column over the draws of one ratio.
#[derive(Default)]
struct Means {
    h1: f64,
    fixed: f64,
    h2: f64,
    q1: f64,
    q2: f64,
    wins: u64,
}

/// Runs the experiment and prints its table.
pub fn run(args: &MappingExperimentArgs) -> Result<u8, CliError> {
    if args.draws == 0 || args.hosts_per_lan == 0 {
        return Err(CliError::input(
            "--draws and --hosts-per-lan must be at least 1",
        ));
    }
    let draw = |seed: u64| -> Result<Platform, CliError> {
        let p = match args.platform.as_str() {
            "clusters" => clusters(seed, &ClustersOptions::default()),
            "tiers" => tiers(
                seed,
                &TiersOptions {
                    wan: 2,
                    man_per_wan: 2,
                    lan_per_man: 2,
                    hosts_per_lan: args.hosts_per_lan,
                    ..TiersOptions::default()
                },
            ),
            other => {
                return Err(CliError::input(format!(
                    "--platform {other:?}: choose clusters or tiers"
                )))
            }
        }
        .map_err(|e| CliError::input(e.to_string()))?;
        // Units: a unit of work is 1 Mflop (w in s/Mflop), a unit of data 1 MB.
        p.with_unit_bytes(1e6)
            .map_err(|e| CliError::input(e.to_string()))
    };
    let platforms: Vec<Platform> = (0..args.draws).map(draw).collect::<Result<_, _>>()?;
    let mut rows = Vec::new();
    let mut lines = Vec::new();
    for ratio in [0.64, 0.064, 0.0064] {
        let mut m = Means::default();
        for (seed, platform) in platforms.iter().enumerate() {
            let err = |e: hetbal::mapping::MappingError| CliError::input(e.to_string());
            let widest = map_shared_with(platform, 1.0, ratio, Routing::Widest).map_err(err)?;
            let fixed = map_shared_with(platform, 1.0, ratio, Routing::Fixed).map_err(err)?;
            let (blind, aware) = (&widest.blind, &widest.aware);
            m.h1 += blind.t_step;
            m.fixed += fixed.aware.t_step;
            m.h2 += aware.t_step;
            m.q1 += blind.ring.len() as f64;
            m.q2 += aware.ring.len() as f64;
            m.wins += u64::from(aware.t_step < blind.t_step * (1.0 - 1e-9));
            for (policy, mapping) in [
                ("H1-blind", blind),
                ("H2-fixed-routes", &fixed.aware),
                ("H2-aware", aware),
            ] {
                rows.push(serde_json::json!({
                    "ratio": ratio, "seed": seed, "policy": policy,
                    "processors": mapping.ring.len(), "t_step_over_work": mapping.t_step,
                }));
            }
        }
        let n = args.draws as f64;
        lines.push(format!(
            "{ratio:>8}  {:>10.6} ({:>4.1})  {:>12.6}  {:>10.6} ({:>4.1})  {:>7.1}%  {}/{}",
            m.h1 / n,
            m.q1 / n,
            m.fixed / n,
            m.h2 / n,
            m.q2 / n,
            100.0 * (1.0 - m.h2 / m.h1),
            m.wins,
            args.draws
        ));
    }
    let hosts: Vec<usize> = platforms.iter().map(Platform::len).collect();
    let description = match args.platform.as_str() {
        "clusters" => "clusters of clusters (generate::clusters, default options): 4 sites of 3 to 8 hosts, hubs or switches, WAN ring plus 2 chords".to_string(),
        _ => format!(
            "Tiers-like WAN/MAN/LAN tree: 2 WAN routers, 2 MAN routers each, 2 LANs each, {} hosts per LAN",
            args.hosts_per_lan
        ),
    };
    if args.json {
        let doc = serde_json::json!({
            "experiment": "mapping",
            "parameters": {
                "platform": description,
                "hosts": hosts,
                "draws": args.draws,
                "work": 1.0,
                "ratio_meaning": "D_c/D_w: border data (MB) per unit of work (Mflop)",
            },
            "rows": rows,
        });
        println!("{}", serde_json::to_string_pretty(&doc).expect("JSON"));
    } else {
        println!(
            "mapping on {description} ({} draws per ratio, hosts {hosts:?}): T_step / D_w, mean over draws (mean ring size)",
            args.draws
        );
        println!("   D_c/D_w   H1 (blind)          H2 fixed routes  H2 (aware)          H2 gain  H2 better");
        for line in lines {
            println!("{line}");
        }
        println!("H1 labels each pair with the bandwidth of its widest path alone and runs the complete-graph greedy; H2 inserts processors along widest paths of the bandwidth left by the ring; \"H2 fixed routes\" is H2 keeping the platform's shortest-hop routes. All are evaluated with max-min fair sharing.");
    }
    Ok(0)
}
