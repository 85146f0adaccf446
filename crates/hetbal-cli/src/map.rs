//! `hetbal map`: choose processors of a platform, order them in a ring and share the
//! work of an iterative application (model.md section 3).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};
use hetbal::mapping::{
    self, item_counts, map_shared, parse_start_loads, ring_costs, ring_instance,
    shared_ring_costs_on, MapOptions, Mapping, Method, RingInstanceError, Routing, EXACT_MAX,
};
use hetbal::platform::generate::{clusters, random_complete, tiers, ClustersOptions, TiersOptions};
use hetbal::platform::Platform;

use crate::common::{in_range, CliError};
use crate::input::{self, read_platform};

/// `--method`: the library's [`Method`] as a command-line choice.
#[derive(Clone, Copy, Debug)]
pub struct MethodArg(Method);

impl ValueEnum for MethodArg {
    fn value_variants<'a>() -> &'a [Self] {
        const ALL: [MethodArg; 3] = [
            MethodArg(Method::ALL[0]),
            MethodArg(Method::ALL[1]),
            MethodArg(Method::ALL[2]),
        ];
        &ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()))
    }
}

/// Platforms up to this size are mapped exactly unless `--method` says otherwise.
const DEFAULT_EXACT_MAX: usize = 12;

/// Arguments of `hetbal map`.
#[derive(Args)]
pub struct MapArgs {
    /// Platform file: SimGrid XML (version 4.1, name ending in .xml) or JSON
    /// (formats.md: a cost matrix `c`, or `links` and `routes`).
    pub platform: PathBuf,
    /// Total work per iteration, D_w (units of work).
    #[arg(long, value_name = "DW", allow_negative_numbers = true)]
    pub work: f64,
    /// Border exchanged with each ring neighbour per iteration, D_c (units of data).
    #[arg(long, value_name = "DC", allow_negative_numbers = true)]
    pub border: f64,
    /// Use exactly this many processors (default: the number that is fastest).
    #[arg(long, value_name = "Q")]
    pub processors: Option<usize>,
    /// Also split N items into whole counts per processor.
    #[arg(long, value_name = "N")]
    pub items: Option<u64>,
    /// exact (every subset, p <= 16), greedy (the slides' insertion heuristic) or
    /// local (greedy + local search). Default: exact up to 12 processors, else local.
    #[arg(long, value_name = "NAME")]
    pub method: Option<MethodArg>,
    /// SimGrid files: flops in one unit of work (w = flops / speed).
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    pub flops_per_unit: f64,
    /// SimGrid files: bytes in one unit of data (c = bytes / bottleneck bandwidth).
    #[arg(long, value_name = "B", default_value_t = 1.0)]
    pub unit_bytes: f64,
    /// Print the mapping plan as JSON (formats.md) instead of the report.
    #[arg(long)]
    pub json: bool,
    /// Routes share links: rates follow max-min fairness when all ring exchanges run
    /// at once. Maps with the sharing-aware greedy heuristic (the slides' H2) and
    /// also reports the sharing-blind ring (H1) evaluated the same way. Graph
    /// platforms only (SimGrid, or JSON with links and routes). When the platform
    /// gives its network (JSON links with `ends`, generated platforms), the ring's
    /// exchanges are routed along widest paths; otherwise on the fixed routes.
    #[arg(long, conflicts_with_all = ["processors", "method", "items", "start_loads"])]
    pub sharing: bool,
    /// Write the ring as a redistribution instance (formats.md) for `hetbal ring
    /// plan`: bidirectional, the items where --start-loads puts them (default:
    /// split evenly over the ring) and the whole counts as targets, link costs
    /// from the routes. Needs --items or --start-loads.
    #[arg(long, value_name = "FILE")]
    pub instance_out: Option<PathBuf>,
    /// With --instance-out: where the items are now. A file, or a list given
    /// here: `NAME=N,NAME=N,...` (by processor name; processors not named hold
    /// none) or `N,N,...` (one count per processor of the platform, in the
    /// platform's order); a file holds the same text (commas, spaces or new
    /// lines between entries) or JSON (`{"NAME": N, ...}` or `[N, ...]`). Every
    /// item must be on a processor of the chosen ring, and every processor of
    /// the ring needs one at least (the ring planner's rule). --items defaults to
    /// their sum. Default: the items split evenly over the ring, the first
    /// processors of the ring getting one more.
    #[arg(long, value_name = "FILE|LIST", requires = "instance_out")]
    pub start_loads: Option<String>,
    /// With --instance-out: units of data in one item (default: D_c, one border's
    /// worth, as when items are the columns of a 1-D split).
    #[arg(long, value_name = "D", requires = "instance_out")]
    pub item_data: Option<f64>,
}

