//! Runs on synthetic items: the drivers of the `hetbal-mpi` binary's `ring`,
//! `scatter` and `genblock` commands ([`run_ring`], [`run_scatter`],
//! [`run_genblock`]). (Many successive rebalances of one application are the
//! library's `hetbal_mpi::rebalances`.)
//!
//! A driver plans the instance, gives every rank synthetic items whose bytes say
//! their global position ([`items_at`]), runs the operation with the settings'
//! [`Options`], and has every rank check item by item that it holds what it
//! should ([`holds_positions`]): its new items after a commit, exactly its
//! original items after a failure. The [`RunOutcome`] (the same on every rank,
//! but for this rank's error) gives the text report and the JSON run report of
//! formats.md ([`RunReport`]).
//!
//! With [`RunSettings::record`], every rank records its messages and rank 0's
//! outcome carries the run's [`Timeline`] (planned against measured messages,
//! one lane per rank), which [`Timeline::chart`] draws.
//!
//! Bad settings are refused before anything moves ([`SetupError`]); their
//! messages name the `hetbal-mpi` options the settings come from (`--item-bytes`,
//! `--inject-fault`, `--fault-rank`, `--time-scale`).

mod genblock;
mod ring;
mod scatter;

use std::fmt;

use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives};
use serde::{Deserialize, Serialize};

use hetbal_mpi::buffer::ItemBuffer;
use hetbal_mpi::links::RingLinks;
use hetbal_mpi::timeline::{gather, Kind, Lane, Message, Timeline};
use hetbal_mpi::{Fault, Options, Pacing, RunError};

pub use genblock::run_genblock;
pub use ring::run_ring;
pub use scatter::run_scatter;

/// Writes the bytes of the synthetic item at global position `g` into `out` (one
/// item's bytes): its position (little-endian, as many of its 8 bytes as fit),
/// then a pattern.
fn write_item(g: u128, out: &mut [u8]) {
    let tag = (g as u64).to_le_bytes();
    for (k, byte) in out.iter_mut().enumerate() {
        *byte = match tag.get(k) {
            Some(&b) => b,
            None => (g as u64).wrapping_mul(31).wrapping_add(k as u64) as u8,
        };
    }
}

/// The synthetic items at global positions `first .. first + count`, of
/// `item_bytes` bytes each, in an [`ItemBuffer`] reserving room for `total`
/// items on each side (so that a redistribution never copies the items a rank
/// keeps, as an application's would not): every item starts with its position,
/// so that a misplaced, lost or corrupted item shows.
///
/// # Errors
/// The reason, when the buffer cannot be reserved or hold them.
///
/// Complexity: O(count × item_bytes), written in place (no second copy).
/// (positions 3 and 4 of 4-byte items begin `[3, 0, 0, 0]`: see the tests).
pub fn items_at(
    first: u128,
    count: u64,
    item_bytes: usize,
    total: u128,
) -> Result<ItemBuffer<u8>, String> {
    let bytes = |items: u128| {
        usize::try_from(items * item_bytes as u128)
            .map_err(|_| format!("{items} items of {item_bytes} bytes exceed the address space"))
    };
    let (held, room) = (bytes(u128::from(count))?, bytes(total)?);
    let reserve = room
        .checked_mul(2)
        .ok_or("the reservation exceeds the address space")?;
    let mut items = ItemBuffer::with_reserve(reserve).map_err(|e| e.to_string())?;
    items.resize(held).map_err(|e| e.to_string())?;
    for (k, item) in items.chunks_exact_mut(item_bytes).enumerate() {
        write_item(first + k as u128, item);
    }
    Ok(items)
}

/// [`items_at`] on every rank of `world`, agreed: every rank gets its items, or
/// every rank the error ([`SetupError::Memory`]: this rank's reason, or how
/// many others failed), so that no rank goes on alone. Collective.
fn synthetic_items<C: Communicator>(
    world: &C,
    (first, count, total): (u128, u64, u128),
    item_bytes: usize,
) -> Result<ItemBuffer<u8>, SetupError> {
    let items = items_at(first, count, item_bytes, total);
    match (ranks_wrong(world, items.is_ok()), items) {
        (0, Ok(items)) => Ok(items),
        (_, Err(reason)) => Err(SetupError::Memory(reason)),
        (failed, Ok(_)) => Err(SetupError::Memory(format!(
            "{failed} other rank(s) cannot hold their items"
        ))),
    }
}

