//! What a replay takes ([`ReplayJob`]) and what it gives back ([`ReplayReport`],
//! formats.md "SimGrid replay report"), and how it can fail ([`ReplayError`]).
//!
//! A transfer over a link without start-up is replayed as a train of items (one
//! SimGrid communication each, forwarded as they arrive); over a link with a
//! start-up it is one message, as docs/model.md "Start-ups" has it: one SimGrid
//! communication of all its items, started at the plan's start and bringing them
//! all at its end (see [`crate::simulate`]).

use std::collections::HashMap;
use std::fmt;

use hetbal::ring::{transfer_link, RingInstance};
use hetbal::{validate, Schedule, ViolationRule};
use serde::{Deserialize, Serialize};

use crate::model::NetworkModel;
use crate::network::{RingNetwork, MAX_ITEM_BYTES};

/// The most items a replay simulates (one SimGrid communication each over links
/// without start-up; each one also counts in a message over links with one).
pub const MAX_REPLAY_ITEMS: u128 = 1_000_000;

/// The most processors a replay simulates: SimGrid's route table of the ring
/// platform grows as the square of the processors (about 300 MB here).
pub const MAX_REPLAY_PROCESSORS: usize = 4096;

/// One transfer of the plan, with the link it uses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobTransfer {
    /// Sending processor.
    pub from: usize,
    /// Receiving processor.
    pub to: usize,
    /// Index of the link in [`RingNetwork::links`].
    pub link: usize,
    /// Items sent back to back (over a link without start-up), or in one message.
    pub items: u64,
    /// Planned start of the first item (of the message).
    pub start: f64,
    /// Planned arrival of the last item (of the message).
    pub end: f64,
    /// Seconds between the starts of consecutive items of a paced train (the
    /// plan's [`Transfer::period`](hetbal::Transfer::period)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<f64>,
}

impl JobTransfer {
    /// Planned start of item `k` (from 0) of a train (a transfer over a link
    /// without start-up): the plan's items are evenly spaced, back to back or one
    /// `period` apart.
    pub fn item_start(&self, k: u64) -> f64 {
        match (k, self.period) {
            (0, _) => self.start,
            (_, Some(p)) => self.start + k as f64 * p,
            (_, None) => self.start + k as f64 * ((self.end - self.start) / self.items as f64),
        }
    }
}

/// Everything a worker needs to replay a plan: self-contained, no instance file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayJob {
    /// The network model.
    pub model: NetworkModel,
    /// Processor names (for messages).
    pub names: Vec<String>,
    /// Items each processor holds at time 0.
    pub loads: Vec<u64>,
    /// The ring's links and item size.
    pub network: RingNetwork,
    /// The route of each ordered pair of neighbours: (from, to, link).
    pub routes: Vec<(usize, usize, usize)>,
    /// The plan's transfers, in the plan's order.
    pub transfers: Vec<JobTransfer>,
}

