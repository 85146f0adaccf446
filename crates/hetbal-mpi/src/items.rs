//! Items of different sizes (cells holding different numbers of particles,
//! AMR blocks, sparse rows) moved to new owners along a chain.
//!
//! The ranks, in order, hold one global sequence of items: rank r holds the
//! next items of it as one buffer of elements plus offsets (item i is
//! `data[offsets[i] .. offsets[i + 1]]`; items may be empty). Given new cuts
//! (p + 1 global item indices, the same on every rank), [`redistribute_items`]
//! leaves rank r with items `cuts[r] .. cuts[r + 1]`, in order: a chain (no
//! item goes from the last rank to the first), each boundary moved by the
//! items between its old and its new cut.
//!
//! How: the new cuts are turned into element positions (each rank knows those
//! of the cuts that fall among its items; one all-reduce of p + 1 words), which
//! give the chain's flows in elements; the items' sizes move first (a ring
//! redistribution of one `u64` per item along the flows in items, into a vector
//! of hetbal's), then the elements along the flows in elements, with every
//! guarantee of [`crate::ring::redistribute`]: the buffer grows in place and
//! the elements a rank keeps stay where they are until the commit, items
//! passed on wait in a few chunks, counts and an order-aware checksum are
//! checked on every rank before any commits, and on any failure every rank
//! keeps its data and offsets as they were. The offsets change only once the
//! elements have committed.
//!
//! Complexity: O(k + p) per rank for its k items on p ranks, plus the moves.

use bytemuck::Pod;
use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives};

use crate::comm::{agree_arguments, fingerprint, Duplicate, Refusal, Refused};
use crate::ring::{redistribute, redistribute_bytes, RedistributionReport};
use crate::{Options, RunError};

/// What a rank did in [`redistribute_items`].
#[derive(Clone, Debug, PartialEq)]
pub struct ItemsReport {
    /// The global index of this rank's first item now (`cuts[rank]`).
    pub first: u64,
    /// Items this rank holds now.
    pub items: u64,
    /// Items this rank held before.
    pub items_before: u64,
    /// The move of the items' sizes (one `u64` per item).
    pub sizes: RedistributionReport,
    /// The move of the elements (the data itself).
    pub elements: RedistributionReport,
}

/// Why a rank's own arguments are wrong: `offsets` for `elements` elements,
/// `cuts` for `ranks` ranks. O(k + p).
fn arguments_problem(
    offsets: &[u64],
    elements: usize,
    cuts: &[u64],
    ranks: usize,
) -> Option<String> {
    if offsets.first() != Some(&0) {
        return Some(match offsets.first() {
            None => "no offsets: k items need k + 1 offsets, starting at 0".to_string(),
            Some(o) => format!("the offsets start at {o}, not at 0"),
        });
    }
    if let Some(i) = offsets.windows(2).position(|w| w[0] > w[1]) {
        return Some(format!(
            "the offsets decrease at item {i} ({} then {})",
            offsets[i],
            offsets[i + 1]
        ));
    }
    let last = *offsets.last().expect("at least one offset");
    if last != elements as u64 {
        return Some(format!(
            "the offsets end at {last} but the data holds {elements} elements"
        ));
    }
    if cuts.len() != ranks + 1 {
        return Some(format!(
            "{} cuts for {ranks} ranks: the cuts are p + 1 global item indices",
            cuts.len()
        ));
    }
    if cuts[0] != 0 {
        return Some(format!("the first cut is {}, not 0", cuts[0]));
    }
    if let Some(r) = cuts.windows(2).position(|w| w[0] > w[1]) {
        return Some(format!(
            "the cuts decrease at rank {r} ({} then {})",
            cuts[r],
            cuts[r + 1]
        ));
    }
    None
}

