//! The step time of a ring and the shares of work (model.md section 3).

use super::MappingError;
use crate::platform::Platform;
use crate::ring::OrderedTime;

/// The shares of one ring and the step time they give.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Share of the work of each processor, in ring order (each >= 0, sum 1).
    pub shares: Vec<f64>,
    /// `max_i shares[i]*D_w*w_i + D_c*(c_{i,pred} + c_{i,succ})`.
    pub t_step: f64,
}

/// `c_{i,pred(i)} + c_{i,succ(i)}` for every position of a ring (0 for a ring of one
/// processor, which exchanges nothing; `2 c_{ij}` on a ring of two).
pub(crate) fn ring_comm(platform: &Platform, ring: &[usize]) -> Vec<f64> {
    let q = ring.len();
    if q < 2 {
        return vec![0.0; q];
    }
    (0..q)
        .map(|k| {
            let i = ring[k];
            platform.cost(i, ring[(k + q - 1) % q]) + platform.cost(i, ring[(k + 1) % q])
        })
        .collect()
}

pub(crate) fn check_ring(platform: &Platform, ring: &[usize]) -> Result<(), MappingError> {
    if ring.is_empty() {
        return Err(MappingError::EmptyRing);
    }
    let mut seen = vec![false; platform.len()];
    for &i in ring {
        if i >= platform.len() {
            return Err(MappingError::UnknownProcessor { index: i });
        }
        if seen[i] {
            return Err(MappingError::RepeatedProcessor {
                name: platform.name(i).to_string(),
            });
        }
        seen[i] = true;
    }
    Ok(())
}

pub(crate) fn check_sizes(work: f64, border: f64) -> Result<(), MappingError> {
    if !(work.is_finite() && work > 0.0) {
        return Err(MappingError::InvalidWork { value: work });
    }
    if !(border.is_finite() && border >= 0.0) {
        return Err(MappingError::InvalidBorder { value: border });
    }
    Ok(())
}

/// The argument checks of a ring's step time: [`check_ring`] then [`check_sizes`].
pub(crate) fn check_step(
    platform: &Platform,
    ring: &[usize],
    work: f64,
    border: f64,
) -> Result<(), MappingError> {
    check_ring(platform, ring)?;
    check_sizes(work, border)
}

/// [`check_step`], then the ring's [`ring_comm`], refused with
/// [`MappingError::NoRoute`] when the ring uses a pair without a route.
fn routed_comm(
    platform: &Platform,
    ring: &[usize],
    work: f64,
    border: f64,
) -> Result<Vec<f64>, MappingError> {
    check_step(platform, ring, work, border)?;
    let comm = ring_comm(platform, ring);
    no_route(platform, ring, &comm)?;
    Ok(comm)
}

/// The step time of a ring for given shares, evaluated directly from its
/// definition: `max_i shares[i]*D_w*w_i + D_c*(c_{i,pred(i)} + c_{i,succ(i)})`.
///
/// # Arguments
/// * `ring`: processor indices in ring order; `shares`: one per position;
/// * `work` = D_w, `border` = D_c.
///
/// # Errors
/// [`MappingError::EmptyRing`], [`MappingError::UnknownProcessor`],
/// [`MappingError::RepeatedProcessor`], [`MappingError::InvalidWork`],
/// [`MappingError::InvalidBorder`], [`MappingError::SharesMismatch`] (wrong length).
///
/// Complexity: O(q).
///
/// ```
/// use hetbal::mapping::t_step;
/// use hetbal::platform::{Platform, Processor};
/// // A (w=1) <-> B (w=2), 0.5 per unit of data each way.
/// let p = Platform::from_matrix(vec![Processor::new("A", 1.0), Processor::new("B", 2.0)],
///                               vec![vec![0.0, 0.5], vec![0.5, 0.0]]).unwrap();
/// // A: 0.5*10*1 + 2*(0.5+0.5) = 7; B: 0.5*10*2 + 2 = 12.
/// assert_eq!(t_step(&p, &[0, 1], &[0.5, 0.5], 10.0, 2.0).unwrap(), 12.0);
/// ```
pub fn t_step(
    platform: &Platform,
    ring: &[usize],
    shares: &[f64],
    work: f64,
    border: f64,
) -> Result<f64, MappingError> {
    check_step(platform, ring, work, border)?;
    if shares.len() != ring.len() {
        return Err(MappingError::SharesMismatch {
            shares: shares.len(),
            ring: ring.len(),
        });
    }
    let comm = ring_comm(platform, ring);
    Ok(ring
        .iter()
        .zip(shares)
        .zip(&comm)
        .map(|((&i, &a), &c)| a * work * platform.w(i) + border * c)
        .fold(f64::NEG_INFINITY, f64::max))
}