impl ReplayJob {
    /// Prepares the replay of `schedule` (a plan's transfers, valid or not) on
    /// `ring` over `network` under `model`.
    ///
    /// The plan need not be valid: overlapping sends or receives and items sent
    /// before they are held are what a replay exposes. It must be well formed:
    /// transfers between neighbours, at least one item, finite times (the
    /// validator's structural rules).
    ///
    /// # Errors
    /// [`ReplayError::Unreplayable`] for a schedule that is not well formed, a
    /// network of another ring, a 2-processor bidirectional plan that uses
    /// both links between the same pair in the same direction (SimGrid has one
    /// route per pair of hosts), or a message (a transfer over a link with a
    /// start-up) above [`crate::network::MAX_ITEM_BYTES`] bytes;
    /// [`ReplayError::TooManyItems`] beyond
    /// [`MAX_REPLAY_ITEMS`]; [`ReplayError::TooManyProcessors`] beyond
    /// [`MAX_REPLAY_PROCESSORS`].
    ///
    /// # Example
    /// ```
    /// use hetbal::ring::{plan, RingInstance};
    /// use hetbal_simgrid::{NetworkModel, ReplayJob, RingNetwork};
    /// let ring = RingInstance::unidirectional(&[3, 1, 1], &[1, 2, 2], &[1.0, 2.0, 1.0]).unwrap();
    /// let plan = plan(&ring, None).unwrap();
    /// let network = RingNetwork::from_instance(&ring, 1_000_000).unwrap();
    /// let job = ReplayJob::new(&ring, &plan.schedule(), &network, NetworkModel::OnePort).unwrap();
    /// assert_eq!(job.transfers.len(), plan.transfers.len());
    /// ```
    pub fn new(
        ring: &RingInstance,
        schedule: &Schedule,
        network: &RingNetwork,
        model: NetworkModel,
    ) -> Result<Self, ReplayError> {
        if ring.len() > MAX_REPLAY_PROCESSORS {
            return Err(ReplayError::TooManyProcessors {
                processors: ring.len(),
                limit: MAX_REPLAY_PROCESSORS,
            });
        }
        if network.processors != ring.len() {
            return Err(ReplayError::Unreplayable(vec![format!(
                "the network has {} processors but the ring {}",
                network.processors,
                ring.len()
            )]));
        }
        if let Err(violations) = validate(ring, schedule) {
            let structural: Vec<String> = violations
                .iter()
                .filter(|v| {
                    matches!(
                        v.rule,
                        ViolationRule::UnknownProcessor
                            | ViolationRule::NotNeighbour
                            | ViolationRule::NoItems
                            | ViolationRule::BadTime
                    )
                })
                .map(|v| v.to_string())
                .collect();
            if !structural.is_empty() {
                return Err(ReplayError::Unreplayable(structural));
            }
        }
        let items = schedule.items_sent();
        if items > MAX_REPLAY_ITEMS {
            return Err(ReplayError::TooManyItems {
                items,
                limit: MAX_REPLAY_ITEMS,
            });
        }
        let mut transfers = Vec::with_capacity(schedule.transfers.len());
        let mut routes: HashMap<(usize, usize), usize> = HashMap::new();
        for (index, t) in schedule.transfers.iter().enumerate() {
            // The link the library's validator reads (the successor's for a
            // transfer no link explains: the replay then shows the difference).
            let to_succ = transfer_link(ring, t).is_none_or(|link| link.to_succ);
            let link = network.link(t.from, to_succ).ok_or_else(|| {
                ReplayError::Unreplayable(vec![format!(
                    "transfer {index}: the network has no link from {} to {}",
                    t.from, t.to
                )])
            })?;
            if network.links[link].has_startup() {
                let bytes = u128::from(t.items) * u128::from(network.item_bytes);
                if bytes > u128::from(MAX_ITEM_BYTES) {
                    return Err(ReplayError::Unreplayable(vec![format!(
                        "transfer {index}: its {} items of {} bytes go in one message (the link has a start-up), {bytes} bytes: SimGrid takes at most {MAX_ITEM_BYTES}; give a smaller item size",
                        t.items, network.item_bytes
                    )]));
                }
            }
            match routes.insert((t.from, t.to), link) {
                Some(other) if other != link => {
                    return Err(ReplayError::Unreplayable(vec![format!(
                        "transfer {index}: the plan sends from {} to {} over both links of the 2-processor ring; SimGrid has one route per pair of hosts",
                        t.from, t.to
                    )]))
                }
                _ => {}
            }
            transfers.push(JobTransfer {
                from: t.from,
                to: t.to,
                link,
                items: t.items,
                start: t.start,
                end: t.end,
                period: t.period,
            });
        }
        // Neighbours the plan does not use still get a route (their first link).
        for (k, link) in network.links.iter().enumerate() {
            routes.entry((link.from, link.to)).or_insert(k);
        }
        let mut routes: Vec<(usize, usize, usize)> =
            routes.into_iter().map(|((f, t), l)| (f, t, l)).collect();
        routes.sort_unstable();
        Ok(ReplayJob {
            model,
            names: ring.names().to_vec(),
            loads: ring.loads().to_vec(),
            network: network.clone(),
            routes,
            transfers,
        })
    }

    /// The SimGrid platform XML of the job.
    pub fn platform_xml(&self) -> String {
        self.network.platform_xml(&self.routes, self.model)
    }