/// The chain's net flow on each link (i, i+1), positive when rank i gives
/// items to rank i+1: the old boundary minus the new one; none on the link
/// from the last rank to the first. O(p).
pub(crate) fn chain_flows(old: &[u64], new: &[u64]) -> Vec<i128> {
    let p = old.len() - 1;
    (0..p)
        .map(|i| {
            if i + 1 < p {
                i128::from(old[i + 1]) - i128::from(new[i + 1])
            } else {
                0
            }
        })
        .collect()
}

/// The prefix sums of `counts`, from 0: p + 1 boundaries for p ranks.
pub(crate) fn boundaries(counts: &[u64]) -> Option<Vec<u64>> {
    let mut at = 0u64;
    let mut out = Vec::with_capacity(counts.len() + 1);
    out.push(0);
    for &c in counts {
        at = at.checked_add(c)?;
        out.push(at);
    }
    Some(out)
}

/// Moves variable-size items so that rank r holds items `cuts[r] ..
/// cuts[r + 1]` of the global order (see the module's docs): `data` and
/// `offsets` are replaced by the new items on success, untouched on error.
///
/// # Arguments
/// * `comm` - the communicator, rank r holding the r-th part of the items;
/// * `data` - this rank's items, one after another, in elements of any
///   plain-old-data type ([`bytemuck::Pod`]: bytes, `f64`, a particle struct);
/// * `offsets` - `k + 1` element offsets for this rank's `k` items: from 0,
///   never decreasing, ending at `data.len()` (item i is `data[offsets[i] ..
///   offsets[i + 1]]`, empty items allowed);
/// * `cuts` - `p + 1` global item indices, identical on every rank: from 0,
///   never decreasing, ending at the total number of items; rank r ends with
///   items `cuts[r] .. cuts[r + 1]` (a rank may end with none);
/// * `options` - as for [`redistribute`] (chunk size, a fault to inject, a
///   record of the messages); emulated links and planned batches do not apply
///   (the flows are the cuts', not a plan's) and are refused.
///
/// # Returns
/// The rank's new first global index and item counts, and the reports of the
/// two moves (sizes, then elements).
///
/// # Errors
/// [`RunError::InvalidItems`] on the rank whose offsets or cuts are wrong, and
/// [`RunError::PeerRefused`] on the others; [`RunError::Mismatch`] when the
/// cuts or options differ between ranks; [`RunError::InvalidPlan`] when the
/// cuts do not end at the total number of items, or the move is more than a
/// rank can hold; any error of [`redistribute`] from the moves. On every rank
/// alike, and nothing is changed.
///
/// # Example
/// Every rank holds two items, of 1, 2 or 3 bytes; the items move one place
/// along the chain (run under `mpirun -np 3`, say; on one rank nothing
/// moves):
/// ```no_run
/// use hetbal_mpi::items::redistribute_items;
/// use hetbal_mpi::Options;
/// use mpi::traits::Communicator;
///
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let (rank, p) = (world.rank() as u64, world.size() as u64);
/// // Rank r holds items 2r and 2r + 1 (of (r % 3) + 1 bytes each, each byte its index).
/// let size = (rank % 3 + 1) as usize;
/// let mut data: Vec<u8> = [2 * rank, 2 * rank + 1]
///     .iter()
///     .flat_map(|&i| std::iter::repeat_n(i as u8, size))
///     .collect();
/// let mut offsets = vec![0, size as u64, 2 * size as u64];
/// // Rank 0 ends with three items (two on one rank), the last with one.
/// let cuts: Vec<u64> = (0..=p).map(|r| if r == 0 { 0 } else { (2 * r + 1).min(2 * p) }).collect();
/// let report = redistribute_items(&world, &mut data, &mut offsets, &cuts, &Options::default())
///     .unwrap();
/// assert_eq!(report.first, cuts[rank as usize]);
/// assert_eq!(offsets.len() as u64, report.items + 1);
/// ```
pub fn redistribute_items<T: Pod, C: Communicator>(
    comm: &C,
    data: &mut Vec<T>,
    offsets: &mut Vec<u64>,
    cuts: &[u64],
    options: &Options,
) -> Result<ItemsReport, RunError> {
    let elements = data.len();
    let shape = (size_of::<T>(), elements);
    move_items(comm, shape, offsets, cuts, options, |comm, loads, flows| {
        redistribute(&**comm, loads, flows, data, options)
    })
}

