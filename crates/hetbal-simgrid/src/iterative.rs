//! Re-timing a run of the iterative simulator ([`hetbal::iterative`]) under
//! SimGrid: the same iterations, loads and redistributions (what the policy
//! decided), timed by SimGrid's hosts and network instead of the built-in
//! max-model.
//!
//! # What each processor does
//! Processor `p` is two actors on host `p` (speed 1 flop/s), the two halves of
//! its port:
//! * its *worker*, for each iteration `k`: waits until its receiver has what
//!   iteration `k - 1` brought (borders and redistributed items), computes
//!   (`loads[p] * time_per_item[p] / factor_p(k)` flops, so that it takes the
//!   built-in simulator's computing time), then sends `border_items` items to its
//!   successor and then to its predecessor (one message each, one after the
//!   other: one-port sending). After an iteration followed by a redistribution
//!   it waits for every worker (a barrier: all processors must agree on the new
//!   loads, as the policy decided from every processor's speed), then sends its
//!   items of the ring planner's plan at their planned times from the barrier,
//!   as [`crate::simulate`] replays a plan (an item is sent only when held);
//! * its *receiver*, for each iteration: takes the border from its predecessor,
//!   then from its successor, then the items of the redistribution that follows,
//!   if any, one at a time by planned start (one-port receiving).
//!
//! The links are those of [`RingNetwork`]: one per ring edge and direction, an
//! item taking `c * comm_scale` over it (the borders always use both directions;
//! a unidirectional ring's plans use the successor's links only).
//!
//! # Why the times differ from the built-in simulator
//! The built-in simulator ends an iteration when the slowest processor is done
//! (`T_k = max_i ...`) and starts the next one on every processor then; here a
//! processor waits only for the messages it needs: its neighbours' borders
//! (none with `border_items = 0`), and every other worker at a redistribution.
//! Processors that finish early run ahead: without borders, SimGrid's time under
//! `oneport` is at most the built-in one (equal when one processor is the slowest
//! in every iteration and nothing moves), and may be lower. With borders a
//! receiver takes one border at a time, which the built-in model does not count,
//! so either may be larger. Under `CM02` or `LV08` the links' sharing and
//! corrections also count.

use std::sync::{Arc, Mutex};

use hetbal::iterative::{Run, Simulator};
use hetbal::ring::{plan, RingInstance, RingKind};
use hetbal::Schedule;
use serde::{Deserialize, Serialize};

use crate::ffi::{ActorCtx, Mailbox, Semaphore};
use crate::model::NetworkModel;
use crate::network::{RingNetwork, DEFAULT_ITEM_BYTES};
use crate::replay::{JobTransfer, ReplayError, ReplayJob};
use crate::simulate::{ffi_error, next_planned, start_ring, RingEngine};

/// One redistribution of an iterative run, as the workers carry it out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IterativeRedistribution {
    /// It happens after this iteration (from 1).
    pub after_iteration: u32,
    /// The loads before it.
    pub loads: Vec<u64>,
    /// The plan's transfers, times from the redistribution's start (seconds,
    /// communication scale applied).
    pub transfers: Vec<JobTransfer>,
}

/// Everything a worker needs to re-time an iterative run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IterativeJob {
    /// The network model.
    pub model: NetworkModel,
    /// The ring's links (both directions of every edge, communication scale
    /// applied) and item size.
    pub network: RingNetwork,
    /// Items exchanged with each neighbour after every iteration.
    pub border_items: u64,
    /// `compute[k - 1][p]`: seconds processor `p` computes in iteration `k`.
    pub compute: Vec<Vec<f64>>,
    /// The redistributions, in order.
    pub redistributions: Vec<IterativeRedistribution>,
}

/// What the simulation of an iterative run measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IterativeOutcome {
    /// When the last processor was done (its last border received).
    pub time: f64,
}