/// True when `items` are exactly the synthetic items ([`items_at`]) at global
/// positions `first, first + 1, ...` (wrapping at `total`, so that `first` may be
/// negative), `count` of them.
///
/// Complexity: O(count × item_bytes).
/// (positions 9, 0 and 1 of 10 are `first` -1: see the tests).
pub fn holds_positions(
    items: &[u8],
    first: i128,
    count: u64,
    total: u128,
    item_bytes: usize,
) -> bool {
    if items.len() as u128 != u128::from(count) * item_bytes as u128 {
        return false;
    }
    let mut expected = vec![0u8; item_bytes];
    items.chunks_exact(item_bytes).enumerate().all(|(k, item)| {
        let g = (first + k as i128).rem_euclid(total.max(1) as i128) as u128;
        write_item(g, &mut expected);
        item == expected.as_slice()
    })
}

/// What every rank holds after a failure ([`RunOutcome::kept_means`]).
const ORIGINAL_ITEMS: &str = "its original items";
/// The same when ranks give back the items they send as they leave.
const ITEMS_NOT_SENT: &str = "its original items that it had not sent";

/// The settings of a run on synthetic items (the options of the `hetbal-mpi`
/// commands); the driver turns them into the operation's [`Options`] once it has
/// the plan.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSettings {
    /// Bytes per item (at least 1).
    pub item_bytes: usize,
    /// Bytes of items per message ([`Options::chunk_bytes`]).
    pub chunk_bytes: usize,
    /// A rank to misbehave on purpose: `(processor index in the instance, fault)`.
    /// The run must then fail on every rank and every rank keep exactly its
    /// original items.
    pub fault: Option<(usize, Fault)>,
    /// Pace every link to the instance's costs ([`Options::pacing`]).
    pub emulate_links: bool,
    /// Seconds per time unit of the instance's costs for emulated links; `None`:
    /// what makes the plan's transfers last one second. Checked even when the
    /// links are not emulated.
    pub time_scale: Option<f64>,
    /// Record every message of the run ([`Options::record`]) and give rank 0's
    /// outcome the run's [`Timeline`] (`--gantt`). Only the operation is
    /// recorded (not the link measurements nor the round trips of a ring).
    pub record: bool,
    /// Ring and GEN_BLOCK runs: the items are held in an item buffer that
    /// gives back the memory of the items sent as soon as they have left
    /// ([`ItemBuffer::set_give_back_sent`]); after a failure every rank must
    /// then hold exactly its items that had not left.
    pub give_back_sent: bool,
}

impl RunSettings {
    /// The operation's options: the settings' message size, `fault` (already
    /// checked, in ranks of the communicator the operation runs on), and the
    /// plan's pacing when the links are emulated.
    fn options(&self, fault: Option<(usize, Fault)>, pacing: impl FnOnce() -> Pacing) -> Options {
        Options {
            chunk_bytes: self.chunk_bytes,
            fault,
            pacing: self.emulate_links.then(pacing),
            record: self.record,
            batches: None,
        }
    }

