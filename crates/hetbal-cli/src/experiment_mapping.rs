//! `hetbal experiment mapping`: the mapping slides' comparison of the heuristic
//! blind to link sharing (H1) with the one aware of it (H2), on generated
//! WAN/MAN/LAN (Tiers-like) platforms whose ring exchanges share links, at the
//! slides' three border-to-work ratios.

use clap::Args;
use hetbal::mapping::{map_shared, Mapping};
use hetbal::platform::generate::{tiers, TiersOptions};

use crate::CliError;

/// Arguments of `hetbal experiment mapping`.
#[derive(Args)]
pub struct MappingExperimentArgs {
    /// Random platforms drawn per ratio (seeds 0, 1, ...).
    #[arg(long, default_value_t = 5)]
    draws: u64,
    /// Hosts per LAN of the generated platforms (2 WAN routers, 2 MAN routers per
    /// WAN router, 2 LANs per MAN router).
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
    let options = TiersOptions {
        wan: 2,
        man_per_wan: 2,
        lan_per_man: 2,
        hosts_per_lan: args.hosts_per_lan,
        ..TiersOptions::default()
    };
    let mut rows = Vec::new();
    let mut lines = Vec::new();
    for ratio in [0.64, 0.064, 0.0064] {
        let (mut h1, mut h2, mut wins) = (0.0, 0.0, 0u64);
        for seed in 0..args.draws {
            let platform = tiers(seed, &options).map_err(|e| CliError::input(e.to_string()))?;
            // Units: a unit of work is 1 Mflop (w in s/Mflop), a unit of data 1 MB.
            let platform = platform
                .with_unit_bytes(1e6)
                .map_err(|e| CliError::input(e.to_string()))?;
            let both =
                map_shared(&platform, 1.0, ratio).map_err(|e| CliError::input(e.to_string()))?;
            let (blind, aware): (&Mapping, &Mapping) = (&both.blind, &both.aware);
            h1 += blind.t_step;
            h2 += aware.t_step;
            wins += u64::from(aware.t_step < blind.t_step * (1.0 - 1e-9));
            for (policy, m) in [("H1-blind", blind), ("H2-aware", aware)] {
                rows.push(serde_json::json!({
                    "ratio": ratio, "seed": seed, "policy": policy,
                    "processors": m.ring.len(), "t_step_over_work": m.t_step,
                }));
            }
        }
        let n = args.draws as f64;
        lines.push(format!(
            "{ratio:>8}  {:>12.6}  {:>12.6}  {:>7.1}%  {wins}/{}",
            h1 / n,
            h2 / n,
            100.0 * (1.0 - h2 / h1),
            args.draws
        ));
    }
    if args.json {
        let doc = serde_json::json!({
            "experiment": "mapping",
            "parameters": {
                "platform": "Tiers-like WAN/MAN/LAN: 2 WAN routers, 2 MAN routers each, 2 LANs each",
                "hosts_per_lan": args.hosts_per_lan,
                "draws": args.draws,
                "work": 1.0,
                "ratio_meaning": "D_c/D_w: border data (MB) per unit of work (Mflop)",
            },
            "rows": rows,
        });
        println!("{}", serde_json::to_string_pretty(&doc).expect("JSON"));
    } else {
        println!(
            "mapping on Tiers-like platforms ({} hosts per LAN, {} draws per ratio): T_step / D_w, mean over draws",
            args.hosts_per_lan, args.draws
        );
        println!("   D_c/D_w   H1 (blind)    H2 (aware)   H2 gain  H2 better");
        for line in lines {
            println!("{line}");
        }
        println!("H1 maps as if every route had its bandwidth alone, then is evaluated with max-min sharing; H2 inserts processors by the shared evaluation.");
    }
    Ok(0)
}