/// Runs `hetbal map`.
pub fn run(args: MapArgs) -> Result<u8, CliError> {
    let platform = read_platform(&args.platform, args.flops_per_unit, args.unit_bytes)?;
    let method = match args.method {
        None if platform.len() <= DEFAULT_EXACT_MAX => Method::Exact,
        None => Method::Local,
        Some(MethodArg(method)) => method,
    };
    if method == Method::Exact && platform.len() > EXACT_MAX {
        return Err(CliError::input(format!(
            "--method exact handles at most {EXACT_MAX} processors and {} has {}: use --method local",
            args.platform.display(),
            platform.len()
        )));
    }
    let options = MapOptions {
        work: args.work,
        border: args.border,
        processors: args.processors,
        method,
    };
    let (mapping, blind) = if args.sharing {
        if platform.links().is_empty() {
            return Err(CliError::input(format!(
                "--sharing: {} gives a cost matrix, not links and routes: nothing is shared",
                args.platform.display()
            )));
        }
        let both = map_shared(&platform, args.work, args.border)
            .map_err(|e| CliError::input(e.to_string()))?;
        (both.aware.clone(), Some(both))
    } else {
        let m = mapping::map(&platform, &options).map_err(|e| CliError::input(e.to_string()))?;
        (m, None)
    };
    let start_loads = match &args.start_loads {
        None => None,
        Some(value) => Some(read_start_loads(&platform, value)?),
    };
    let items = match (args.items, &start_loads) {
        (Some(n), Some(loads)) if loads.iter().sum::<u64>() != n => {
            return Err(CliError::input(format!(
                "--start-loads hold {} items and --items says {n}: give the same number (or leave --items out)",
                loads.iter().sum::<u64>()
            )))
        }
        (Some(n), _) => Some(n),
        (None, Some(loads)) => Some(loads.iter().sum()),
        (None, None) => None,
    };
    if args.instance_out.is_some() && items.is_none() {
        return Err(CliError::input(
            "--instance-out needs the number of items: give --items N or --start-loads",
        ));
    }
    let counts = match items {
        None => None,
        Some(n) => Some(
            item_counts(&platform, &mapping.ring, args.work, args.border, n)
                .map_err(|e| CliError::input(e.to_string()))?,
        ),
    };
    if let (Some(path), Some((counts, _))) = (&args.instance_out, &counts) {
        write_instance(
            &platform,
            &mapping,
            counts,
            start_loads.as_deref(),
            &args,
            path,
        )?;
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.json {
        let counts = counts.as_ref().map(|c| c.0.as_slice());
        let plan = mapping.document(&platform, counts, args.work);
        serde_json::to_writer_pretty(&mut out, &plan)
            .map_err(|e| CliError::input(format!("cannot write the plan: {e}")))?;
        let _ = writeln!(out);
    } else {
        let comm: Vec<f64> = if let Some(both) = &blind {
            shared_ring_costs_on(&platform, &mapping.ring, &both.aware_routes)
                .map_err(|e| CliError::input(e.to_string()))?
                .iter()
                .map(|(a, b)| a + b)
                .collect()
        } else {
            let (c_succ, c_pred) =
                ring_costs(&platform, &mapping.ring).map_err(|e| CliError::input(e.to_string()))?;
            c_succ.iter().zip(&c_pred).map(|(s, p)| s + p).collect()
        };
        let _ = write!(
            out,
            "{}",
            report(&platform, &args, &mapping, &comm, counts.as_ref())
        );
        if let Some(both) = blind {
            let b = &both.blind;
            let routing = match both.routing {
                Routing::Widest => "routed along widest paths of the network",
                Routing::Fixed => "on the platform's routes",
            };
            let _ = writeln!(
                out,
                "\nwith shared links ({routing}): the ring above is the sharing-aware one (H2); the sharing-blind\nring (H1, {} processors) takes T_step {:.6e} s (T_step/D_w = {:.6e}): H2 gains {:.1}%",
                b.ring.len(),
                b.t_step,
                b.t_step / args.work,
                100.0 * (1.0 - mapping.t_step / b.t_step)
            );
            let q = mapping.ring.len();
            if both.routing == Routing::Widest && q > 1 {
                let _ = writeln!(out, "\nroutes of the H2 ring:");
                for k in 0..q {
                    let names: Vec<&str> = both.aware_routes[k]
                        .1
                        .iter()
                        .map(|&l| platform.links()[l as usize].name.as_str())
                        .collect();
                    let _ = writeln!(
                        out,
                        "  {} -> {}: {}",
                        platform.name(mapping.ring[k]),
                        platform.name(mapping.ring[(k + 1) % q]),
                        names.join(" ")
                    );
                }
            }
        }
    }
    let _ = out.flush();
    Ok(0)
}

/// Reads `--start-loads`: a file (when `value` names one) or a list, as one count
/// per processor of the platform.
fn read_start_loads(platform: &Platform, value: &str) -> Result<Vec<u64>, CliError> {
    let path = Path::new(value);
    let (text, origin) = if path.is_file() {
        let origin = format!("--start-loads {}", path.display());
        (input::read_text(path)?, origin)
    } else {
        (value.to_string(), "--start-loads".to_string())
    };
    parse_start_loads(platform, &text).map_err(|e| CliError::input(format!("{origin}: {e}")))
}

/// Writes the ring redistribution instance of a mapping: start loads from
/// `start_loads` (one per processor of the platform) or split evenly.
fn write_instance(
    platform: &Platform,
    mapping: &Mapping,
    counts: &[u64],
    start_loads: Option<&[u64]>,
    args: &MapArgs,
    path: &Path,
) -> Result<(), CliError> {
    let item_data = args.item_data.unwrap_or(args.border);
    let ring = ring_instance(platform, &mapping.ring, counts, start_loads, item_data).map_err(
        |e| {
            CliError::input(match e {
                RingInstanceError::InvalidItemData { value } => format!(
                    "--item-data = {value}: the data size of an item must be finite and > 0 (give --item-data when --border is 0)"
                ),
                RingInstanceError::SingleProcessor { .. } => format!("--instance-out: {e}"),
                RingInstanceError::LoadsOutsideRing { .. } => format!(
                    "--start-loads: {e} (choose the ring with --processors, or move those items first)"
                ),
                RingInstanceError::Instance(_) => format!("--instance-out: {e}"),
                _ => e.to_string(),
            })
        },
    )?;
    let text = serde_json::to_string_pretty(&ring.to_spec())
        .map_err(|e| CliError::input(format!("cannot encode the instance: {e}")))?;
    std::fs::write(path, text + "\n")
        .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))
}