    /// What every rank must hold after a failure ([`RunOutcome::kept_means`]):
    /// its original items, or, giving back what it sends, those it had not
    /// sent.
    fn kept_means(&self) -> &'static str {
        if self.give_back_sent {
            ITEMS_NOT_SENT
        } else {
            ORIGINAL_ITEMS
        }
    }

    /// The injected fault, checked against the number of ranks; `sends(rank)`
    /// says whether a rank has a message a fault can spoil.
    fn checked_fault(
        &self,
        ranks: usize,
        sends: impl Fn(usize) -> bool,
    ) -> Result<Option<(usize, Fault)>, SetupError> {
        let Some((rank, fault)) = self.fault else {
            return Ok(None);
        };
        if rank >= ranks {
            return Err(SetupError::FaultRank { rank, ranks });
        }
        if fault.spoils_a_message() && !sends(rank) {
            return Err(SetupError::NothingToSpoil { rank });
        }
        Ok(Some((rank, fault)))
    }

    /// The times of a run: with emulated links, `paced` (the part of the plan they
    /// follow, in time units) times `scale`, else the plan's `makespan`; and the
    /// `measured` seconds of the whole operation and of its transfers.
    fn times(&self, scale: f64, paced: f64, makespan: f64, measured: (f64, f64)) -> RunTimes {
        let (elapsed, transfer) = measured;
        RunTimes {
            planned: if self.emulate_links {
                paced * scale
            } else {
                makespan
            },
            elapsed,
            transfer,
            scale: self.emulate_links.then_some(scale),
        }
    }

    /// Seconds per time unit for emulated links: the time scale, or by default
    /// what makes `planned` (time units) last one second.
    fn checked_scale(&self, planned: f64) -> Result<f64, SetupError> {
        let scale = self
            .time_scale
            .unwrap_or(if planned > 0.0 { 1.0 / planned } else { 1.0 });
        if scale.is_finite() && scale > 0.0 {
            Ok(scale)
        } else {
            Err(SetupError::TimeScale)
        }
    }
}

/// Why a run on synthetic items was refused before anything moved (every rank
/// finds the same reason).
#[derive(Clone, Debug, PartialEq)]
pub enum SetupError {
    /// A ring instance on a communicator without one rank per processor.
    RingRanks {
        /// Processors of the instance.
        processors: usize,
        /// Ranks running.
        ranks: usize,
    },
    /// Items of zero bytes (a ring; scatters and GEN_BLOCK runs report them as
    /// [`SetupError::ScatterRanks`] and [`SetupError::GenBlockRanks`]).
    NoItemBytes,
    /// A scatter instance on a communicator without one rank per processor, or
    /// items of zero bytes.
    ScatterRanks {
        /// Processors of the instance.
        processors: usize,
        /// Ranks running.
        ranks: usize,
    },
    /// A GEN_BLOCK instance on a communicator without `max(sources, targets)`
    /// ranks, or items of zero bytes.
    GenBlockRanks {
        /// Source blocks of the instance.
        sources: usize,
        /// Target blocks of the instance.
        targets: usize,
        /// Ranks running.
        ranks: usize,
    },
    /// The planner refused the instance (its message).
    Plan(String),
    /// The faulty rank is not a rank of the run.
    FaultRank {
        /// The rank asked for.
        rank: usize,
        /// Ranks running.
        ranks: usize,
    },
    /// A fault that spoils a message, on a rank that sends none in this plan.
    NothingToSpoil {
        /// The rank asked for.
        rank: usize,
    },
    /// A time scale that is not a positive number of seconds.
    TimeScale,
    /// The communicator could not be prepared (a scatter's, ranked in the plan's
    /// order).
    Run(RunError),
    /// The rank's synthetic items do not fit in memory (the reason).
    Memory(String),
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetupError::RingRanks { processors, ranks } => write!(
                f,
                "the instance has {processors} processors but {ranks} ranks are running: start it with mpirun -np {processors}"
            ),
            SetupError::NoItemBytes => write!(f, "--item-bytes must be at least 1"),
            SetupError::ScatterRanks { processors, ranks } => write!(
                f,
                "the instance has {processors} processors but {ranks} ranks are running (start it with mpirun -np {processors}), or --item-bytes is 0"
            ),
            SetupError::GenBlockRanks {
                sources,
                targets,
                ranks,
            } => write!(
                f,
                "the instance has {sources} sources and {targets} targets but {ranks} ranks are running (start it with mpirun -np {}), or --item-bytes is 0",
                sources.max(targets)
            ),
            SetupError::Plan(reason) => f.write_str(reason),
            SetupError::FaultRank { rank, ranks } => write!(
                f,
                "--fault-rank {rank}: there are {ranks} ranks (0 to {})",
                ranks.saturating_sub(1)
            ),
            SetupError::NothingToSpoil { rank } => write!(
                f,
                "--fault-rank {rank}: rank {rank} has no message in this plan for --inject-fault to spoil; pick another rank (or fail-before-commit)"
            ),
            SetupError::TimeScale => {
                write!(f, "--time-scale must be a positive number of seconds")
            }
            SetupError::Run(e) => write!(f, "{e}"),
            SetupError::Memory(reason) => write!(f, "cannot hold this rank's items: {reason}"),
        }
    }
}

