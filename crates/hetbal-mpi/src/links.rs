//! Measured ring links: every rank times ping-pongs with its neighbours at a few
//! message sizes, and a straight line through the times gives each link, in each
//! direction, a start-up time and a time per byte ([`measure_ring_links`]). No
//! one has to know the link costs beforehand: the
//! [`Balancer`](crate::balancer::Balancer) can measure them itself, and again on
//! request.
//!
//! # How
//! The links are measured one after the other (so that probes do not share a
//! link or a core), each in both directions: the sender of a probe of `s` bytes
//! times the round trip of `s` bytes out and an empty message back, the least of
//! a few repeats for each size. With `t0` the least round trip of an empty probe,
//! the slope of the round trips against `s` (least squares) is the time per byte
//! of the direction, and the intercept minus `t0 / 2` (the empty message back,
//! taken as half the empty round trip) its start-up time. Done with the defaults
//! ([`Probe::default`]: 0, 64 KiB and 1 MiB, five times each) on shared memory,
//! it takes a few milliseconds for a ring of a few ranks.
//!
//! A round trip cannot tell a link's start-up one way from its start-up the
//! other way: the fit gives each direction half of the empty round trip, so
//! when the two differ both directions measure their mean (their times per
//! byte are told apart: each direction's probes carry the bytes one way).
//!
//! With emulated links ([`Probe::emulated`]) every probe leaves only once its
//! emulated transfer has ended, as the items of an operation with
//! [`crate::Options::pacing`] do: measuring then gives back the emulated costs
//! (plus the real ones, small on one machine).

use std::time::Duration;

use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Rank, SimpleCommunicator};
use mpi::traits::{Communicator, CommunicatorCollectives};
use serde::{Deserialize, Serialize};

use crate::comm::Duplicate;
use crate::protocol::{agree_before_start, Digest};
use crate::{Options, RunError};

/// Tag of the probes.
const TAG_PROBE: i32 = 41;

/// The cost of one direction of one link: a message of `b` bytes takes
/// `startup + b * per_byte` seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkCost {
    /// Seconds of a message, whatever its size.
    pub startup: f64,
    /// Seconds per byte.
    pub per_byte: f64,
}

impl LinkCost {
    /// Seconds per item of `item_bytes` bytes sent in messages of `chunk_items`
    /// items: the bytes' time plus a share of a message's start-up (the cost per
    /// item of the ring planner, whose plans have no start-up); at least a
    /// picosecond (a link measured as free, by noise, still costs something to
    /// the planner).
    ///
    /// # Example
    /// ```
    /// use hetbal_mpi::links::LinkCost;
    /// let link = LinkCost { startup: 1e-5, per_byte: 1e-9 };
    /// assert!((link.per_item(1000, 100) - (1e-6 + 1e-7)).abs() < 1e-15);
    /// ```
    pub fn per_item(&self, item_bytes: usize, chunk_items: usize) -> f64 {
        let cost = self.per_byte * item_bytes as f64 + self.startup / chunk_items.max(1) as f64;
        if cost.is_finite() {
            cost.max(1e-12)
        } else {
            1e-12
        }
    }

    /// Seconds per item of `item_bytes` bytes, without the start-up (the cost
    /// per item of a ring instance with start-ups,
    /// [`hetbal::ring::RingInstance::with_startups`]); at least a picosecond,
    /// as [`LinkCost::per_item`].
    ///
    /// # Example
    /// ```
    /// use hetbal_mpi::links::LinkCost;
    /// let link = LinkCost { startup: 1e-5, per_byte: 1e-9 };
    /// assert!((link.item_seconds(1000) - 1e-6).abs() < 1e-18);
    /// assert_eq!(LinkCost::default().item_seconds(8), 1e-12);
    /// ```
    pub fn item_seconds(&self, item_bytes: usize) -> f64 {
        let cost = self.per_byte * item_bytes as f64;
        if cost.is_finite() {
            cost.max(1e-12)
        } else {
            1e-12
        }
    }