/// The closed form "all processors end together" of the slides for one ring:
/// `T = (D_w + D_c * sum_i comm_i / w_i) / sum_i 1/w_i` and
/// `share_i = (T - D_c*comm_i) / (D_w*w_i)`, with
/// `comm_i = c_{i,pred(i)} + c_{i,succ(i)}`.
///
/// # Errors
/// [`MappingError::NegativeShare`] when a processor's border exchanges alone last
/// longer than `T` (its share would be negative: the ring is not valid as is); the
/// argument errors of [`t_step`]; [`MappingError::NoRoute`] when the ring uses a
/// pair without a route.
///
/// Complexity: O(q).
///
/// ```
/// use hetbal::mapping::{closed_form_shares, MappingError};
/// use hetbal::platform::{Platform, Processor};
/// let p = Platform::from_matrix(vec![Processor::new("A", 1.0), Processor::new("B", 2.0)],
///                               vec![vec![0.0, 0.5], vec![0.5, 0.0]]).unwrap();
/// let step = closed_form_shares(&p, &[0, 1], 10.0, 2.0).unwrap();
/// // T = (10 + 2*(1/1 + 1/2)) / (1 + 1/2) = 26/3; both end then.
/// assert!((step.t_step - 26.0 / 3.0).abs() < 1e-12);
/// assert!((step.shares[0] - 2.0 / 3.0).abs() < 1e-12);
/// // B sends slowly (5 per unit of data): with D_c = 2 its exchanges alone take
/// // 2*(5+5) = 20 > T = (10 + 2*(1/1 + 10/2)) / 1.5 = 14.67.
/// let slow = Platform::from_matrix(vec![Processor::new("A", 1.0), Processor::new("B", 2.0)],
///                                  vec![vec![0.0, 0.5], vec![5.0, 0.0]]).unwrap();
/// assert!(matches!(closed_form_shares(&slow, &[0, 1], 10.0, 2.0),
///                  Err(MappingError::NegativeShare { .. })));
/// ```
pub fn closed_form_shares(
    platform: &Platform,
    ring: &[usize],
    work: f64,
    border: f64,
) -> Result<Step, MappingError> {
    let comm = routed_comm(platform, ring, work, border)?;
    let h: f64 = ring.iter().map(|&i| 1.0 / platform.w(i)).sum();
    let s: f64 = ring
        .iter()
        .zip(&comm)
        .map(|(&i, &c)| c / platform.w(i))
        .sum();
    let t = (work + border * s) / h;
    let mut shares = Vec::with_capacity(ring.len());
    for (&i, &c) in ring.iter().zip(&comm) {
        let a = (t - border * c) / (work * platform.w(i));
        if a < 0.0 {
            return Err(MappingError::NegativeShare {
                name: platform.name(i).to_string(),
                share: a,
            });
        }
        shares.push(a);
    }
    Ok(Step { shares, t_step: t })
}

fn no_route(platform: &Platform, ring: &[usize], comm: &[f64]) -> Result<(), MappingError> {
    if let Some(k) = comm.iter().position(|c| !c.is_finite()) {
        let q = ring.len();
        let i = ring[k];
        let j = if platform.cost(i, ring[(k + 1) % q]).is_finite() {
            ring[(k + q - 1) % q]
        } else {
            ring[(k + 1) % q]
        };
        return Err(MappingError::NoRoute {
            from: platform.name(i).to_string(),
            to: platform.name(j).to_string(),
        });
    }
    Ok(())
}