impl std::error::Error for SetupError {}

/// What a run on synthetic items did, the same on every rank (but for
/// `result`, this rank's).
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutcome {
    /// `ring`, `scatter` or `genblock`.
    pub kind: &'static str,
    /// Ranks of the run.
    pub ranks: usize,
    /// `Ok` when the operation committed; this rank's error otherwise.
    pub result: Result<(), RunError>,
    /// Ranks that do not hold what they should: their target items after a
    /// commit, exactly their original items after a failure.
    pub ranks_wrong: u64,
    /// Items that changed rank.
    pub items_moved: u128,
    /// Every rank's peak resident memory in bytes, at the end of the run (0
    /// where the system does not tell: [`hetbal_mpi::memory::peak_resident_bytes`]).
    pub peak_rss_bytes: Vec<u64>,
    /// The ring's links, when measured before the run.
    pub measured_links: Option<RingLinks>,
    /// Bytes per item.
    pub item_bytes: usize,
    /// Planned against measured times.
    pub times: RunTimes,
    /// The text report's first lines: what ran.
    pub lines: Vec<String>,
    /// What the verification checks, for the text report.
    pub verified_means: &'static str,
    /// What every rank must hold after a failure: its original items, or
    /// (giving back sent items) those it had not sent.
    pub kept_means: &'static str,
    /// The planned and measured messages of a committed run, one lane per rank,
    /// on rank 0 when [`RunSettings::record`] is on; `None` otherwise.
    pub timeline: Option<Timeline>,
}

/// Planned against measured times of a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunTimes {
    /// The plan's time: in time units of the instance, or in seconds with
    /// emulated links.
    pub planned: f64,
    /// Seconds of the whole operation (checks included), the slowest rank's.
    pub elapsed: f64,
    /// Seconds of the transfers alone, the slowest rank's.
    pub transfer: f64,
    /// Seconds per time unit when the links were emulated.
    pub scale: Option<f64>,
}

/// The JSON run report of formats.md ("MPI run report"), of a committed run.
/// Fields in alphabetical order, as the report always printed them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// Bytes that changed rank.
    pub bytes_moved: u64,
    /// Items that changed rank.
    pub items_moved: u64,
    /// `ring`, `scatter` or `genblock`.
    pub kind: String,
    /// The ring's links as measured before the run (`--measure-links`), in both
    /// directions; absent when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_links: Option<RingLinks>,
    /// Measured seconds: the transfers with emulated links, the whole operation
    /// otherwise.
    pub measured_seconds: f64,
    /// Every rank's peak resident memory in bytes, since it started (0 where the
    /// system does not tell).
    pub peak_rss_bytes: Vec<u64>,
    /// The plan's time (seconds with emulated links, time units otherwise).
    pub planned_makespan: f64,
    /// Ranks of the run.
    pub ranks: usize,
    /// True only when every rank checked its final items (count, order,
    /// checksum) against what the plan promised.
    pub verified: bool,
}

impl RunOutcome {
    /// True when the run committed and every rank holds its target items.
    pub fn succeeded(&self) -> bool {
        self.result.is_ok() && self.ranks_wrong == 0
    }

    /// The measured seconds to set against the plan: the transfers with emulated
    /// links (the plan is then in seconds), the whole operation otherwise.
    pub fn measured(&self) -> f64 {
        let times = &self.times;
        if times.scale.is_some() {
            times.transfer
        } else {
            times.elapsed
        }
    }

