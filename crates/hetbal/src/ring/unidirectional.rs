//! Optimal plans on unidirectional rings: the paper's Algorithms 1 and 2.

use crate::ring::{unidirectional_flows, RingInstance};
use crate::schedule::{Schedule, Transfer};

/// The exact lower bound of a unidirectional ring: `max_i f_i * c_succ[i]` with the
/// smallest flows `f` ([`unidirectional_flows`]).
///
/// Every unidirectional schedule sends at least `f_i` items over link (i, i+1), one
/// at a time; Algorithms 1 and 2 meet the bound (the paper's Theorems 1 and 2, in the
/// exact flow form of model.md), so this is the optimal makespan.
///
/// Complexity: O(n) time and space.
///
/// # Example
/// ```
/// use hetbal::ring::{unidirectional_lower_bound, RingInstance};
/// //  P0 --1.0--> P1 --3.0--> P2 --1.0--> P0; P0 sends 2 items, P1 forwards 1.
/// let ring = RingInstance::unidirectional(&[4, 1, 1], &[2, 2, 2], &[1.0, 3.0, 1.0]).unwrap();
/// assert_eq!(unidirectional_lower_bound(&ring), 3.0);
/// ```
pub fn unidirectional_lower_bound(instance: &RingInstance) -> f64 {
    lower_bound_of_flows(instance, &unidirectional_flows(instance))
}

pub(crate) fn lower_bound_of_flows(instance: &RingInstance, flows: &[u64]) -> f64 {
    flows
        .iter()
        .zip(instance.c_succ())
        .map(|(&f, &c)| f as f64 * c)
        .fold(0.0, f64::max)
}

/// The paper's Algorithm 1 for homogeneous unidirectional rings: processor i sends its
/// `f_i` items to its successor back to back during `[0, f_i * c)`.
///
/// With equal costs this is also the as-soon-as-possible schedule: the paper's
/// Lemma 3 shows that every processor always holds the item it must send.
/// Only meaningful when all `c_succ` are equal; on other rings the schedule may send
/// items not yet held (the validator says so).
///
/// Complexity: O(n) time and space.
///
/// # Example
/// ```
/// use hetbal::ring::{algorithm1, RingInstance};
/// let ring = RingInstance::unidirectional(&[4, 1, 1], &[2, 2, 2], &[1.0; 3]).unwrap();
/// let schedule = algorithm1(&ring);
/// assert_eq!(schedule.transfers.len(), 2);
/// assert_eq!(schedule.makespan(), 2.0);
/// ```
pub fn algorithm1(instance: &RingInstance) -> Schedule {
    let flows = unidirectional_flows(instance);
    let transfers = flows
        .iter()
        .enumerate()
        .filter(|&(_, &f)| f > 0)
        .map(|(i, &f)| Transfer {
            from: i,
            to: instance.succ(i),
            items: f,
            start: 0.0,
            end: f as f64 * instance.c_succ()[i],
        })
        .collect();
    Schedule::new(transfers)
}

/// Sends of one processor: `count` items, the k-th starting at `start + k * period`
/// (`period >= cost`; `period == cost` means back to back).
#[derive(Clone, Copy, Debug)]
struct Train {
    start: f64,
    count: u64,
    period: f64,
}

impl Train {
    /// Start of the last send.
    fn last_start(&self) -> f64 {
        self.start + (self.count - 1) as f64 * self.period
    }
}

/// Appends a train, merging it with the previous one when it continues it exactly.
fn push_train(trains: &mut Vec<Train>, t: Train) {
    if t.count == 0 {
        return;
    }
    if let Some(last) = trains.last_mut() {
        let next = last.start + last.count as f64 * last.period;
        if last.period == t.period && (next - t.start).abs() <= 1e-12 * next.abs().max(1.0) {
            last.count += t.count;
            return;
        }
    }
    trains.push(t);
}