impl IterativeJob {
    /// The job that re-times `run`, a run of `simulator` (at its current
    /// communication scale), under `model`: the loads of every iteration, and
    /// each redistribution's plan made by the ring planner as the simulator made
    /// it, its times scaled.
    ///
    /// # Errors
    /// [`ReplayError::Unreplayable`] for a ring of 2 processors (SimGrid has one
    /// route per pair of hosts, and the borders need both links), a
    /// communication scale of 0, or a plan that cannot be made;
    /// [`ReplayError::TooManyItems`], [`ReplayError::TooManyProcessors`] as a
    /// replay.
    pub fn from_run(
        simulator: &Simulator,
        run: &Run,
        model: NetworkModel,
    ) -> Result<IterativeJob, ReplayError> {
        let s = simulator.scenario();
        let n = s.initial_loads.len();
        let unreplayable = |why: String| ReplayError::Unreplayable(vec![why]);
        if n < 3 {
            return Err(unreplayable(format!(
                "a ring of {n} processors: SimGrid has one route per pair of hosts, and the borders of a 2-processor ring need both links; use rings of 3 or more"
            )));
        }
        let scale = s.comm_scale;
        if !(scale.is_finite() && scale > 0.0) {
            return Err(unreplayable(format!(
                "communication scale {scale}: SimGrid's links need a finite scale > 0"
            )));
        }
        let scaled = |c: &[f64]| c.iter().map(|&c| c * scale).collect::<Vec<f64>>();
        let (c_succ, c_pred) = (scaled(&s.c_succ), scaled(&s.c_pred));
        let fail = |e: &dyn std::fmt::Display| unreplayable(e.to_string());
        let ring =
            RingInstance::bidirectional(&s.initial_loads, &s.initial_loads, &c_succ, &c_pred)
                .map_err(|e| fail(&e))?;
        let network =
            RingNetwork::from_instance(&ring, DEFAULT_ITEM_BYTES).map_err(|e| fail(&e))?;

        let mut loads = s.initial_loads.clone();
        let mut moves = run.redistributions.iter().peekable();
        let mut compute = Vec::with_capacity(s.iterations as usize);
        let mut redistributions = Vec::with_capacity(run.redistributions.len());
        for k in 1..=s.iterations {
            let times = simulator.times_per_item(k);
            compute.push(
                loads
                    .iter()
                    .zip(times)
                    .map(|(&l, &t)| l as f64 * t)
                    .collect(),
            );
            let Some(r) = moves.next_if(|r| r.after_iteration == k) else {
                continue;
            };
            // The plan the simulator priced: made at unit scale, times scaled.
            let make = |c_succ: &[f64], c_pred: &[f64]| match s.kind {
                RingKind::Unidirectional => RingInstance::unidirectional(&loads, &r.loads, c_succ),
                RingKind::Bidirectional => {
                    RingInstance::bidirectional(&loads, &r.loads, c_succ, c_pred)
                }
            };
            let unit = make(&s.c_succ, &s.c_pred).map_err(|e| fail(&e))?;
            let mut schedule: Schedule = plan(&unit, None).map_err(|e| fail(&e))?.schedule();
            for t in &mut schedule.transfers {
                t.start *= scale;
                t.end *= scale;
                if let Some(period) = &mut t.period {
                    *period *= scale;
                }
            }
            let at_scale = make(&c_succ, &c_pred).map_err(|e| fail(&e))?;
            let job = ReplayJob::new(&at_scale, &schedule, &network, model)?;
            redistributions.push(IterativeRedistribution {
                after_iteration: k,
                loads: std::mem::replace(&mut loads, r.loads.clone()),
                transfers: job.transfers,
            });
        }
        Ok(IterativeJob {
            model,
            network,
            border_items: s.border_items,
            compute,
            redistributions,
        })
    }

    /// The SimGrid platform XML of the job: every link has its own route.
    pub fn platform_xml(&self) -> String {
        let routes: Vec<(usize, usize, usize)> = self
            .network
            .links
            .iter()
            .enumerate()
            .map(|(k, l)| (l.from, l.to, k))
            .collect();
        self.network.platform_xml(&routes, self.model)
    }
}

/// One item a worker sends in a redistribution.
#[derive(Clone, Copy)]
struct Item {
    transfer: usize,
    link: usize,
    planned: f64,
}