    /// The JSON run report of formats.md.
    pub fn report(&self) -> RunReport {
        RunReport {
            bytes_moved: (self.items_moved * self.item_bytes as u128) as u64,
            items_moved: self.items_moved as u64,
            kind: self.kind.to_string(),
            measured_links: self.measured_links.clone(),
            measured_seconds: self.measured(),
            peak_rss_bytes: self.peak_rss_bytes.clone(),
            planned_makespan: self.times.planned,
            ranks: self.ranks,
            verified: self.ranks_wrong == 0,
        }
    }

    /// The text report of a committed run: what ran, items moved, planned and
    /// measured times, and what was verified.
    pub fn text(&self) -> Vec<String> {
        let RunTimes {
            planned,
            elapsed,
            scale,
            ..
        } = self.times;
        let measured = self.measured();
        let mut lines = self.lines.clone();
        lines.push(format!(
            "items moved       {} ({} bytes)",
            self.items_moved,
            self.items_moved * self.item_bytes as u128
        ));
        match scale {
            Some(scale) => {
                lines.push(format!(
                    "planned makespan  {planned:.6} s (emulated links, {scale} s per time unit)"
                ));
                lines.push(format!(
                    "measured          {measured:.6} s for the transfers ({:+.1}%), {elapsed:.6} s with the checks",
                    100.0 * (measured / planned - 1.0)
                ));
            }
            None => {
                lines.push(format!("planned makespan  {planned} (instance time units)"));
                lines.push(format!("measured          {elapsed:.6} s"));
            }
        }
        if let Some(links) = &self.measured_links {
            let per_item = |l: &[hetbal_mpi::links::LinkCost]| -> String {
                let costs: Vec<String> = l
                    .iter()
                    .map(|c| format!("{:.3e}", c.per_byte * self.item_bytes as f64))
                    .collect();
                let startups: Vec<String> = l
                    .iter()
                    .map(|c| format!("{:.1}", c.startup * 1e6))
                    .collect();
                format!(
                    "[{}] s per item, start-up [{}] µs",
                    costs.join(", "),
                    startups.join(", ")
                )
            };
            lines.push(format!("links to succ     {}", per_item(&links.to_succ)));
            lines.push(format!("links to pred     {}", per_item(&links.to_pred)));
        }
        if self.peak_rss_bytes.iter().any(|&b| b > 0) {
            let mib: Vec<String> = self
                .peak_rss_bytes
                .iter()
                .map(|&b| format!("{:.1}", b as f64 / f64::from(1u32 << 20)))
                .collect();
            lines.push(format!(
                "peak memory       {} MiB (per rank)",
                mib.join(", ")
            ));
        }
        lines.push(format!(
            "verified          {}",
            if self.ranks_wrong == 0 {
                self.verified_means
            } else {
                "NO"
            }
        ));
        lines
    }

    /// After a failure, what the ranks' checks found: every rank kept exactly its
    /// original items, or how many did not.
    pub fn items_kept(&self) -> String {
        if self.ranks_wrong == 0 {
            format!(
                "every rank still holds exactly {} (checked item by item on all {} ranks)",
                self.kept_means, self.ranks
            )
        } else {
            format!(
                "SOME RANKS LOST ITEMS ({} of {} ranks)",
                self.ranks_wrong, self.ranks
            )
        }
    }
}

/// What [`timed`] measured of an operation.
struct Timed<R> {
    /// The operation's result.
    result: Result<R, RunError>,
    /// The slowest rank's seconds for the whole operation and for its transfers.
    seconds: (f64, f64),
    /// This rank's `MPI_Wtime` right after the barrier before the operation.
    origin: f64,
}

/// Runs `operation` between a barrier and the slowest rank's end: its result,
/// the slowest rank's seconds for the whole operation and its `transfer`
/// seconds (0 on a rank that failed), and this rank's time origin. Collective
/// over `world`.
fn timed<C: Communicator, R>(
    world: &C,
    operation: impl FnOnce() -> Result<R, RunError>,
    transfer: impl Fn(&R) -> f64,
) -> Timed<R> {
    world.barrier();
    let origin = mpi::time();
    let result = operation();
    let elapsed = max_over(world, mpi::time() - origin);
    let transfer = max_over(world, result.as_ref().map_or(0.0, transfer));
    Timed {
        result,
        seconds: (elapsed, transfer),
        origin,
    }
}

