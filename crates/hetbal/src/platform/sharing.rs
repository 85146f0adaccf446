//! Bandwidth sharing between flows that cross the same links: max-min fairness.

use std::fmt;

use super::{Link, Platform, SharingPolicy};

/// Why rates could not be computed.
#[derive(Clone, Debug, PartialEq)]
pub enum SharingError {
    /// A flow names a processor beyond the platform.
    UnknownProcessor {
        /// Index of the flow.
        flow: usize,
        /// The processor index given.
        index: usize,
    },
    /// A flow joins two processors that have no route (or the platform is a cost
    /// matrix, which has no links to share).
    NoRoute {
        /// Source.
        from: String,
        /// Destination.
        to: String,
    },
    /// A route names a link index beyond the platform's links.
    UnknownLink {
        /// Index of the flow.
        flow: usize,
        /// The link index given.
        link: u32,
    },
}

impl fmt::Display for SharingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SharingError::UnknownProcessor { flow, index } => {
                write!(f, "flow {flow}: processor index {index} is not on the platform")
            }
            SharingError::NoRoute { from, to } => write!(
                f,
                "no route (no links) from {from:?} to {to:?}: bandwidth sharing needs a graph platform"
            ),
            SharingError::UnknownLink { flow, link } => {
                write!(f, "flow {flow}: link index {link} is not on the platform")
            }
        }
    }
}

impl std::error::Error for SharingError {}

/// Max-min fair rates (bytes/s) of flows that run at the same time, each along the
/// route between its two processors.
///
/// Links shared fairly (`SHARED`, and each direction of a `SPLITDUPLEX` link) split
/// their bandwidth among the flows crossing them; a `FATPIPE` link gives every flow
/// its whole bandwidth (it caps each flow, it is not shared). Rates are found by
/// progressive filling: all flows grow together until a link saturates or a flow
/// reaches its cap; those flows freeze; the others go on (Bertsekas & Gallager,
/// "Data Networks", section 6.5.2). A flow crossing a link twice counts twice there.
/// A flow without links (a route of none) gets `f64::INFINITY`.
///
/// # Arguments
/// * `platform`: a graph platform ([`Platform::from_graph`] or the SimGrid reader);
/// * `flows`: `(source, destination)` processor pairs, `source != destination`.
///
/// # Returns
/// One rate per flow, in the order given.
///
/// # Errors
/// [`SharingError::UnknownProcessor`], [`SharingError::NoRoute`].
///
/// # Complexity
/// O(r · (L + F·R)) for F flows, L links, routes of at most R links and r <= L + F
/// rounds of filling.
///
/// # Example
/// ```
/// use hetbal::platform::{Link, Platform, Processor, Route, SharingPolicy};
/// use hetbal::platform::max_min_rates;
/// //  A --\                 two flows A->C and B->C share `l` (10 B/s);
/// //       l (10) -- C      B's own link `b` (2 B/s) holds it to 2,
/// //  B --b (2)-/           so A gets the other 8.
/// let link = |n: &str, bw: f64| Link { name: n.into(), bandwidth: bw, latency: 0.0,
///                                      sharing: SharingPolicy::Shared };
/// let p = Platform::from_graph(
///     vec![Processor::new("A", 1.0), Processor::new("B", 1.0), Processor::new("C", 1.0)],
///     vec![link("l", 10.0), link("b", 2.0)],
///     vec![Route { src: 0, dst: 2, links: vec![0] }, Route { src: 1, dst: 2, links: vec![1, 0] }],
///     1.0,
/// ).unwrap();
/// assert_eq!(max_min_rates(&p, &[(0, 2), (1, 2)]).unwrap(), vec![8.0, 2.0]);
/// ```
pub fn max_min_rates(
    platform: &Platform,
    flows: &[(usize, usize)],
) -> Result<Vec<f64>, SharingError> {
    let links = platform.links();
    let mut routes: Vec<&[u32]> = Vec::with_capacity(flows.len());
    for (f, &(a, b)) in flows.iter().enumerate() {
        for idx in [a, b] {
            if idx >= platform.len() {
                return Err(SharingError::UnknownProcessor {
                    flow: f,
                    index: idx,
                });
            }
        }
        let route = platform.route(a, b).ok_or_else(|| SharingError::NoRoute {
            from: platform.name(a).to_string(),
            to: platform.name(b).to_string(),
        })?;
        routes.push(route);
    }
    Ok(fill(links, &routes))
}