/// What the actors share: barrier counts and what each actor waits for.
struct Shared {
    /// Workers arrived at each redistribution's barrier.
    arrived: Vec<usize>,
    /// Per actor (worker `2p`, receiver `2p + 1`): what it waits for, or `None`
    /// once done.
    waiting: Vec<Option<String>>,
}

fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

/// Per processor, the semaphores and mailboxes its actors use.
struct Processor {
    /// Released by the receiver once per iteration but the last, when what it
    /// brought has arrived.
    ready: Semaphore,
    /// Per redistribution: one token per item held that is to be sent.
    holdings: Vec<Semaphore>,
    /// Per redistribution: the items it sends, in sending order.
    sends: Vec<Vec<Item>>,
    /// Per redistribution: its incoming links and their items in sending order.
    incoming: Vec<Vec<(usize, Vec<Item>)>>,
}

/// Simulates an iterative job in this process (one simulation per process: call
/// it once, in a worker).
///
/// # Errors
/// [`ReplayError::Deadlock`] when actors are left blocked;
/// [`ReplayError::Worker`] when SimGrid was already used in this process.
pub fn simulate_iterative(job: &IterativeJob) -> Result<IterativeOutcome, ReplayError> {
    let n = job.network.processors;
    let links = &job.network.links;
    let link_of = |from: usize, to_succ: bool| {
        job.network
            .link(from, to_succ)
            .ok_or_else(|| ReplayError::Worker {
                message: format!("the network has no link from {from} (to_succ {to_succ})"),
                stderr: String::new(),
            })
    };
    let RingEngine {
        mut engine,
        hosts,
        mailboxes,
    } = start_ring(&job.model.settings(), &job.platform_xml(), n, links.len())?;
    let redistributions = job.redistributions.len();
    let gates: Vec<Semaphore> = (0..redistributions)
        .map(|_| engine.semaphore(0))
        .collect::<Result<_, _>>()
        .map_err(ffi_error)?;
    let mut processors = Vec::with_capacity(n);
    for _ in 0..n {
        processors.push(Processor {
            ready: engine.semaphore(0).map_err(ffi_error)?,
            holdings: Vec::with_capacity(redistributions),
            sends: vec![Vec::new(); redistributions],
            incoming: vec![Vec::new(); redistributions],
        });
    }
    for (r, redistribution) in job.redistributions.iter().enumerate() {
        let mut order: Vec<usize> = (0..redistribution.transfers.len()).collect();
        let transfers = &redistribution.transfers;
        order.sort_by(|&a, &b| {
            transfers[a]
                .start
                .total_cmp(&transfers[b].start)
                .then(a.cmp(&b))
        });
        let mut on_link: Vec<Vec<Item>> = vec![Vec::new(); links.len()];
        for &t in &order {
            let transfer = &transfers[t];
            for k in 0..transfer.items {
                let item = Item {
                    transfer: t,
                    link: transfer.link,
                    planned: transfer.item_start(k),
                };
                processors[transfer.from].sends[r].push(item);
                on_link[transfer.link].push(item);
            }
        }
        for (l, items) in on_link.into_iter().enumerate() {
            if !items.is_empty() {
                processors[links[l].to].incoming[r].push((l, items));
            }
        }
        for (p, processor) in processors.iter_mut().enumerate() {
            let tokens = redistribution.loads[p].min(processor.sends[r].len() as u64);
            processor
                .holdings
                .push(engine.semaphore(tokens).map_err(ffi_error)?);
        }
    }

    let shared = Arc::new(Mutex::new(Shared {
        arrived: vec![0; redistributions],
        waiting: vec![Some("not started".to_string()); 2 * n],
    }));
    let job = Arc::new(job.clone());
    for (p, processor) in processors.into_iter().enumerate() {
        let succ = (p + 1) % n;
        let pred = (p + n - 1) % n;
        let worker = Worker {
            p,
            n,
            to_succ: link_of(p, true)?,
            to_pred: link_of(p, false)?,
            ready: processor.ready,
            holdings: processor.holdings.clone(),
            sends: processor.sends,
        };
        let receiver = Receiver {
            p,
            from_pred: link_of(pred, true)?,
            from_succ: link_of(succ, false)?,
            ready: processor.ready,
            holdings: processor.holdings,
            incoming: processor.incoming,
        };
        let (job_w, shared_w, boxes_w, gates_w) = (
            Arc::clone(&job),
            Arc::clone(&shared),
            mailboxes.clone(),
            gates.clone(),
        );
        engine
            .spawn_actor(&format!("P{p}-work"), hosts[p], move |ctx| {
                worker.run(ctx, &job_w, &shared_w, &boxes_w, &gates_w)
            })
            .map_err(ffi_error)?;
        let (job_r, shared_r, boxes_r) = (Arc::clone(&job), Arc::clone(&shared), mailboxes.clone());
        engine
            .spawn_actor(&format!("P{p}-receive"), hosts[p], move |ctx| {
                receiver.run(ctx, &job_r, &shared_r, &boxes_r)
            })
            .map_err(ffi_error)?;
    }
    let clock = engine.run();
    let shared = lock(&shared);
    let stuck: Vec<String> = shared.waiting.iter().flatten().cloned().collect();
    if !stuck.is_empty() {
        return Err(ReplayError::Deadlock { time: clock, stuck });
    }
    Ok(IterativeOutcome { time: clock })
}