fn report(
    platform: &Platform,
    args: &MapArgs,
    m: &Mapping,
    comm: &[f64],
    counts: Option<&(Vec<u64>, f64)>,
) -> String {
    let q = m.ring.len();
    let names: Vec<&str> = m.ring.iter().map(|&i| platform.name(i)).collect();
    let mut s = String::new();
    s.push_str(&format!(
        "platform  {}: {} processors\n",
        args.platform.display(),
        platform.len()
    ));
    s.push_str(&format!(
        "method    {}\nring      {} ({} of {} processors)\n",
        m.method.name(),
        names.join(" -> "),
        q,
        platform.len()
    ));
    s.push_str(&format!(
        "T_step    {:.6e} s   (T_step/D_w = {:.6e}, D_w = {}, D_c = {})\n",
        m.t_step,
        m.t_step / args.work,
        args.work,
        args.border
    ));
    if let Some((c, t)) = counts {
        s.push_str(&format!(
            "with {} whole items: T_step {:.6e} s\n",
            c.iter().sum::<u64>(),
            t
        ));
    }
    s.push_str(&format!(
        "\n{:<20} {:>12} {:>10} {:>12} {:>12} {:>12}{}\n",
        "processor",
        "w",
        "share",
        "compute",
        "exchange",
        "end",
        if counts.is_some() {
            "        items"
        } else {
            ""
        }
    ));
    for (k, &i) in m.ring.iter().enumerate() {
        let compute = m.shares[k] * args.work * platform.w(i);
        let exchange = args.border * comm[k];
        s.push_str(&format!(
            "{:<20} {:>12.4e} {:>10.6} {:>12.4e} {:>12.4e} {:>12.4e}{}\n",
            platform.name(i),
            platform.w(i),
            m.shares[k],
            compute,
            exchange,
            compute + exchange,
            counts.map_or(String::new(), |c| format!(" {:>12}", c.0[k]))
        ));
    }
    s
}