    /// The plan's makespan: the latest planned end (0 without transfers).
    pub fn plan_makespan(&self) -> f64 {
        self.transfers.iter().map(|t| t.end).fold(0.0, f64::max)
    }
}

/// What a simulation measured: when each transfer's last item arrived.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimOutcome {
    /// Arrival of each transfer's last item, in the job's order.
    pub transfer_ends: Vec<f64>,
    /// SimGrid's clock when the simulation ended.
    pub clock: f64,
}

/// One transfer in the replay report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferReplay {
    /// Sending processor.
    pub from: usize,
    /// Receiving processor.
    pub to: usize,
    /// Items of the transfer.
    pub items: u64,
    /// When the plan says its last item arrives.
    pub plan_end: f64,
    /// When its last item arrived in SimGrid.
    pub simgrid_end: f64,
}

impl TransferReplay {
    /// `simgrid_end - plan_end`.
    pub fn difference(&self) -> f64 {
        self.simgrid_end - self.plan_end
    }
}

/// The SimGrid replay report of formats.md: both makespans and, per transfer of
/// the plan (in the plan's order), both ends.
///
/// # Example
/// ```
/// use hetbal_simgrid::ReplayReport;
/// let text = r#"{ "model": "oneport", "plan_makespan": 7.0, "simgrid_makespan": 7.0,
///   "transfers": [ {"from": 0, "to": 1, "items": 3, "plan_end": 3.0, "simgrid_end": 3.0} ] }"#;
/// let report: ReplayReport = serde_json::from_str(text).unwrap();
/// assert!(report.agrees(1e-9));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayReport {
    /// The network model of the replay.
    pub model: NetworkModel,
    /// The plan's makespan (its latest transfer end).
    pub plan_makespan: f64,
    /// When the last item arrived in SimGrid.
    pub simgrid_makespan: f64,
    /// Every transfer, in the plan's order.
    pub transfers: Vec<TransferReplay>,
}

impl ReplayReport {
    /// Joins a job and what its simulation measured.
    pub fn new(job: &ReplayJob, outcome: &SimOutcome) -> Self {
        let transfers: Vec<TransferReplay> = job
            .transfers
            .iter()
            .zip(&outcome.transfer_ends)
            .map(|(t, &end)| TransferReplay {
                from: t.from,
                to: t.to,
                items: t.items,
                plan_end: t.end,
                simgrid_end: end,
            })
            .collect();
        ReplayReport {
            model: job.model,
            plan_makespan: job.plan_makespan(),
            simgrid_makespan: transfers.iter().map(|t| t.simgrid_end).fold(0.0, f64::max),
            transfers,
        }
    }

    /// Whether the makespans and every transfer's ends agree to `relative`
    /// (relative to the plan's makespan, at least 1 s).
    pub fn agrees(&self, relative: f64) -> bool {
        let scale = self.plan_makespan.abs().max(1.0);
        let close = |a: f64, b: f64| (a - b).abs() <= relative * scale;
        close(self.plan_makespan, self.simgrid_makespan)
            && self
                .transfers
                .iter()
                .all(|t| close(t.plan_end, t.simgrid_end))
    }

    /// The transfer whose SimGrid end differs most from the plan's, if any.
    pub fn largest_difference(&self) -> Option<(usize, &TransferReplay)> {
        self.transfers
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.difference().abs().total_cmp(&b.1.difference().abs()))
    }
}