/// The best shares for one ring: minimise the step time over all shares >= 0 that
/// sum to 1. This is the closed form of [`closed_form_shares`] when that one is
/// valid; otherwise the processors whose exchanges alone outlast the level get no
/// work (share 0) and the others end together ("water filling").
///
/// # Errors
/// The argument errors of [`t_step`]; [`MappingError::NoRoute`];
/// [`MappingError::TimesOverflow`] when the step time or a share overflows f64.
///
/// Complexity: O(q log q).
///
/// ```
/// use hetbal::mapping::{optimal_shares, t_step};
/// use hetbal::platform::{Platform, Processor};
/// // B sends slowly: its exchanges alone take D_c*(5+5) = 20 s, more than A needs
/// // for all the work (10 s + 2 s of exchanges). B gets no work; T_step = 20.
/// let p = Platform::from_matrix(vec![Processor::new("A", 1.0), Processor::new("B", 2.0)],
///                               vec![vec![0.0, 0.5], vec![5.0, 0.0]]).unwrap();
/// let step = optimal_shares(&p, &[0, 1], 10.0, 2.0).unwrap();
/// assert_eq!(step.shares, vec![1.0, 0.0]);
/// assert_eq!(step.t_step, 20.0);
/// assert_eq!(t_step(&p, &[0, 1], &step.shares, 10.0, 2.0).unwrap(), 20.0);
/// ```
pub fn optimal_shares(
    platform: &Platform,
    ring: &[usize],
    work: f64,
    border: f64,
) -> Result<Step, MappingError> {
    let comm = routed_comm(platform, ring, work, border)?;
    let w: Vec<f64> = ring.iter().map(|&i| platform.w(i)).collect();
    let step = water_fill(&w, &comm, work, border);
    if step.t_step.is_finite() && step.shares.iter().all(|a| a.is_finite()) {
        return Ok(step);
    }
    // The processor whose times overflow, else the ring's first.
    let at = (0..ring.len())
        .find(|&k| !(work * w[k] + border * comm[k]).is_finite())
        .unwrap_or(0);
    Err(MappingError::TimesOverflow {
        processor: platform.name(ring[at]).to_string(),
    })
}

/// Water filling on floors `border*comm_i` with slopes `work*w_i`.
pub(crate) fn water_fill(w: &[f64], comm: &[f64], work: f64, border: f64) -> Step {
    let q = w.len();
    let floor: Vec<f64> = comm.iter().map(|&c| border * c).collect();
    let mut order: Vec<usize> = (0..q).collect();
    order.sort_by(|&a, &b| floor[a].total_cmp(&floor[b]));
    let (mut num, mut den) = (work, 0.0);
    let mut level = f64::INFINITY;
    for (k, &i) in order.iter().enumerate() {
        num += floor[i] / w[i];
        den += 1.0 / w[i];
        let l = num / den;
        let next = order.get(k + 1).map_or(f64::INFINITY, |&j| floor[j]);
        if l <= next {
            level = l;
            break;
        }
    }
    let max_floor = floor.iter().copied().fold(0.0, f64::max);
    let shares: Vec<f64> = (0..q)
        .map(|i| ((level - floor[i]) / (work * w[i])).max(0.0))
        .collect();
    // Renormalise against rounding so that the shares sum to 1.
    let total: f64 = shares.iter().sum();
    let shares: Vec<f64> = shares.iter().map(|a| a / total).collect();
    let t = (0..q)
        .map(|i| shares[i] * work * w[i] + floor[i])
        .fold(max_floor, f64::max);
    Step { shares, t_step: t }
}

/// The step time of the "fully homogeneous network" of the slides (every link costs
/// `c`), processors chosen optimally: `min(D_w*w_min, D_w/(sum_i 1/w_i) + 2*D_c*c)`
/// (the fastest processor alone, or all of them ending together).
///
/// # Errors
/// [`MappingError::InvalidWork`], [`MappingError::InvalidBorder`],
/// [`MappingError::NoProcessors`] (empty `w`), [`MappingError::InvalidCost`]
/// (a `w_i` or `c` that is not finite and > 0, resp. >= 0).
///
/// Complexity: O(p).
///
/// ```
/// use hetbal::mapping::homogeneous_t_step;
/// // Three processors (w = 1, 2, 2): together D_w/2 + 2*D_c*c.
/// assert_eq!(homogeneous_t_step(&[1.0, 2.0, 2.0], 0.5, 10.0, 1.0).unwrap(), 6.0);
/// // A slow network: the fastest alone.
/// assert_eq!(homogeneous_t_step(&[1.0, 2.0, 2.0], 9.0, 10.0, 1.0).unwrap(), 10.0);
/// ```
pub fn homogeneous_t_step(w: &[f64], c: f64, work: f64, border: f64) -> Result<f64, MappingError> {
    check_sizes(work, border)?;
    if w.is_empty() {
        return Err(MappingError::NoProcessors);
    }
    if !(c.is_finite() && c >= 0.0) || w.iter().any(|&x| !(x.is_finite() && x > 0.0)) {
        return Err(MappingError::InvalidCost);
    }
    let w_min = w.iter().copied().fold(f64::INFINITY, f64::min);
    let h: f64 = w.iter().map(|x| 1.0 / x).sum();
    let alone = work * w_min;
    Ok(if w.len() == 1 {
        alone
    } else {
        alone.min(work / h + 2.0 * border * c)
    })
}

