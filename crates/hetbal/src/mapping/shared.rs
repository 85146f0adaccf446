//! Rings on platforms whose routes share links (slides, "heterogeneous network,
//! general case"): every processor sends its border to both neighbours at once, the
//! flows share the links max-min fairly, and the step time follows.

use super::shares::{check_ring, check_sizes, water_fill, Step};
use super::{map, MapOptions, Mapping, MappingError, Method};
use crate::platform::{max_min_rates, Platform, SharingError};

/// The time per unit of data of every ring exchange when all `2q` of them run at
/// once, shared max-min fairly ([`max_min_rates`]): `(to predecessor, to
/// successor)` for each position of the ring (zeros for a ring of one).
///
/// # Errors
/// [`MappingError::NoRoute`] (also for a matrix platform, which has no links),
/// [`MappingError::UnknownProcessor`].
///
/// Complexity: that of [`max_min_rates`] on 2q flows.
///
/// ```
/// use hetbal::mapping::shared_ring_costs;
/// use hetbal::platform::{Link, Platform, Processor, Route, SharingPolicy};
/// // Three processors on one bus of 60 B/s: six flows, 10 B/s each.
/// let bus = Link { name: "bus".into(), bandwidth: 60.0, latency: 0.0, sharing: SharingPolicy::Shared };
/// let mut routes = Vec::new();
/// for a in 0..3 { for b in 0..3 { if a != b { routes.push(Route { src: a, dst: b, links: vec![0] }); } } }
/// let p = Platform::from_graph(
///     (0..3).map(|i| Processor::new(format!("P{i}"), 1.0)).collect(), vec![bus], routes, 1.0,
/// ).unwrap();
/// assert_eq!(shared_ring_costs(&p, &[0, 1, 2]).unwrap(), vec![(0.1, 0.1); 3]);
/// ```
pub fn shared_ring_costs(
    platform: &Platform,
    ring: &[usize],
) -> Result<Vec<(f64, f64)>, MappingError> {
    check_ring(platform, ring)?;
    let q = ring.len();
    if q < 2 {
        return Ok(vec![(0.0, 0.0); q]);
    }
    let mut flows = Vec::with_capacity(2 * q);
    for k in 0..q {
        flows.push((ring[k], ring[(k + q - 1) % q]));
        flows.push((ring[k], ring[(k + 1) % q]));
    }
    let rates = max_min_rates(platform, &flows).map_err(|e| match e {
        SharingError::NoRoute { from, to } => MappingError::NoRoute { from, to },
        SharingError::UnknownProcessor { index, .. } => MappingError::UnknownProcessor { index },
    })?;
    let u = platform.unit_bytes();
    Ok((0..q)
        .map(|k| (u / rates[2 * k], u / rates[2 * k + 1]))
        .collect())
}

/// The step time of a ring when its exchanges share links: the `2q` border flows
/// (each processor to its predecessor and to its successor) run together with
/// max-min fair rates ([`max_min_rates`]), which set
/// `c'_{i,j} = unit_bytes / rate`; the shares are then the best non-negative ones
/// for those costs (as [`optimal_shares`](super::optimal_shares)).
///
/// # Errors
/// The argument errors of [`t_step`](super::t_step); [`MappingError::NoRoute`]
/// (also for a matrix platform, which has no links).
///
/// # Complexity
/// That of [`max_min_rates`] on 2q flows, plus O(q log q).
///
/// # Example
/// ```
/// use hetbal::mapping::shared_step;
/// use hetbal::platform::{Link, Platform, Processor, Route, SharingPolicy};
/// // A and B joined by one shared link of 10 B/s: the two flows A->B (to the
/// // successor and to the predecessor, both B) and the two B->A share it: 2.5 B/s each.
/// let l = Link { name: "l".into(), bandwidth: 10.0, latency: 0.0, sharing: SharingPolicy::Shared };
/// let p = Platform::from_graph(
///     vec![Processor::new("A", 1.0), Processor::new("B", 1.0)], vec![l],
///     vec![Route { src: 0, dst: 1, links: vec![0] }, Route { src: 1, dst: 0, links: vec![0] }],
///     1.0).unwrap();
/// let step = shared_step(&p, &[0, 1], 10.0, 1.0).unwrap();
/// // Each sends 1 unit to each side at 0.4 s per unit: 0.8 s, plus 5 s of work.
/// assert!((step.t_step - 5.8).abs() < 1e-12);
/// ```
pub fn shared_step(
    platform: &Platform,
    ring: &[usize],
    work: f64,
    border: f64,
) -> Result<Step, MappingError> {
    check_ring(platform, ring)?;
    check_sizes(work, border)?;
    let costs = shared_ring_costs(platform, ring)?;
    let comm: Vec<f64> = costs.iter().map(|(a, b)| a + b).collect();
    let w: Vec<f64> = ring.iter().map(|&i| platform.w(i)).collect();
    Ok(water_fill(&w, &comm, work, border))
}