/// The paper's Algorithm 2 for heterogeneous unidirectional rings: processor i sends
/// its `f_i` items to its successor one by one, each as soon as the link is free and
/// the processor holds an item. This is the true as-soon-as-possible schedule: where
/// a processor waits for items to forward, the schedule has gaps, and the batches of
/// the schedule show them.
///
/// The schedule is computed without expanding items: each processor's sends form
/// "trains" (arithmetic sequences of send times), built from its predecessor's
/// trains in closed form. An incoming train of period `p` fed to a link of cost `c`
/// becomes one back-to-back train when `p <= c`, and otherwise a back-to-back part
/// (while a backlog lasts) followed by a train at the arrival period `p`, in which
/// every item is its own transfer. The walk starts at the processor after
/// `argmin S`, which receives nothing. Lemma 5 of the paper shows the makespan
/// equals the lower bound; the plan measures it on the schedule.
///
/// # Complexity
/// O(n + b) time, where b is the number of batches in the output (at least one per
/// sending processor; one per item where items trickle in slower than they leave),
/// and O(b) space.
///
/// # Example
/// ```
/// use hetbal::ring::{algorithm2, RingInstance};
/// // P0 (4 items) --2.0--> P1 (1 item) --1.0--> P2 (2 items) --1.0--> P0.
/// // P0 sends 3 items, arriving at t = 2, 4, 6. P1 passes 3 items on, but its outgoing
/// // link is faster: it sends its own item at 0, then each item as it arrives.
/// let ring = RingInstance::unidirectional(&[4, 1, 2], &[1, 1, 5], &[2.0, 1.0, 1.0]).unwrap();
/// let schedule = algorithm2(&ring);
/// let p1: Vec<(u64, f64)> = schedule.transfers.iter()
///     .filter(|t| t.from == 1).map(|t| (t.items, t.start)).collect();
/// assert_eq!(p1, vec![(1, 0.0), (1, 2.0), (1, 4.0)]);
/// assert_eq!(schedule.makespan(), 6.0);
/// ```
pub fn algorithm2(instance: &RingInstance) -> Schedule {
    let n = instance.len();
    let flows = unidirectional_flows(instance);
    // The processor after a zero flow receives nothing: start the walk there.
    let zero = flows.iter().position(|&f| f == 0).unwrap_or(0);
    let first = instance.succ(zero);
    let mut transfers = Vec::new();
    let mut incoming: Vec<Train> = Vec::new();
    let mut incoming_cost = 0.0;
    let mut i = first;
    for _ in 0..n {
        let f = flows[i];
        let c = instance.c_succ()[i];
        let mut out: Vec<Train> = Vec::new();
        let own = f.min(instance.loads()[i]);
        push_train(
            &mut out,
            Train {
                start: 0.0,
                count: own,
                period: c,
            },
        );
        let mut free = own as f64 * c; // when the link is next free
        let mut remaining = f - own;
        for train in &incoming {
            if remaining == 0 {
                break;
            }
            let m = train.count.min(remaining);
            remaining -= m;
            let a = train.start + incoming_cost; // arrival of the train's first item
            let p = train.period;
            if p <= c {
                // Items arrive at least as fast as they leave: one back-to-back run.
                let start = free.max(a);
                push_train(
                    &mut out,
                    Train {
                        start,
                        count: m,
                        period: c,
                    },
                );
                free = start + m as f64 * c;
            } else {
                // Send j (0-based) starts at max(free + j*c, a + j*p): back to back while
                // the backlog lasts (j <= jmax), then at each arrival.
                let backlog = if free <= a {
                    0
                } else {
                    let mut j = ((free - a) / (p - c)).floor().min((m - 1) as f64) as u64;
                    while j > 0 && free + j as f64 * c < a + j as f64 * p {
                        j -= 1;
                    }
                    while j + 1 < m && free + (j + 1) as f64 * c >= a + (j + 1) as f64 * p {
                        j += 1;
                    }
                    j + 1
                };
                push_train(
                    &mut out,
                    Train {
                        start: free,
                        count: backlog,
                        period: c,
                    },
                );
                push_train(
                    &mut out,
                    Train {
                        start: a + backlog as f64 * p,
                        count: m - backlog,
                        period: p,
                    },
                );
                free = out.last().map_or(free, |t| t.last_start() + c);
            }
        }
        debug_assert_eq!(remaining, 0, "the predecessor sends enough to forward");
        let to = instance.succ(i);
        for t in &out {
            if t.period == c {
                transfers.push(Transfer {
                    from: i,
                    to,
                    items: t.count,
                    start: t.start,
                    end: t.start + t.count as f64 * c,
                });
            } else {
                for k in 0..t.count {
                    let start = t.start + k as f64 * t.period;
                    transfers.push(Transfer {
                        from: i,
                        to,
                        items: 1,
                        start,
                        end: start + c,
                    });
                }
            }
        }
        incoming = out;
        incoming_cost = c;
        i = instance.succ(i);
    }
    Schedule::new(transfers)
}
