//! The mapping experiment: sharing-aware (H2) against sharing-blind (H1) ring
//! mapping, the mapping slides' comparison.
//!
//! Platforms are drawn with seeds 0, 1, ... ([`Platforms`]); on each, at the
//! slides' three border-to-work ratios [`RATIOS`] (D_c/D_w, work D_w = 1), the
//! mapping is computed three ways and evaluated with max-min fair sharing
//! ([`map_shared_with`]): H1, blind to sharing; H2 keeping the platform's fixed
//! routes; H2 routing along widest paths of the bandwidth left.
//!
//! ```
//! use hetbal::experiment::mapping::{run, Platforms, Settings, RATIOS};
//! let table = run(&Settings { draws: 2, platforms: Platforms::Tiers { hosts_per_lan: 2 } }).unwrap();
//! assert_eq!(table.hosts, vec![16, 16]);
//! assert_eq!(table.rows.len(), RATIOS.len() * 2 * 3);
//! for mean in &table.means {
//!     // On these two platforms H2 never loses to H1.
//!     assert!(mean.aware <= mean.blind * (1.0 + 1e-9));
//! }
//! ```

use std::fmt;

use serde::Serialize;

use super::Document;

use crate::mapping::{map_shared_with, MappingError, Routing};
use crate::platform::generate::{clusters, tiers, ClustersOptions, GenerateError, TiersOptions};
use crate::platform::{Platform, PlatformError};

/// The border-to-work ratios D_c/D_w of the slides.
pub const RATIOS: [f64; 3] = [0.64, 0.064, 0.0064];

/// What the ratio means (the experiment tables print it).
pub const RATIO_MEANING: &str = "D_c/D_w: border data (MB) per unit of work (Mflop)";

/// The work per iteration D_w of every mapping.
pub const WORK: f64 = 1.0;

/// The platforms the experiment draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Platforms {
    /// Clusters of clusters ([`clusters`] with the default options): hubs and
    /// switches joined by a WAN with several paths between sites.
    Clusters,
    /// A WAN/MAN/LAN tree ([`tiers`]): 2 WAN routers, 2 MAN routers each, 2 LANs
    /// each.
    Tiers {
        /// Hosts per LAN (>= 1).
        hosts_per_lan: usize,
    },
}

impl Platforms {
    /// The platforms in words (the experiment tables print it).
    ///
    /// ```
    /// use hetbal::experiment::mapping::Platforms;
    /// assert!(Platforms::Tiers { hosts_per_lan: 3 }.description().ends_with("3 hosts per LAN"));
    /// ```
    pub fn description(&self) -> String {
        match self {
            Platforms::Clusters => "clusters of clusters (generate::clusters, default options): 4 sites of 3 to 8 hosts, hubs or switches, WAN ring plus 2 chords".to_string(),
            Platforms::Tiers { hosts_per_lan } => format!(
                "Tiers-like WAN/MAN/LAN tree: 2 WAN routers, 2 MAN routers each, 2 LANs each, {hosts_per_lan} hosts per LAN"
            ),
        }
    }

    /// The platform of seed `seed`, a unit of work being 1 Mflop (w in s/Mflop)
    /// and a unit of data 1 MB.
    ///
    /// # Errors
    /// [`MappingExperimentError::Generate`] (for instance 0 hosts per LAN).
    ///
    /// Complexity: the generator's.
    pub fn draw(&self, seed: u64) -> Result<Platform, MappingExperimentError> {
        let platform = match *self {
            Platforms::Clusters => clusters(seed, &ClustersOptions::default()),
            Platforms::Tiers { hosts_per_lan } => tiers(
                seed,
                &TiersOptions {
                    wan: 2,
                    man_per_wan: 2,
                    lan_per_man: 2,
                    hosts_per_lan,
                    ..TiersOptions::default()
                },
            ),
        }
        .map_err(MappingExperimentError::Generate)?;
        platform
            .with_unit_bytes(1e6)
            .map_err(MappingExperimentError::Platform)
    }
}

/// The experiment's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Platforms drawn (seeds 0 to `draws - 1`; >= 1).
    pub draws: u64,
    /// Which platforms.
    pub platforms: Platforms,
}

/// One mapping of one platform at one ratio (formats.md, "Experiment tables");
/// the fields are in the alphabetical order the JSON document prints them in.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// `H1-blind`, `H2-fixed-routes` or `H2-aware`.
    pub policy: &'static str,
    /// Processors in the ring.
    pub processors: usize,
    /// D_c/D_w.
    pub ratio: f64,
    /// The platform's seed.
    pub seed: u64,
    /// T_step / D_w with shared links.
    pub t_step_over_work: f64,
}

/// The experiment's JSON document: what `hetbal experiment mapping --json`
/// prints, the rows of [`Table::rows`]. The fields of
/// [`MappingExperimentParameters`] and [`Row`] are in alphabetical order.
pub type MappingExperimentDocument<'a> = Document<MappingExperimentParameters<'a>, &'a [Row]>;

/// The `parameters` of a [`MappingExperimentDocument`].
#[derive(Clone, Debug, Serialize)]
pub struct MappingExperimentParameters<'a> {
    /// Platforms drawn per ratio.
    pub draws: u64,
    /// Hosts of each platform drawn.
    pub hosts: &'a [usize],
    /// The platforms in words ([`Platforms::description`]).
    pub platform: String,
    /// What the ratio means ([`RATIO_MEANING`]).
    pub ratio_meaning: &'static str,
    /// The work per iteration D_w ([`WORK`]).
    pub work: f64,
}