/// [`redistribute_items`] for elements given as bytes, `element_bytes` each
/// (0 counts as 1): `data` holds whole elements, `offsets` count elements.
///
/// # Errors
/// As [`redistribute_items`].
///
/// # Example
/// ```no_run
/// use hetbal_mpi::items::redistribute_items_bytes;
/// use hetbal_mpi::Options;
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// // Two items of one and two elements of 4 bytes; all stay where they are.
/// let (mut data, mut offsets) = (vec![0u8; 12], vec![0, 1, 3]);
/// let cuts = [0, 2]; // on one rank
/// redistribute_items_bytes(&world, 4, &mut data, &mut offsets, &cuts, &Options::default())
///     .unwrap();
/// ```
pub fn redistribute_items_bytes<C: Communicator>(
    comm: &C,
    element_bytes: usize,
    data: &mut Vec<u8>,
    offsets: &mut Vec<u64>,
    cuts: &[u64],
    options: &Options,
) -> Result<ItemsReport, RunError> {
    let element_bytes = element_bytes.max(1);
    let shape = (element_bytes, data.len() / element_bytes);
    let whole = data.len() % element_bytes == 0;
    move_items(comm, shape, offsets, cuts, options, |comm, loads, flows| {
        if !whole {
            return Err(RunError::InvalidItems {
                rank: comm.rank() as usize,
                reason: "the data is not a whole number of elements".to_string(),
            });
        }
        redistribute_bytes(&**comm, loads, flows, element_bytes, data, options)
    })
}