/// Max-min fair rates (bytes/s) of flows given by their routes (link indices), as
/// [`max_min_rates`] computes them for the platform's routes: for flows whose
/// routes are chosen elsewhere (e.g. widest paths of the network).
///
/// # Errors
/// [`SharingError::UnknownLink`] for a link index beyond `links`.
///
/// # Complexity
/// That of [`max_min_rates`].
///
/// # Example
/// ```
/// use hetbal::platform::{max_min_rates_on, Link, SharingPolicy};
/// let link = |bw: f64| Link { name: "l".into(), bandwidth: bw, latency: 0.0,
///                             sharing: SharingPolicy::Shared };
/// // Two flows on link 0 (12 B/s); the second also crosses link 1 (2 B/s).
/// let rates = max_min_rates_on(&[link(12.0), link(2.0)], &[&[0][..], &[0, 1][..]]).unwrap();
/// assert_eq!(rates, vec![10.0, 2.0]);
/// ```
pub fn max_min_rates_on(links: &[Link], routes: &[&[u32]]) -> Result<Vec<f64>, SharingError> {
    for (f, r) in routes.iter().enumerate() {
        if let Some(&l) = r.iter().find(|&&l| l as usize >= links.len()) {
            return Err(SharingError::UnknownLink { flow: f, link: l });
        }
    }
    Ok(fill(links, routes))
}

/// Progressive filling (see [`max_min_rates`]).
fn fill(links: &[Link], routes: &[&[u32]]) -> Vec<f64> {
    let shared = |l: usize| links[l].sharing != SharingPolicy::Fatpipe;
    let n = routes.len();
    let mut rate = vec![0.0f64; n];
    let mut frozen = vec![false; n];
    // Per-flow cap from fat pipes.
    let cap: Vec<f64> = routes
        .iter()
        .map(|r| {
            r.iter()
                .filter(|&&l| !shared(l as usize))
                .map(|&l| links[l as usize].bandwidth)
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    for f in 0..n {
        if !routes[f].iter().any(|&l| shared(l as usize)) && !cap[f].is_finite() {
            rate[f] = f64::INFINITY;
            frozen[f] = true;
        }
    }
    let mut remaining: Vec<f64> = links.iter().map(|l| l.bandwidth).collect();
    loop {
        let mut users = vec![0u32; links.len()];
        for f in (0..n).filter(|&f| !frozen[f]) {
            for &l in routes[f] {
                if shared(l as usize) {
                    users[l as usize] += 1;
                }
            }
        }
        let mut step = f64::INFINITY;
        for l in 0..links.len() {
            if users[l] > 0 {
                step = step.min(remaining[l] / users[l] as f64);
            }
        }
        for f in (0..n).filter(|&f| !frozen[f]) {
            step = step.min(cap[f] - rate[f]);
        }
        if !step.is_finite() {
            break;
        }
        let step = step.max(0.0);
        for f in (0..n).filter(|&f| !frozen[f]) {
            rate[f] += step;
        }
        let mut saturated = vec![false; links.len()];
        for l in 0..links.len() {
            if users[l] > 0 {
                remaining[l] -= step * users[l] as f64;
                if remaining[l] <= 1e-12 * links[l].bandwidth {
                    saturated[l] = true;
                }
            }
        }
        let mut any = false;
        for f in 0..n {
            if frozen[f] {
                continue;
            }
            let at_cap = rate[f] >= cap[f] * (1.0 - 1e-12);
            if at_cap || routes[f].iter().any(|&l| saturated[l as usize]) {
                frozen[f] = true;
                any = true;
            }
        }
        // Each round freezes at least one flow; stop when all are, or (rounding)
        // when none was.
        if !any || frozen.iter().all(|&x| x) {
            break;
        }
    }
    rate
}