/// The means over the draws at one ratio.
#[derive(Clone, Debug, PartialEq)]
pub struct Mean {
    /// D_c/D_w.
    pub ratio: f64,
    /// Mean T_step / D_w of H1 (blind to sharing).
    pub blind: f64,
    /// Mean ring size of H1.
    pub blind_processors: f64,
    /// Mean T_step / D_w of H2 on the platform's fixed routes.
    pub fixed_routes: f64,
    /// Mean T_step / D_w of H2 (aware of sharing, widest paths).
    pub aware: f64,
    /// Mean ring size of H2.
    pub aware_processors: f64,
    /// `1 - sum of H2's T_step / sum of H1's`: H2's gain.
    pub gain: f64,
    /// Draws where H2 is strictly faster than H1.
    pub aware_wins: u64,
}

/// The experiment's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Hosts of each platform drawn.
    pub hosts: Vec<usize>,
    /// Three rows (H1, H2 on fixed routes, H2) per ratio and platform, by ratio
    /// then seed.
    pub rows: Vec<Row>,
    /// One per ratio of [`RATIOS`].
    pub means: Vec<Mean>,
}

impl Table {
    /// The JSON document of the table run with `settings`.
    ///
    /// Complexity: O(1) (it borrows the rows).
    ///
    /// ```
    /// use hetbal::experiment::mapping::{run, Platforms, Settings};
    /// let settings = Settings { draws: 1, platforms: Platforms::Tiers { hosts_per_lan: 1 } };
    /// let table = run(&settings).unwrap();
    /// let document = table.document(&settings);
    /// assert_eq!(document.parameters.hosts, &[8]);
    /// assert_eq!(document.rows.len(), table.rows.len());
    /// ```
    pub fn document(&self, settings: &Settings) -> MappingExperimentDocument<'_> {
        Document {
            experiment: "mapping",
            parameters: MappingExperimentParameters {
                draws: settings.draws,
                hosts: &self.hosts,
                platform: settings.platforms.description(),
                ratio_meaning: RATIO_MEANING,
                work: WORK,
            },
            rows: &self.rows,
        }
    }
}

/// Why the experiment could not run.
#[derive(Clone, Debug, PartialEq)]
pub enum MappingExperimentError {
    /// No draws.
    NoDraws,
    /// A platform could not be generated.
    Generate(GenerateError),
    /// A platform could not be set to megabytes.
    Platform(PlatformError),
    /// A mapping failed.
    Mapping(MappingError),
}

impl fmt::Display for MappingExperimentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MappingExperimentError::NoDraws => f.write_str("draws must be at least 1"),
            MappingExperimentError::Generate(e) => write!(f, "{e}"),
            MappingExperimentError::Platform(e) => write!(f, "{e}"),
            MappingExperimentError::Mapping(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for MappingExperimentError {}

/// Runs the experiment.
///
/// # Errors
/// [`MappingExperimentError`]: no draws, a platform that cannot be generated, a
/// mapping that fails.
///
/// # Complexity
/// draws · ratios · (two [`map_shared_with`]).
pub fn run(settings: &Settings) -> Result<Table, MappingExperimentError> {
    if settings.draws == 0 {
        return Err(MappingExperimentError::NoDraws);
    }
    let platforms: Vec<Platform> = (0..settings.draws)
        .map(|seed| settings.platforms.draw(seed))
        .collect::<Result<_, _>>()?;
    let mut rows = Vec::new();
    let mut means = Vec::new();
    let n = settings.draws as f64;
    for ratio in RATIOS {
        let mut sum = Mean {
            ratio,
            blind: 0.0,
            blind_processors: 0.0,
            fixed_routes: 0.0,
            aware: 0.0,
            aware_processors: 0.0,
            gain: 0.0,
            aware_wins: 0,
        };
        for (seed, platform) in (0..).zip(&platforms) {
            let map = |routing| {
                map_shared_with(platform, WORK, ratio, routing)
                    .map_err(MappingExperimentError::Mapping)
            };
            let widest = map(Routing::Widest)?;
            let fixed = map(Routing::Fixed)?;
            let (blind, aware) = (&widest.blind, &widest.aware);
            sum.blind += blind.t_step;
            sum.fixed_routes += fixed.aware.t_step;
            sum.aware += aware.t_step;
            sum.blind_processors += blind.ring.len() as f64;
            sum.aware_processors += aware.ring.len() as f64;
            sum.aware_wins += u64::from(aware.t_step < blind.t_step * (1.0 - 1e-9));
            for (policy, mapping) in [
                ("H1-blind", blind),
                ("H2-fixed-routes", &fixed.aware),
                ("H2-aware", aware),
            ] {
                rows.push(Row {
                    ratio,
                    seed,
                    policy,
                    processors: mapping.ring.len(),
                    t_step_over_work: mapping.t_step / WORK,
                });
            }
        }
        means.push(Mean {
            blind: sum.blind / n,
            blind_processors: sum.blind_processors / n,
            fixed_routes: sum.fixed_routes / n,
            aware: sum.aware / n,
            aware_processors: sum.aware_processors / n,
            gain: 1.0 - sum.aware / sum.blind,
            ..sum
        });
    }
    Ok(Table {
        hosts: platforms.iter().map(Platform::len).collect(),
        rows,
        means,
    })
}