/// The move of [`redistribute_items`], the elements (`element_bytes` each,
/// `elements` of them) moved by `move_elements` along the chain's loads and
/// flows in elements.
fn move_items<C: Communicator>(
    comm: &C,
    (element_bytes, elements): (usize, usize),
    offsets: &mut Vec<u64>,
    cuts: &[u64],
    options: &Options,
    move_elements: impl FnOnce(&Duplicate, &[u64], &[i128]) -> Result<RedistributionReport, RunError>,
) -> Result<ItemsReport, RunError> {
    let comm = Duplicate::of(comm);
    let (rank, p) = (comm.rank() as usize, comm.size() as usize);
    let local = match arguments_problem(offsets, elements, cuts, p) {
        Some(reason) => Err(RunError::InvalidItems { rank, reason }),
        None if options.pacing.is_some() || options.batches.is_some() => {
            Err(RunError::InvalidItems {
                rank,
                reason: "emulated links and planned batches do not apply to items moved to cuts"
                    .to_string(),
            })
        }
        None => Ok(()),
    };
    let digest = format!(
        "items {cuts:?} {} {} {:?} {}",
        element_bytes, options.chunk_bytes, options.fault, options.record
    );
    agree_arguments(&*comm, local, fingerprint(&digest)).map_err(|refusal| match refusal {
        Refusal::Local(e) => e,
        Refusal::Refused(Refused { rank }) => RunError::PeerRefused { rank },
        Refusal::Mismatch => RunError::Mismatch,
    })?;
    // Every rank's items and elements: the old boundaries.
    let k = (offsets.len() - 1) as u64;
    let mut counts = vec![[0u64; 2]; p];
    comm.all_gather_into(&[k, elements as u64][..], flat_mut(&mut counts));
    let old_items = boundaries(&counts.iter().map(|c| c[0]).collect::<Vec<_>>());
    let old_elements = boundaries(&counts.iter().map(|c| c[1]).collect::<Vec<_>>());
    let (Some(old_items), Some(old_elements)) = (old_items, old_elements) else {
        return Err(RunError::InvalidPlan {
            reason: "the ranks hold more than 2^64 - 1 items or elements".to_string(),
        });
    };
    if cuts[p] != old_items[p] {
        return Err(RunError::InvalidPlan {
            reason: format!(
                "the cuts end at {} but the ranks hold {} items",
                cuts[p], old_items[p]
            ),
        });
    }
    // The new cuts in elements: each rank knows those among its items.
    let (first, last) = (old_items[rank], old_items[rank + 1]);
    let mine: Vec<u64> = (0..=p)
        .map(|j| {
            let c = cuts[j];
            if j == p {
                old_elements[p] * u64::from(rank == 0)
            } else if first <= c && c < last {
                old_elements[rank] + offsets[(c - first) as usize]
            } else {
                0
            }
        })
        .collect();
    let mut new_elements = vec![0u64; p + 1];
    comm.all_reduce_into(&mine[..], &mut new_elements[..], SystemOperation::sum());
    // A cut at the very end of the items that is not the last one (ranks left
    // empty at the end) lies among nobody's items.
    for j in 0..p {
        if cuts[j] == old_items[p] {
            new_elements[j] = old_elements[p];
        }
    }
    // Sizes first (hetbal's own vector), then the elements; the offsets change
    // only once both have committed.
    let mut sizes: Vec<u64> = offsets.windows(2).map(|w| w[1] - w[0]).collect();
    let item_loads: Vec<u64> = counts.iter().map(|c| c[0]).collect();
    let sizes_options = Options {
        fault: None,
        record: false,
        ..options.clone()
    };
    let sizes_report = redistribute(
        &*comm,
        &item_loads,
        &chain_flows(&old_items, cuts),
        &mut sizes,
        &sizes_options,
    )?;
    let element_loads: Vec<u64> = counts.iter().map(|c| c[1]).collect();
    let element_flows = chain_flows(&old_elements, &new_elements);
    let elements_report = move_elements(&comm, &element_loads, &element_flows)?;
    offsets.clear();
    offsets.reserve(sizes.len() + 1);
    offsets.push(0);
    let mut at = 0u64;
    for s in &sizes {
        at += s;
        offsets.push(at);
    }
    Ok(ItemsReport {
        first: cuts[rank],
        items: sizes.len() as u64,
        items_before: k,
        sizes: sizes_report,
        elements: elements_report,
    })
}

/// The words of `pairs`, flat.
fn flat_mut(pairs: &mut [[u64; 2]]) -> &mut [u64] {
    bytemuck::cast_slice_mut(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_offsets_and_cuts_are_named() {
        let problem = |offsets: &[u64], elements, cuts: &[u64]| {
            arguments_problem(offsets, elements, cuts, 2).unwrap_or_default()
        };
        assert!(problem(&[], 0, &[0, 0, 0]).contains("no offsets"));
        assert!(problem(&[1, 2], 2, &[0, 0, 1]).contains("start at 1"));
        assert!(problem(&[0, 3, 2], 2, &[0, 0, 2]).contains("decrease at item 1"));
        assert!(problem(&[0, 2], 3, &[0, 0, 1]).contains("end at 2 but the data holds 3"));
        assert!(problem(&[0, 2], 2, &[0, 1]).contains("2 cuts for 2 ranks"));
        assert!(problem(&[0, 2], 2, &[1, 1, 1]).contains("first cut is 1"));
        assert!(problem(&[0, 2], 2, &[0, 2, 1]).contains("decrease at rank 1"));
        assert_eq!(arguments_problem(&[0, 0, 2], 2, &[0, 2, 2], 2), None);
    }

    #[test]
    fn chains_never_use_the_last_link() {
        // Rank 0 gives one item to rank 1, rank 2 gives two to rank 1.
        assert_eq!(chain_flows(&[0, 3, 5, 9], &[0, 2, 7, 9]), vec![1, -2, 0]);
        assert_eq!(boundaries(&[2, 0, 3]), Some(vec![0, 2, 2, 5]));
        assert_eq!(boundaries(&[u64::MAX, 1]), None);
    }
}