    /// The start-up in seconds, for a ring instance: 0 when not a finite
    /// number >= 0 (noise cannot make a start-up negative).
    pub fn startup_seconds(&self) -> f64 {
        if self.startup.is_finite() {
            self.startup.max(0.0)
        } else {
            0.0
        }
    }

    /// Seconds of a message of `bytes` bytes.
    pub fn seconds(&self, bytes: usize) -> f64 {
        self.startup + self.per_byte * bytes as f64
    }
}

/// The links of a ring of ranks, both directions: `to_succ[i]` from rank i to
/// rank i+1, `to_pred[i]` from rank i to rank i-1 (on two ranks both join the
/// same pair, and are measured apart).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RingLinks {
    /// From rank i to its successor.
    pub to_succ: Vec<LinkCost>,
    /// From rank i to its predecessor.
    pub to_pred: Vec<LinkCost>,
}

impl RingLinks {
    /// Links of per-item costs (`c_succ[i]`, `c_pred[i]`, seconds per item of
    /// `item_bytes` bytes) with no start-up; `c_pred` absent: the same as
    /// `c_succ` backwards.
    ///
    /// # Example
    /// ```
    /// use hetbal_mpi::links::RingLinks;
    /// let links = RingLinks::per_item_costs(&[2e-6, 4e-6], None, 8);
    /// assert_eq!(links.to_succ[1].per_byte, 5e-7);
    /// assert_eq!(links.to_pred[0].startup, 0.0);
    /// ```
    pub fn per_item_costs(c_succ: &[f64], c_pred: Option<&[f64]>, item_bytes: usize) -> Self {
        let link = |c: &f64| LinkCost {
            startup: 0.0,
            per_byte: c / item_bytes.max(1) as f64,
        };
        RingLinks {
            to_succ: c_succ.iter().map(link).collect(),
            to_pred: c_pred.unwrap_or(c_succ).iter().map(link).collect(),
        }
    }

    /// The per-item costs the ring planner takes, `(c_succ, c_pred)`, for items
    /// of `item_bytes` bytes moved in the messages of `options`
    /// ([`LinkCost::per_item`]).
    pub fn per_item(&self, item_bytes: usize, options: &Options) -> (Vec<f64>, Vec<f64>) {
        let chunk = options.chunk_items(item_bytes);
        let costs = |links: &[LinkCost]| {
            links
                .iter()
                .map(|l| l.per_item(item_bytes, chunk))
                .collect()
        };
        (costs(&self.to_succ), costs(&self.to_pred))
    }

    /// The time per item of the links, `(to successors, to predecessors)`, for
    /// items of `item_bytes` bytes, start-ups apart ([`LinkCost::item_seconds`]):
    /// the costs of a ring instance with start-ups. O(n).
    ///
    /// # Example
    /// ```
    /// use hetbal_mpi::links::{LinkCost, RingLinks};
    /// let link = LinkCost { startup: 1e-5, per_byte: 0.5e-9 };
    /// let links = RingLinks { to_succ: vec![link; 2], to_pred: vec![link; 2] };
    /// assert_eq!(links.item_seconds(1024).0, vec![0.512e-6; 2]);
    /// assert_eq!(links.startup_seconds().1, vec![1e-5; 2]);
    /// ```
    pub fn item_seconds(&self, item_bytes: usize) -> (Vec<f64>, Vec<f64>) {
        let costs = |links: &[LinkCost]| links.iter().map(|l| l.item_seconds(item_bytes)).collect();
        (costs(&self.to_succ), costs(&self.to_pred))
    }

    /// The start-ups of the links, `(to successors, to predecessors)`
    /// ([`LinkCost::startup_seconds`]): those of a ring instance with
    /// start-ups. O(n).
    pub fn startup_seconds(&self) -> (Vec<f64>, Vec<f64>) {
        let startups = |links: &[LinkCost]| links.iter().map(|l| l.startup_seconds()).collect();
        (startups(&self.to_succ), startups(&self.to_pred))
    }
}