/// What a run's timeline shows beside the measured messages: the operation,
/// the plan's makespan (time units) and the seconds per time unit of emulated
/// links.
type Shown = (Kind, f64, f64);

/// The lanes of a timeline: the plan's messages per world rank, and the lanes
/// top to bottom, each a world rank and a name.
type Lanes = (Vec<Vec<Message>>, Vec<(usize, String)>);

/// With `settings.record`, every rank's messages of the operation `run`
/// (`messages` of its report: `MPI_Wtime` seconds, peers in world ranks; none
/// after a failure) gathered at rank 0, relative to each rank's origin, beside
/// the plan's messages of `lanes`, on rank 0 when the operation committed;
/// `None` elsewhere. Collective over `world` when recording.
fn timeline<C: Communicator, R>(
    world: &C,
    settings: &RunSettings,
    run: &Timed<R>,
    messages: impl FnOnce(&R) -> Vec<Message>,
    (kind, planned_makespan, scale): Shown,
    lanes: impl FnOnce() -> Lanes,
) -> Option<Timeline> {
    if !settings.record {
        return None;
    }
    let mine = run.result.as_ref().map_or(Vec::new(), messages);
    let mut measured = gather(world, &mine, run.origin)?;
    if run.result.is_err() {
        return None;
    }
    let (mut planned, order) = lanes();
    let take = |all: &mut Vec<Vec<Message>>, rank: usize| {
        all.get_mut(rank).map(std::mem::take).unwrap_or_default()
    };
    let lanes = order
        .into_iter()
        .map(|(rank, name)| Lane {
            rank,
            name,
            planned: take(&mut planned, rank),
            measured: take(&mut measured, rank),
        })
        .collect();
    Some(Timeline {
        kind,
        lanes,
        planned_makespan,
        scale: settings.emulate_links.then_some(scale),
    })
}

/// A lane's name: the processor's `name` and its `rank`.
fn lane_name(name: &str, rank: usize) -> String {
    format!("{name} (rank {rank})")
}

/// The largest value of `x` over the ranks of `world`.
fn max_over<C: Communicator>(world: &C, x: f64) -> f64 {
    let mut max = 0.0f64;
    world.all_reduce_into(&x, &mut max, SystemOperation::max());
    max
}

/// Every rank's peak resident memory in bytes (0 where the system does not
/// tell). Collective over `world`.
fn peak_rss_bytes<C: Communicator>(world: &C) -> Vec<u64> {
    let mine = hetbal_mpi::memory::peak_resident_bytes().unwrap_or(0);
    let mut all = vec![0u64; world.size() as usize];
    world.all_gather_into(&mine, &mut all[..]);
    all
}

/// The number of ranks of `world` whose `holds` is false.
fn ranks_wrong<C: Communicator>(world: &C, holds: bool) -> u64 {
    let mut wrong = 0u64;
    world.all_reduce_into(&u64::from(!holds), &mut wrong, SystemOperation::sum());
    wrong
}

/// The sum of `counts`, as u128.
fn sum(counts: &[u64]) -> u128 {
    counts.iter().map(|&c| u128::from(c)).sum()
}

#[cfg(test)]
mod tests {
    use super::{holds_positions, items_at};

    #[test]
    fn synthetic_items_say_their_positions() {
        let items = items_at(3, 2, 4, 10).unwrap(); // positions 3 and 4
        assert_eq!(&items[..4], &[3, 0, 0, 0]);
        assert!(holds_positions(&items, 3, 2, 10, 4));
        assert!(!holds_positions(&items, 4, 2, 10, 4));
        // Positions 9, 0 and 1 of 10: the slice wraps around the end.
        let mut items = items_at(9, 1, 8, 10).unwrap();
        items
            .extend_from_slice(&items_at(0, 2, 8, 10).unwrap())
            .unwrap();
        assert!(holds_positions(&items, -1, 3, 10, 8));
    }

    use super::*;