/// Whole item counts for a ring: `items` items of `work / items` units of work
/// each, placed to minimise `max_i n_i*(work/items)*w_i + D_c*comm_i`.
///
/// # Returns
/// The counts in ring order (summing to `items`) and the step time they give.
///
/// # Errors
/// The argument errors of [`t_step`]; [`MappingError::NoRoute`];
/// [`MappingError::TimesOverflow`] (from [`optimal_shares`]).
///
/// Complexity: O(q log q) (the items are placed from the floors of the real shares,
/// the last few one at a time).
///
/// ```
/// use hetbal::mapping::item_counts;
/// use hetbal::platform::{Platform, Processor};
/// let p = Platform::from_matrix(vec![Processor::new("A", 1.0), Processor::new("B", 2.0)],
///                               vec![vec![0.0, 0.0], vec![0.0, 0.0]]).unwrap();
/// let (counts, t) = item_counts(&p, &[0, 1], 10.0, 1.0, 10).unwrap();
/// assert_eq!(counts, vec![7, 3]); // A: 7 s, B: 6 s
/// assert_eq!(t, 7.0);
/// ```
pub fn item_counts(
    platform: &Platform,
    ring: &[usize],
    work: f64,
    border: f64,
    items: u64,
) -> Result<(Vec<u64>, f64), MappingError> {
    let step = optimal_shares(platform, ring, work, border)?;
    let comm = ring_comm(platform, ring);
    let q = ring.len();
    let unit = work / items.max(1) as f64;
    let finish = |k: usize, n: u64| n as f64 * unit * platform.w(ring[k]) + border * comm[k];
    // Start below the optimum: the floors of the real counts, less one.
    let mut counts: Vec<u64> = step
        .shares
        .iter()
        .map(|a| ((a * items as f64).floor() as u64).saturating_sub(1))
        .collect();
    let mut placed: u64 = counts.iter().sum();
    if placed > items {
        counts = vec![0; q];
        placed = 0;
    }
    // Give each remaining item to the processor that would finish it first.
    let mut heap: std::collections::BinaryHeap<std::cmp::Reverse<(OrderedTime, usize)>> = (0..q)
        .map(|k| std::cmp::Reverse((OrderedTime(finish(k, counts[k] + 1)), k)))
        .collect();
    while placed < items {
        let Some(std::cmp::Reverse((_, k))) = heap.pop() else {
            break;
        };
        counts[k] += 1;
        placed += 1;
        heap.push(std::cmp::Reverse((
            OrderedTime(finish(k, counts[k] + 1)),
            k,
        )));
    }
    let t = (0..q)
        .map(|k| finish(k, counts[k]))
        .fold(f64::NEG_INFINITY, f64::max);
    Ok((counts, t))
}

/// The time per unit of data from each processor of a ring to its successor and to
/// its predecessor, in ring order: what the ring redistribution planner needs
/// (`c_succ`, `c_pred` of a [`RingInstance`](crate::ring::RingInstance), once
/// multiplied by the data size of one item).
///
/// # Errors
/// [`MappingError::EmptyRing`], [`MappingError::UnknownProcessor`],
/// [`MappingError::RepeatedProcessor`], [`MappingError::NoRoute`].
///
/// Complexity: O(q).
///
/// ```
/// use hetbal::mapping::ring_costs;
/// use hetbal::platform::{Platform, Processor};
/// let p = Platform::from_matrix(
///     vec![Processor::new("A", 1.0), Processor::new("B", 1.0), Processor::new("C", 1.0)],
///     vec![vec![0.0, 1.0, 2.0], vec![3.0, 0.0, 4.0], vec![5.0, 6.0, 0.0]]).unwrap();
/// let (c_succ, c_pred) = ring_costs(&p, &[0, 2, 1]).unwrap(); // A -> C -> B -> A
/// assert_eq!(c_succ, vec![2.0, 6.0, 3.0]);
/// assert_eq!(c_pred, vec![1.0, 5.0, 4.0]);
/// ```
pub fn ring_costs(
    platform: &Platform,
    ring: &[usize],
) -> Result<(Vec<f64>, Vec<f64>), MappingError> {
    check_ring(platform, ring)?;
    let q = ring.len();
    let mut c_succ = Vec::with_capacity(q);
    let mut c_pred = Vec::with_capacity(q);
    for k in 0..q {
        let (i, s, p) = (ring[k], ring[(k + 1) % q], ring[(k + q - 1) % q]);
        for j in [s, p] {
            if i != j && !platform.cost(i, j).is_finite() {
                return Err(MappingError::NoRoute {
                    from: platform.name(i).to_string(),
                    to: platform.name(j).to_string(),
                });
            }
        }
        c_succ.push(platform.cost(i, s));
        c_pred.push(platform.cost(i, p));
    }
    Ok((c_succ, c_pred))
}