/// The computing and sending half of processor `p`.
struct Worker {
    p: usize,
    n: usize,
    to_succ: usize,
    to_pred: usize,
    ready: Semaphore,
    holdings: Vec<Semaphore>,
    sends: Vec<Vec<Item>>,
}

impl Worker {
    fn run(
        &self,
        ctx: &ActorCtx,
        job: &IterativeJob,
        shared: &Mutex<Shared>,
        mailboxes: &[Mailbox],
        gates: &[Semaphore],
    ) {
        let (p, slot) = (self.p, 2 * self.p);
        let say = |what: String| lock(shared).waiting[slot] = Some(what);
        let border_bytes = job.border_items.saturating_mul(job.network.item_bytes);
        let mut next = 0;
        for (k, compute) in (1u32..).zip(&job.compute) {
            if k > 1 {
                say(format!("P{p} waits for what iteration {} brings", k - 1));
                ctx.acquire(self.ready);
            }
            if compute[p] > 0.0 {
                ctx.execute(compute[p]);
            }
            if border_bytes > 0 {
                say(format!("P{p} sends its borders of iteration {k}"));
                for link in [self.to_succ, self.to_pred] {
                    if let Err(e) = ctx.put(mailboxes[link], border_bytes) {
                        say(format!("P{p}: {e}"));
                        return;
                    }
                }
            }
            let redistributes = job
                .redistributions
                .get(next)
                .is_some_and(|r| r.after_iteration == k);
            if !redistributes {
                continue;
            }
            let index = next;
            next += 1;
            // The barrier: the last worker to arrive opens the gate for the others.
            say(format!(
                "P{p} waits for every processor before the redistribution after iteration {k}"
            ));
            let last = {
                let mut s = lock(shared);
                s.arrived[index] += 1;
                s.arrived[index] == self.n
            };
            if last {
                for _ in 1..self.n {
                    ctx.release(gates[index]);
                }
            } else {
                ctx.acquire(gates[index]);
            }
            let start = ctx.clock();
            for item in &self.sends[index] {
                let at = start + item.planned;
                if ctx.clock() < at {
                    ctx.sleep_until(at);
                }
                say(format!(
                    "P{p} must send an item of transfer {} after iteration {k} but holds none",
                    item.transfer
                ));
                ctx.acquire(self.holdings[index]);
                say(format!(
                    "P{p} sends an item of transfer {} after iteration {k}",
                    item.transfer
                ));
                if let Err(e) = ctx.put(mailboxes[item.link], job.network.item_bytes) {
                    say(format!("P{p}: {e}"));
                    return;
                }
            }
        }
        lock(shared).waiting[slot] = None;
    }
}