    fn settings() -> RunSettings {
        RunSettings {
            item_bytes: 8,
            chunk_bytes: 1 << 20,
            fault: None,
            emulate_links: false,
            time_scale: None,
            record: false,
            give_back_sent: false,
        }
    }

    fn outcome(scale: Option<f64>) -> RunOutcome {
        RunOutcome {
            kind: "ring",
            ranks: 2,
            result: Ok(()),
            ranks_wrong: 0,
            items_moved: 3,
            peak_rss_bytes: vec![3 << 20, 1 << 19],
            measured_links: None,
            item_bytes: 64,
            times: RunTimes {
                planned: 3.0,
                elapsed: 0.5,
                transfer: 0.25,
                scale,
            },
            lines: vec!["ring redistribution on 2 ranks (test)".to_string()],
            verified_means: "yes",
            kept_means: ORIGINAL_ITEMS,
            timeline: None,
        }
    }

    #[test]
    fn faults_are_checked_against_the_ranks_and_the_plan() {
        let with = |rank, fault| RunSettings {
            fault: Some((rank, fault)),
            ..settings()
        };
        let sends = |r: usize| r == 0;
        assert_eq!(settings().checked_fault(4, sends), Ok(None));
        let e = with(4, Fault::Corrupt).checked_fault(4, sends).unwrap_err();
        assert_eq!(e.to_string(), "--fault-rank 4: there are 4 ranks (0 to 3)");
        let e = with(1, Fault::Short).checked_fault(4, sends).unwrap_err();
        assert_eq!(e, SetupError::NothingToSpoil { rank: 1 });
        assert!(e.to_string().contains("no message in this plan"));
        // Failing before the commit needs no message.
        let fail = with(1, Fault::FailBeforeCommit).checked_fault(4, sends);
        assert_eq!(fail, Ok(Some((1, Fault::FailBeforeCommit))));
    }

    #[test]
    fn the_default_scale_makes_the_plan_last_a_second() {
        assert_eq!(settings().checked_scale(4.0), Ok(0.25));
        assert_eq!(settings().checked_scale(0.0), Ok(1.0));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let s = RunSettings {
                time_scale: Some(bad),
                ..settings()
            };
            assert_eq!(s.checked_scale(4.0), Err(SetupError::TimeScale));
        }
        let emulated = RunSettings {
            emulate_links: true,
            ..settings()
        };
        let times = emulated.times(0.5, 2.0, 7.0, (1.5, 1.0));
        assert_eq!((times.planned, times.scale), (1.0, Some(0.5)));
        assert_eq!(settings().times(0.5, 2.0, 7.0, (1.5, 1.0)).planned, 7.0);
    }

    #[test]
    fn the_json_report_keeps_its_fields_and_order() {
        let json = serde_json::to_string(&outcome(None).report()).unwrap();
        assert_eq!(
            json,
            r#"{"bytes_moved":192,"items_moved":3,"kind":"ring","measured_seconds":0.5,"peak_rss_bytes":[3145728,524288],"planned_makespan":3.0,"ranks":2,"verified":true}"#
        );
        // With emulated links the transfers are measured.
        assert_eq!(outcome(Some(0.1)).report().measured_seconds, 0.25);
    }

    #[test]
    fn text_reports() {
        let text = outcome(None).text();
        assert_eq!(
            text,
            [
                "ring redistribution on 2 ranks (test)",
                "items moved       3 (192 bytes)",
                "planned makespan  3 (instance time units)",
                "measured          0.500000 s",
                "peak memory       3.0, 0.5 MiB (per rank)",
                "verified          yes",
            ]
        );
        let emulated = outcome(Some(0.1)).text();
        assert_eq!(
            emulated[3],
            "measured          0.250000 s for the transfers (-91.7%), 0.500000 s with the checks"
        );
        let lost = RunOutcome {
            ranks_wrong: 1,
            ..outcome(None)
        };
        assert_eq!(lost.text()[5], "verified          NO");
        assert_eq!(lost.items_kept(), "SOME RANKS LOST ITEMS (1 of 2 ranks)");
        assert!(outcome(None).items_kept().contains("on all 2 ranks"));
    }
}