/// How to measure ([`measure_ring_links`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// Sizes of the probes in bytes (0 is always added: it gives the time of the
    /// empty message back). At least one more size is needed for a slope.
    pub sizes: Vec<usize>,
    /// Probes of each size (the least time counts).
    pub repeats: usize,
    /// Emulated links: every probe leaves once its emulated transfer, on the
    /// link it takes, has ended ([`LinkCost::seconds`] of its size). `None`: as
    /// fast as MPI goes.
    pub emulated: Option<RingLinks>,
}

impl Default for Probe {
    fn default() -> Self {
        Probe {
            sizes: vec![0, 64 << 10, 1 << 20],
            repeats: 5,
            emulated: None,
        }
    }
}

/// Measures every link of the ring of `comm` (rank i next to i-1 and i+1) in
/// both directions (see the module's docs). Collective: every rank gets the
/// same links.
///
/// # Errors
/// [`RunError::InvalidPlan`] on every rank when the probe has no size above 0
/// or no repeat, or its emulated links do not have one per rank;
/// [`RunError::PeerRefused`] on the others when that is so on some ranks only,
/// and [`RunError::Mismatch`] when the ranks' probes differ. On one rank there
/// is no link: both directions cost 0 and nothing is measured.
///
/// # Complexity
/// `2n` directions one after the other, each `repeats` round trips per size;
/// one all-gather.
pub fn measure_ring_links<C: Communicator>(comm: &C, probe: &Probe) -> Result<RingLinks, RunError> {
    let n = comm.size() as usize;
    let rank = comm.rank() as usize;
    let mut sizes = probe.sizes.clone();
    sizes.push(0);
    sizes.sort_unstable();
    sizes.dedup();
    let bad = |reason: String| Err(RunError::InvalidPlan { reason });
    let local = if sizes.len() < 2 || probe.repeats == 0 {
        bad("measuring links needs a probe size above 0 and a repeat".to_string())
    } else {
        match &probe.emulated {
            Some(e) if e.to_succ.len() != n || e.to_pred.len() != n => bad(format!(
                "the emulated ring has {} links but the communicator {n} ranks",
                e.to_succ.len()
            )),
            _ => Ok(()),
        }
    };
    if n == 1 {
        // One rank has no link to measure: nothing ever moves.
        return local.map(|()| RingLinks {
            to_succ: vec![LinkCost::default()],
            to_pred: vec![LinkCost::default()],
        });
    }
    let duplicate = Duplicate::of(comm);
    let comm: &SimpleCommunicator = &duplicate;
    // Every rank measures with the same probe, or none does.
    let fingerprint = Digest::new("links")
        .add(&sizes)
        .add(&probe.repeats)
        .add(&format!("{:?}", probe.emulated))
        .finish();
    agree_before_start(comm, local, fingerprint)?;
    let largest = *sizes.last().expect("sizes");
    let buffer = vec![0u8; largest];
    let mut incoming = vec![0u8; largest];
    let emulated = |direction: (usize, bool), bytes: usize| {
        probe.emulated.as_ref().map_or(0.0, |e| {
            let (from, to_succ) = direction;
            let link = if to_succ {
                e.to_succ[from]
            } else {
                e.to_pred[from]
            };
            link.seconds(bytes)
        })
    };
    // Round trips timed by this rank: [to its successor, to its predecessor],
    // the least time for each size.
    let mut timed: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for l in 0..n {
        let (a, b) = (l, (l + 1) % n);
        // a probes b (a's link to its successor), then b probes a (b's link to
        // its predecessor).
        for (pinger, ponger, to_succ) in [(a, b, true), (b, a, false)] {
            if rank == pinger {
                let peer = comm.process_at_rank(ponger as Rank);
                let least = sizes
                    .iter()
                    .map(|&s| {
                        (0..probe.repeats)
                            .map(|_| {
                                let started = mpi::time();
                                wait(emulated((pinger, to_succ), s));
                                peer.send_with_tag(&buffer[..s], TAG_PROBE);
                                peer.receive_into_with_tag(&mut incoming[..0], TAG_PROBE);
                                mpi::time() - started
                            })
                            .fold(f64::INFINITY, f64::min)
                    })
                    .collect();
                timed[usize::from(!to_succ)] = least;
            } else if rank == ponger {
                let peer = comm.process_at_rank(pinger as Rank);
                for &s in &sizes {
                    for _ in 0..probe.repeats {
                        peer.receive_into_with_tag(&mut incoming[..s], TAG_PROBE);
                        wait(emulated((ponger, !to_succ), 0));
                        peer.send_with_tag(&buffer[..0], TAG_PROBE);
                    }
                }
            }
        }
    }
    let fit = |times: &[f64]| -> LinkCost { line_through(&sizes, times) };
    let mine = [fit(&timed[0]), fit(&timed[1])];
    let flat = [
        mine[0].startup,
        mine[0].per_byte,
        mine[1].startup,
        mine[1].per_byte,
    ];
    let mut all = vec![[0f64; 4]; n];
    comm.all_gather_into(&flat[..], bytemuck::cast_slice_mut::<_, f64>(&mut all[..]));
    let link = |startup: f64, per_byte: f64| LinkCost { startup, per_byte };
    Ok(RingLinks {
        to_succ: all.iter().map(|x| link(x[0], x[1])).collect(),
        to_pred: all.iter().map(|x| link(x[2], x[3])).collect(),
    })
}

