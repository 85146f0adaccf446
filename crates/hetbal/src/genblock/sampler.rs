//! Random GEN_BLOCK distributions: block lists drawn uniformly among all lists of
//! `P` sizes in `[1, U]` adding up to `N`.

use std::fmt;

use crate::random::SplitMix64;

/// No list of block sizes fits the bounds asked of a [`BlockListSampler`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoBlockList {
    /// Blocks `P` asked for.
    pub blocks: usize,
    /// Elements `N` they must add up to.
    pub elements: usize,
    /// Largest block size `U` allowed.
    pub largest: usize,
}

impl fmt::Display for NoBlockList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no block list of {} sizes in [1, {}] adds up to {}: it takes between {} and {} elements",
            self.blocks,
            self.largest,
            self.elements,
            self.blocks,
            self.blocks.saturating_mul(self.largest)
        )
    }
}

impl std::error::Error for NoBlockList {}

/// Draws GEN_BLOCK distributions (block lists) uniformly: every list of `P` block
/// sizes in `[1, U]` adding up to `N` is equally likely.
///
/// The sampler counts: `W(r, s)`, the number of ways `r` blocks hold `s`
/// elements, is tabulated once (`W(r, s) = W(r-1, s-1) + ... + W(r-1, s-U)`,
/// through prefix sums); a list is then drawn one block at a time, size `v` with
/// probability `W(r-1, left-v) / W(r, left)` when `r` blocks hold the `left`
/// elements still to place. The product of these probabilities is `1 / W(P, N)`
/// for every list. Counts are kept as floating-point numbers scaled per row (they
/// overflow any integer type at `P = 128`), so the draw is uniform up to rounding.
///
/// The GEN_BLOCK paper does not say how it drew its blocks; this choice gives its
/// average degree in scenario V (1.95), see [`crate::experiment::genblock`].
///
/// # Example
/// ```
/// use hetbal::genblock::BlockListSampler;
/// use hetbal::random::SplitMix64;
///
/// // Two blocks of 1 to 4 elements holding 6: (2, 4), (3, 3) or (4, 2).
/// let sampler = BlockListSampler::new(2, 6, 4).unwrap();
/// let mut rng = SplitMix64::new(1);
/// let blocks = sampler.draw(&mut rng);
/// assert_eq!(blocks.iter().sum::<u64>(), 6);
/// assert!(blocks.iter().all(|&b| (2..=4).contains(&b)));
/// // No list of 3 blocks of at most 2 elements holds 7.
/// assert!(BlockListSampler::new(3, 7, 2).is_err());
/// ```
#[derive(Clone, Debug)]
pub struct BlockListSampler {
    blocks: usize,
    elements: usize,
    largest: usize,
    /// `prefix[r][s]`: sum over `x <= s` of `W(r, x)`, row `r` scaled by its
    /// largest `W`.
    prefix: Vec<Vec<f64>>,
}

impl BlockListSampler {
    /// Tabulates the counts for lists of `blocks` sizes in `[1, largest]` adding
    /// up to `elements`.
    ///
    /// # Errors
    /// [`NoBlockList`] when no such list exists: `blocks` or `largest` is 0, or
    /// `elements` is outside `[blocks, blocks * largest]`.
    ///
    /// # Complexity
    /// O(P N) time and memory.
    pub fn new(blocks: usize, elements: usize, largest: usize) -> Result<Self, NoBlockList> {
        if blocks == 0
            || largest == 0
            || elements < blocks
            || elements > blocks.saturating_mul(largest)
        {
            return Err(NoBlockList {
                blocks,
                elements,
                largest,
            });
        }
        let prefix_of = |row: Vec<f64>| -> Vec<f64> {
            let mut sum = 0.0;
            row.into_iter()
                .map(|w| {
                    sum += w;
                    sum
                })
                .collect()
        };
        let mut first = vec![0.0; elements + 1];
        first[0] = 1.0; // W(0, 0) = 1: no block holds nothing
        let mut prefix = vec![prefix_of(first)];
        for r in 1..=blocks {
            let previous = &prefix[r - 1];
            // W(r, s) = sum of W(r-1, x) for x in [s - largest, s - 1].
            let mut row: Vec<f64> = (0..=elements)
                .map(|s| {
                    if s == 0 {
                        return 0.0;
                    }
                    let low = s.saturating_sub(largest);
                    let below = if low == 0 { 0.0 } else { previous[low - 1] };
                    (previous[s - 1] - below).max(0.0)
                })
                .collect();
            let top = row.iter().copied().fold(0.0, f64::max);
            if top > 0.0 {
                row.iter_mut().for_each(|w| *w /= top);
            }
            prefix.push(prefix_of(row));
        }
        Ok(BlockListSampler {
            blocks,
            elements,
            largest,
            prefix,
        })
    }

    /// One block list: `P` sizes in `[1, U]` adding up to `N`, every such list
    /// equally likely. Takes one `rng.unit()` per block.
    ///
    /// # Complexity
    /// O(P log U).
    pub fn draw(&self, rng: &mut SplitMix64) -> Vec<u64> {
        let mut left = self.elements;
        let mut list = Vec::with_capacity(self.blocks);
        for r in (1..=self.blocks).rev() {
            let previous = &self.prefix[r - 1];
            // Size v in [1, hi] weighs W(r-1, left - v): indices x = left - v in
            // [left - hi, left - 1].
            let hi = self.largest.min(left);
            let (a, b) = (left - hi, left - 1);
            let base = if a == 0 { 0.0 } else { previous[a - 1] };
            let total = previous[b] - base;
            let size = if total > 0.0 {
                let target = base + rng.unit() * total;
                // The first x in [a, b] whose prefix exceeds the target.
                let x = a + previous[a..=b].partition_point(|&c| c <= target);
                left - x.min(b)
            } else {
                // Reachable only through rounding: the largest size that leaves
                // each other block at least one element.
                hi.min(left - (r - 1))
            };
            list.push(size as u64);
            left -= size;
        }
        list
    }
}