/// `hetbal platform ...`.
#[derive(clap::Subcommand)]
pub enum PlatformCommand {
    /// Generate a random heterogeneous platform and print it as JSON (formats.md,
    /// graph form) for `hetbal map`.
    Generate(GenerateArgs),
}

/// Arguments of `hetbal platform generate`.
#[derive(Args)]
pub struct GenerateArgs {
    /// `complete` (every pair of processors has its own link), `tiers` (a
    /// WAN/MAN/LAN hierarchy whose links the ring exchanges share) or `clusters`
    /// (clusters on hubs or switches joined by a WAN with several paths; the
    /// platform of `hetbal experiment mapping`). The JSON gives the network graph
    /// (link `ends`, `routers`), so `hetbal map --sharing` can route on it.
    pub kind: String,
    /// Seed of the random draw (the same seed gives the same platform).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// complete: number of processors, at most 1,024 (a link per pair) [default: 8].
    #[arg(long)]
    pub processors: Option<usize>,
    /// tiers: WAN routers [default: 3].
    #[arg(long)]
    pub wan: Option<usize>,
    /// tiers: MAN routers per WAN router [default: 2].
    #[arg(long)]
    pub man: Option<usize>,
    /// tiers: LANs per MAN router [default: 2].
    #[arg(long)]
    pub lan: Option<usize>,
    /// tiers: hosts per LAN [default: 3].
    #[arg(long)]
    pub hosts: Option<usize>,
    /// clusters: number of clusters (3 to 8 hosts each) [default: 4].
    #[arg(long)]
    pub sites: Option<usize>,
    /// Write the platform to this file instead of the standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Runs `hetbal platform ...`.
pub fn run_platform(command: PlatformCommand) -> Result<u8, CliError> {
    let PlatformCommand::Generate(args) = command;
    // Each option belongs to one kind: one given for another is refused, not
    // ignored.
    let options = [
        ("--processors", args.processors, "complete"),
        ("--wan", args.wan, "tiers"),
        ("--man", args.man, "tiers"),
        ("--lan", args.lan, "tiers"),
        ("--hosts", args.hosts, "tiers"),
        ("--sites", args.sites, "clusters"),
    ];
    if let Some((option, _, kind)) = options
        .iter()
        .find(|(_, value, kind)| value.is_some() && *kind != args.kind)
        .filter(|_| ["complete", "tiers", "clusters"].contains(&args.kind.as_str()))
    {
        return Err(CliError::input(format!(
            "{option} sets {kind} platforms, and this is a {} platform",
            args.kind
        )));
    }
    let platform = match args.kind.as_str() {
        // w in s per unit of work (0.01 to 0.05, the slides' Lyon range), bandwidth
        // in bytes/s, latency in s.
        "complete" => {
            let processors = args.processors.unwrap_or(8);
            in_range(
                "--processors",
                processors,
                (0, 1024),
                "a complete platform has a link per pair: 1,024 processors already write 240 MB",
            )?;
            random_complete(
                args.seed,
                processors,
                (0.01, 0.05),
                (1e6, 1.25e8),
                (1e-5, 1e-3),
            )
        }
        "tiers" => {
            let d = TiersOptions::default();
            tiers(
                args.seed,
                &TiersOptions {
                    wan: args.wan.unwrap_or(d.wan),
                    man_per_wan: args.man.unwrap_or(d.man_per_wan),
                    lan_per_man: args.lan.unwrap_or(d.lan_per_man),
                    hosts_per_lan: args.hosts.unwrap_or(d.hosts_per_lan),
                    ..d
                },
            )
        }
        "clusters" => {
            let d = ClustersOptions::default();
            clusters(
                args.seed,
                &ClustersOptions {
                    clusters: args.sites.unwrap_or(d.clusters),
                    ..d
                },
            )
        }
        other => {
            return Err(CliError::input(format!(
                "unknown platform kind {other:?}: choose complete, tiers or clusters"
            )))
        }
    }
    .map_err(|e| CliError::input(e.to_string()))?;
    let text = serde_json::to_string_pretty(&platform.to_spec())
        .map_err(|e| CliError::input(format!("cannot encode the platform: {e}")))?
        + "\n";
    match &args.out {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))?,
        None => {
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        }
    }
    Ok(0)
}