/// Sleeps `seconds` (none when 0).
fn wait(seconds: f64) {
    if seconds > 0.0 {
        std::thread::sleep(Duration::from_secs_f64(seconds));
    }
}

/// The link whose round trips of `sizes[k]` bytes out and none back took
/// `times[k]` (`sizes[0]` = 0): the least-squares line's slope per byte, and its
/// intercept minus half the empty round trip as the start-up (neither below 0).
/// Nothing measured (no times): a zero cost.
fn line_through(sizes: &[usize], times: &[f64]) -> LinkCost {
    if times.len() != sizes.len() || times.is_empty() {
        return LinkCost::default();
    }
    let k = sizes.len() as f64;
    let mean_s = sizes.iter().map(|&s| s as f64).sum::<f64>() / k;
    let mean_t = times.iter().sum::<f64>() / k;
    let (mut sst, mut sss) = (0.0, 0.0);
    for (&s, &t) in sizes.iter().zip(times) {
        sst += (s as f64 - mean_s) * (t - mean_t);
        sss += (s as f64 - mean_s) * (s as f64 - mean_s);
    }
    let per_byte = if sss > 0.0 { (sst / sss).max(0.0) } else { 0.0 };
    let intercept = mean_t - per_byte * mean_s;
    LinkCost {
        startup: (intercept - times[0] / 2.0).max(0.0),
        per_byte,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_through_round_trips() {
        // Out: 2 µs + 1 ns per byte; back (empty): 1 µs.
        let sizes = [0, 1000, 4000];
        let times: Vec<f64> = sizes.iter().map(|&s| 3e-6 + 1e-9 * s as f64).collect();
        let link = line_through(&sizes, &times);
        assert!((link.per_byte - 1e-9).abs() < 1e-15, "{link:?}");
        // The empty round trip, 3 µs, counts half for the way back: the fit
        // splits start-ups evenly.
        assert!((link.startup - 1.5e-6).abs() < 1e-12, "{link:?}");
        assert_eq!(line_through(&sizes, &[]), LinkCost::default());
        // Noise making the slope negative gives 0, not a negative cost.
        assert_eq!(line_through(&[0, 10], &[2e-6, 1e-6]).per_byte, 0.0);
    }
}