/// The two heuristics of the slides' experiment on a platform with shared links:
/// `blind` ("H1") maps with [`Method::Local`] on the route costs as if no link were
/// shared, `aware` ("H2") grows the ring greedily (best pair, then the insertion of
/// processor and place with the smallest [`shared_step`]) and keeps the best size.
/// Both are evaluated with [`shared_step`].
#[derive(Clone, Debug, PartialEq)]
pub struct SharedComparison {
    /// Sharing-blind mapping, re-evaluated with shared links.
    pub blind: Mapping,
    /// Sharing-aware greedy mapping.
    pub aware: Mapping,
}

/// Maps a ring on a platform whose routes share links, with the sharing-blind and
/// the sharing-aware heuristics (see [`SharedComparison`]).
///
/// Rings always use processors joined by routes; the single fastest processor is a
/// candidate (it exchanges nothing).
///
/// # Errors
/// [`MappingError::InvalidWork`], [`MappingError::InvalidBorder`],
/// [`MappingError::NoRing`] (no ring of two avoids missing routes),
/// [`MappingError::NoRoute`] for a matrix platform.
///
/// # Complexity
/// Blind: that of [`map`] with [`Method::Local`]. Aware: O(p³) evaluations of
/// [`shared_step`] in the worst case.
///
/// # Example
/// ```
/// use hetbal::mapping::map_shared;
/// use hetbal::platform::{Link, Platform, Processor, Route, SharingPolicy};
/// // Three processors on one shared bus of 30 B/s.
/// let bus = Link { name: "bus".into(), bandwidth: 30.0, latency: 0.0, sharing: SharingPolicy::Shared };
/// let mut routes = Vec::new();
/// for a in 0..3 { for b in 0..3 { if a != b { routes.push(Route { src: a, dst: b, links: vec![0] }); } } }
/// let p = Platform::from_graph(
///     (0..3).map(|i| Processor::new(format!("P{i}"), 1.0)).collect(), vec![bus], routes, 1.0,
/// ).unwrap();
/// let both = map_shared(&p, 30.0, 1.0).unwrap();
/// assert!(both.aware.t_step <= both.blind.t_step + 1e-12);
/// ```
pub fn map_shared(
    platform: &Platform,
    work: f64,
    border: f64,
) -> Result<SharedComparison, MappingError> {
    check_sizes(work, border)?;
    let blind_ring = map(platform, &MapOptions::new(work, border, Method::Local))?.ring;
    let blind_step = shared_step(platform, &blind_ring, work, border)?;
    let blind = Mapping {
        method: Method::Local,
        ring: blind_ring,
        shares: blind_step.shares,
        t_step: blind_step.t_step,
    };
    let value = |ring: &[usize]| {
        shared_step(platform, ring, work, border)
            .map(|s| s.t_step)
            .unwrap_or(f64::INFINITY)
    };
    let p = platform.len();
    let fastest = (0..p)
        .min_by(|&a, &b| platform.w(a).total_cmp(&platform.w(b)))
        .unwrap_or(0);
    let mut best = (work * platform.w(fastest), vec![fastest]);
    let mut pair = (f64::INFINITY, Vec::new());
    for i in 0..p {
        for j in i + 1..p {
            let v = value(&[i, j]);
            if v < pair.0 {
                pair = (v, vec![i, j]);
            }
        }
    }
    if pair.0.is_finite() {
        let mut ring = pair.1;
        if pair.0 < best.0 {
            best = (pair.0, ring.clone());
        }
        while ring.len() < p {
            let mut choice = (f64::INFINITY, Vec::new());
            for k in (0..p).filter(|k| !ring.contains(k)) {
                for at in 1..=ring.len() {
                    let mut r = ring.clone();
                    r.insert(at, k);
                    let v = value(&r);
                    if v < choice.0 {
                        choice = (v, r);
                    }
                }
            }
            if !choice.0.is_finite() {
                break;
            }
            ring = choice.1;
            if choice.0 < best.0 {
                best = (choice.0, ring.clone());
            }
        }
    }
    let step = shared_step(platform, &best.1, work, border)?;
    Ok(SharedComparison {
        blind,
        aware: Mapping {
            method: Method::Greedy,
            ring: best.1,
            shares: step.shares,
            t_step: step.t_step,
        },
    })
}