/// The receiving half of processor `p`.
struct Receiver {
    p: usize,
    from_pred: usize,
    from_succ: usize,
    ready: Semaphore,
    holdings: Vec<Semaphore>,
    incoming: Vec<Vec<(usize, Vec<Item>)>>,
}

impl Receiver {
    fn run(
        &self,
        ctx: &ActorCtx,
        job: &IterativeJob,
        shared: &Mutex<Shared>,
        mailboxes: &[Mailbox],
    ) {
        let (p, slot) = (self.p, 2 * self.p + 1);
        let say = |what: String| lock(shared).waiting[slot] = Some(what);
        let iterations = job.compute.len() as u32;
        let mut next = 0;
        for k in 1..=iterations {
            if job.border_items > 0 {
                say(format!("P{p} waits for its borders of iteration {k}"));
                ctx.get(mailboxes[self.from_pred]);
                ctx.get(mailboxes[self.from_succ]);
            }
            if job
                .redistributions
                .get(next)
                .is_some_and(|r| r.after_iteration == k)
            {
                let incoming = &self.incoming[next];
                let mut taken = vec![0usize; incoming.len()];
                while let Some((i, item)) =
                    next_planned(incoming, &taken, |s| (s.planned, s.transfer))
                {
                    say(format!(
                        "P{p} waits for an item of transfer {} after iteration {k}",
                        item.transfer
                    ));
                    ctx.get(mailboxes[incoming[i].0]);
                    taken[i] += 1;
                    ctx.release(self.holdings[next]);
                }
                next += 1;
            }
            if k < iterations {
                ctx.release(self.ready);
            }
        }
        lock(shared).waiting[slot] = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetbal::iterative::{Policy, Scenario, SpeedProfile};

    fn simulator(n: usize) -> Simulator {
        let mut profiles = vec![SpeedProfile::constant(); n];
        profiles[1] = SpeedProfile::new(vec![(1.0, 0.5)], None).unwrap();
        Simulator::new(Scenario {
            kind: RingKind::Bidirectional,
            time_per_item: vec![1.0; n],
            c_succ: vec![1.0; n],
            c_pred: vec![2.0; n],
            border_items: 1,
            iterations: 4,
            initial_loads: vec![4; n],
            profiles,
            comm_scale: 3.0,
        })
        .unwrap()
    }

    #[test]
    fn a_job_carries_the_runs_loads_and_plans() {
        let mut sim = simulator(3);
        let run = sim.run(&Policy::At(vec![2])).unwrap();
        assert_eq!(run.redistributions.len(), 1);
        let job = IterativeJob::from_run(&sim, &run, NetworkModel::OnePort).unwrap();
        // P1 computes at half speed from iteration 2; the loads change after 2.
        let after = &run.redistributions[0].loads;
        assert_eq!(job.compute[0], [4.0, 4.0, 4.0]);
        assert_eq!(job.compute[1], [4.0, 8.0, 4.0]);
        assert_eq!(job.compute[2][1], after[1] as f64 * 2.0);
        let r = &job.redistributions[0];
        assert_eq!((r.after_iteration, r.loads.clone()), (2, vec![4, 4, 4]));
        // The plan's makespan, scaled, is what the simulator charged.
        let makespan = r.transfers.iter().map(|t| t.end).fold(0.0, f64::max);
        assert!((makespan - run.redistributions[0].cost).abs() <= 1e-12 * makespan);
        // Both directions of every edge; an item takes c * comm_scale.
        assert_eq!(job.network.links.len(), 6);
        let succ = job.network.link(0, true).unwrap();
        let pred = job.network.link(0, false).unwrap();
        let item = |l: usize| job.network.links[l].item_time(job.network.item_bytes);
        assert_eq!((item(succ), item(pred)), (3.0, 6.0));
        assert!(job.platform_xml().contains("<route src=\"p0\" dst=\"p2\""));
    }

    #[test]
    fn rings_of_two_are_refused() {
        let mut sim = simulator(2);
        let run = sim.run(&Policy::Never).unwrap();
        let e = IterativeJob::from_run(&sim, &run, NetworkModel::OnePort).unwrap_err();
        assert!(e.to_string().contains("3 or more"), "{e}");
    }
}