/// Why a replay did not produce a report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ReplayError {
    /// The plan cannot be replayed as it is (the reasons, one per line).
    Unreplayable(Vec<String>),
    /// The plan moves more items than a replay simulates.
    TooManyItems {
        /// Items the plan moves.
        items: u128,
        /// [`MAX_REPLAY_ITEMS`].
        limit: u128,
    },
    /// The ring has more processors than a replay simulates.
    TooManyProcessors {
        /// Processors of the ring.
        processors: usize,
        /// [`MAX_REPLAY_PROCESSORS`].
        limit: usize,
    },
    /// The simulation ended with processors blocked forever: the plan cannot be
    /// carried out (items sent that never arrive, or waits in a cycle).
    Deadlock {
        /// Simulated time when nothing could move any more.
        time: f64,
        /// What each blocked actor was waiting for.
        stuck: Vec<String>,
    },
    /// The simulation did not end within the wall-time limit; the worker was killed.
    Timeout {
        /// The limit, in seconds.
        seconds: f64,
    },
    /// The worker process failed (SimGrid refused something, or it crashed).
    Worker {
        /// What happened.
        message: String,
        /// The end of the worker's standard error.
        stderr: String,
    },
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayError::Unreplayable(reasons) => {
                write!(f, "the plan cannot be replayed:")?;
                for r in reasons {
                    write!(f, "\n  {r}")?;
                }
                Ok(())
            }
            ReplayError::TooManyItems { items, limit } => write!(
                f,
                "the plan moves {items} items and a replay simulates each one: at most {limit}"
            ),
            ReplayError::TooManyProcessors { processors, limit } => write!(
                f,
                "the ring has {processors} processors and SimGrid's route table grows as their square: a replay simulates at most {limit}"
            ),
            ReplayError::Deadlock { time, stuck } => {
                write!(
                    f,
                    "deadlock: at t = {time} s the replay cannot go on ({} actor(s) blocked forever):",
                    stuck.len()
                )?;
                for s in stuck {
                    write!(f, "\n  {s}")?;
                }
                Ok(())
            }
            ReplayError::Timeout { seconds } => write!(
                f,
                "the simulation did not end within {seconds} s of wall time and was stopped"
            ),
            ReplayError::Worker { message, stderr } => {
                write!(f, "the SimGrid worker failed: {message}")?;
                if !stderr.trim().is_empty() {
                    write!(f, "\n--- its standard error:\n{}", stderr.trim_end())?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ReplayError {}

#[cfg(test)]
mod tests {
    use super::*;
    use hetbal::Transfer;

    fn t(from: usize, to: usize, items: u64, start: f64, end: f64) -> Transfer {
        Transfer::new(from, to, items, start, end)
    }

    #[test]
    fn a_two_processor_ring_uses_the_link_whose_cost_fits() {
        // Both links join P0 and P1: c_succ 1 and c_pred 3 from P0.
        let ring = RingInstance::bidirectional(&[5, 1], &[3, 3], &[1.0, 2.0], &[3.0, 4.0]).unwrap();
        let net = RingNetwork::from_instance(&ring, 100).unwrap();
        let by_succ = Schedule::new(vec![t(0, 1, 2, 0.0, 2.0)]);
        let job = ReplayJob::new(&ring, &by_succ, &net, NetworkModel::OnePort).unwrap();
        assert_eq!(job.transfers[0].link, net.link(0, true).unwrap());
        let by_pred = Schedule::new(vec![t(0, 1, 2, 0.0, 6.0)]);
        let job = ReplayJob::new(&ring, &by_pred, &net, NetworkModel::OnePort).unwrap();
        assert_eq!(job.transfers[0].link, net.link(0, false).unwrap());
        // Both: SimGrid has one route from p0 to p1.
        let both = Schedule::new(vec![t(0, 1, 1, 0.0, 1.0), t(0, 1, 1, 1.0, 4.0)]);
        let e = ReplayJob::new(&ring, &both, &net, NetworkModel::OnePort).unwrap_err();
        assert!(matches!(e, ReplayError::Unreplayable(_)), "{e}");
    }

    #[test]
    fn start_ups_count_in_choosing_the_link_and_messages_are_bounded() {
        // P0 -> P1: 1 s per item and a start-up of 4 s to the successor, 3.5 s
        // per item without start-up to the predecessor. Two items take 6 s to the
        // successor (2 s without its start-up), 7 s to the predecessor.
        let ring = RingInstance::bidirectional(&[5, 1], &[3, 3], &[1.0, 2.0], &[3.5, 4.0])
            .unwrap()
            .with_startups(&[4.0, 0.0], &[0.0, 0.0])
            .unwrap();
        let net = RingNetwork::from_instance(&ring, 100).unwrap();
        let link = |end: f64| {
            let plan = Schedule::new(vec![t(0, 1, 2, 0.0, end)]);
            let job = ReplayJob::new(&ring, &plan, &net, NetworkModel::OnePort).unwrap();
            job.transfers[0].link
        };
        let (succ, pred) = (net.link(0, true).unwrap(), net.link(0, false).unwrap());
        assert_eq!(
            [link(6.0), link(6.4), link(6.6), link(7.0)],
            [succ, succ, pred, pred]
        );
        // A message holds all its items' bytes: at most MAX_ITEM_BYTES.
        let net = RingNetwork::from_instance(&ring, 1 << 52).unwrap();
        let plan = Schedule::new(vec![t(0, 1, 2, 0.0, 6.0)]);
        let e = ReplayJob::new(&ring, &plan, &net, NetworkModel::OnePort);
        assert!(e.is_ok(), "{e:?}");
        let plan = Schedule::new(vec![t(0, 1, 3, 0.0, 7.0)]);
        let e = ReplayJob::new(&ring, &plan, &net, NetworkModel::OnePort).unwrap_err();
        assert!(e.to_string().contains("one message"), "{e}");
    }

    #[test]
    fn every_neighbour_pair_gets_a_route() {
        let ring = RingInstance::bidirectional(&[3, 1, 1, 1], &[1, 2, 1, 2], &[1.0; 4], &[1.0; 4])
            .unwrap();
        let net = RingNetwork::from_instance(&ring, 100).unwrap();
        let plan = Schedule::new(vec![t(0, 1, 1, 0.0, 1.0), t(0, 3, 1, 1.0, 2.0)]);
        let job = ReplayJob::new(&ring, &plan, &net, NetworkModel::Lv08).unwrap();
        let pairs: Vec<(usize, usize)> = job.routes.iter().map(|&(f, t, _)| (f, t)).collect();
        assert_eq!(
            pairs,
            [
                (0, 1),
                (0, 3),
                (1, 0),
                (1, 2),
                (2, 1),
                (2, 3),
                (3, 0),
                (3, 2)
            ]
        );
        assert_eq!(job.plan_makespan(), 2.0);
        assert_eq!(job.transfers[1].item_start(0), 1.0);
    }

    #[test]
    fn limits_are_checked_before_simulating() {
        let mut loads = vec![1u64; 3];
        loads[0] += 2_000_000;
        let mut targets = vec![1u64; 3];
        targets[1] += 2_000_000;
        let ring = RingInstance::unidirectional(&loads, &targets, &[1.0; 3]).unwrap();
        let net = RingNetwork::from_instance(&ring, 100).unwrap();
        let plan = Schedule::new(vec![t(0, 1, 2_000_000, 0.0, 2e6)]);
        let e = ReplayJob::new(&ring, &plan, &net, NetworkModel::OnePort).unwrap_err();
        assert!(matches!(e, ReplayError::TooManyItems { .. }), "{e}");

        let n = MAX_REPLAY_PROCESSORS + 1;
        let ring = RingInstance::unidirectional(&vec![1; n], &vec![1; n], &vec![1.0; n]).unwrap();
        let net = RingNetwork::from_instance(&ring, 100).unwrap();
        let e =
            ReplayJob::new(&ring, &Schedule::default(), &net, NetworkModel::OnePort).unwrap_err();
        assert!(matches!(e, ReplayError::TooManyProcessors { .. }), "{e}");
    }

    #[test]
    fn reports_compare_ends() {
        let ring = RingInstance::unidirectional(&[3, 1, 1], &[1, 2, 2], &[1.0; 3]).unwrap();
        let net = RingNetwork::from_instance(&ring, 100).unwrap();
        let plan = Schedule::new(vec![t(0, 1, 2, 0.0, 2.0), t(1, 2, 1, 0.0, 1.0)]);
        let job = ReplayJob::new(&ring, &plan, &net, NetworkModel::OnePort).unwrap();
        let outcome = SimOutcome {
            transfer_ends: vec![2.0, 1.5],
            clock: 2.0,
        };
        let report = ReplayReport::new(&job, &outcome);
        assert_eq!((report.plan_makespan, report.simgrid_makespan), (2.0, 2.0));
        assert!(!report.agrees(1e-9));
        let (i, worst) = report.largest_difference().unwrap();
        assert_eq!((i, worst.difference()), (1, 0.5));
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["model"], "oneport");
        assert_eq!(json["transfers"][1]["simgrid_end"], 1.5);
    }
}
