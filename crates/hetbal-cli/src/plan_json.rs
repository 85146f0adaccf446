//! The JSON of a ring plan, row by row: the bytes of
//! `hetbal::document::write_json`, written faster.
//!
//! A plan of a large ring has millions of transfers, and serde's way through
//! them (a call of the formatter per key, separator and value, each key
//! checked for characters to escape) costs as much as planning them. Here
//! everything but the two long lists (flows and transfers) is still written
//! by `write_json`, and the rows of the lists are put together in blocks of
//! memory: their fixed text (keys and separators) copied, their numbers
//! formatted by `serde_json` itself, so that they are the same digits.

use std::io::{self, Write};

use hetbal::document::write_json;
use hetbal::ring::{Flow, RingPlan, Transfer};
use hetbal::ScheduleReport;
use serde::Serialize;

/// How `write_json` ends a plan whose flows and transfers are empty: they are
/// the document's last fields, whose rows are written in their place.
const EMPTY_LISTS: &[u8] = b"\"flows\": [],\n  \"transfers\": []\n}";

/// Writes `plan` as `hetbal::document::write_json(out, plan)` does, byte for
/// byte (the tests compare the two).
///
/// Complexity: O(size of the document), in memory a block of rows
/// ([`BLOCK`]) and the few lines above the lists beyond the plan.
pub fn write_plan(out: &mut impl Write, plan: &RingPlan) -> io::Result<()> {
    // Every field listed, so that a new field of the plan is not forgotten.
    let head = RingPlan {
        ring: plan.ring,
        algorithm: plan.algorithm.clone(),
        makespan: plan.makespan,
        lower_bound: plan.lower_bound,
        optimal: plan.optimal,
        light: plan.light,
        flows: Vec::new(),
        transfers: Vec::new(),
        report: ScheduleReport::default(),
    };
    let mut text = Vec::new();
    write_json(&mut text, &head)?;
    let above = text
        .strip_suffix(EMPTY_LISTS)
        .expect("a plan document ends with its flows and transfers");
    out.write_all(above)?;
    out.write_all(b"\"flows\": ")?;
    write_rows(out, &plan.flows, flow_row)?;
    out.write_all(b",\n  \"transfers\": ")?;
    write_rows(out, &plan.transfers, transfer_row)?;
    out.write_all(b"\n}")
}

/// A list of the document as `write_json` lays it out: `[]` when empty, else a
/// row per line, indented by four spaces, the bracket closing on a line of its
/// own. The rows are put together in blocks of [`BLOCK`] bytes, each handed to
/// `out` at once (past a buffer of at most that size: not copied again).
fn write_rows<T>(out: &mut impl Write, rows: &[T], row: fn(&mut Vec<u8>, &T)) -> io::Result<()> {
    if rows.is_empty() {
        return out.write_all(b"[]");
    }
    out.write_all(b"[")?;
    let mut block = Vec::with_capacity(BLOCK + 512);
    for (k, r) in rows.iter().enumerate() {
        block.extend_from_slice(if k == 0 { b"\n    " } else { b",\n    " });
        row(&mut block, r);
        if block.len() >= BLOCK {
            out.write_all(&block)?;
            block.clear();
        }
    }
    out.write_all(&block)?;
    out.write_all(b"\n  ]")
}

/// The bytes of rows gathered before they are written: as large as the
/// command's output buffer, which then passes them on without a copy.
pub const BLOCK: usize = 1 << 20;

/// `{"from": 0, "to": 1, "items": 3}`
fn flow_row(buffer: &mut Vec<u8>, f: &Flow) {
    from_to_items(buffer, f.from, f.to, f.items);
    buffer.push(b'}');
}

/// The start of a flow's or a transfer's row: `{"from": 0, "to": 1, "items": 3`.
fn from_to_items(buffer: &mut Vec<u8>, from: usize, to: usize, items: u64) {
    buffer.extend_from_slice(b"{\"from\": ");
    number(buffer, from);
    buffer.extend_from_slice(b", \"to\": ");
    number(buffer, to);
    buffer.extend_from_slice(b", \"items\": ");
    number(buffer, items);
}

/// `{"from": 0, "to": 1, "items": 3, "start": 0.0, "end": 3.0}`, with `,
/// "period": 1.5` before the brace for a paced train.
fn transfer_row(buffer: &mut Vec<u8>, t: &Transfer) {
    from_to_items(buffer, t.from, t.to, t.items);
    buffer.extend_from_slice(b", \"start\": ");
    number(buffer, t.start);
    buffer.extend_from_slice(b", \"end\": ");
    number(buffer, t.end);
    if let Some(period) = t.period {
        buffer.extend_from_slice(b", \"period\": ");
        number(buffer, period);
    }
    buffer.push(b'}');
}

/// A number as `serde_json` writes it (`null` for a float that is not finite).
fn number(buffer: &mut Vec<u8>, value: impl Serialize) {
    serde_json::to_writer(buffer, &value).expect("a number is written to memory");
}

#[cfg(test)]
mod tests {
    use super::write_plan;
    use hetbal::random::SplitMix64;
    use hetbal::ring::{plan, Flow, RingInstance, RingKind, RingPlan, Transfer};
    use hetbal::ScheduleReport;

    fn both(plan: &RingPlan) -> (String, String) {
        let mut fast = Vec::new();
        write_plan(&mut fast, plan).unwrap();
        let mut serde = Vec::new();
        hetbal::document::write_json(&mut serde, plan).unwrap();
        (
            String::from_utf8(fast).unwrap(),
            String::from_utf8(serde).unwrap(),
        )
    }

    /// A float of any magnitude, from subnormals to near `f64::MAX`, whole
    /// numbers and zeros included (never NaN: times are finite; infinities
    /// are written `null` by both).
    fn float(rng: &mut SplitMix64) -> f64 {
        match rng.below(8) {
            0 => 0.0,
            1 => rng.below_u64(1 << 40) as f64,
            2 => f64::from_bits(rng.below_u64(1 << 52) + 1), // subnormal
            3 => f64::INFINITY,
            4 => -rng.unit() * 10f64.powi(rng.below(600) as i32 - 300),
            _ => {
                let value = rng.unit() * 10f64.powi(rng.below(616) as i32 - 308);
                if value.is_finite() {
                    value
                } else {
                    f64::MAX
                }
            }
        }
    }

    fn random_plan(rng: &mut SplitMix64) -> RingPlan {
        let count = |rng: &mut SplitMix64| match rng.below(4) {
            0 => 0,
            1 => 1,
            _ => rng.below(40),
        };
        let index = |rng: &mut SplitMix64| match rng.below(3) {
            0 => rng.below(10),
            1 => usize::MAX - rng.below(10),
            _ => rng.next_u64() as usize,
        };
        let flows = (0..count(rng))
            .map(|_| Flow {
                from: index(rng),
                to: index(rng),
                items: rng.next_u64() >> rng.below(64),
            })
            .collect();
        let transfers = (0..count(rng))
            .map(|_| Transfer {
                from: index(rng),
                to: index(rng),
                items: rng.next_u64() >> rng.below(64),
                start: float(rng),
                end: float(rng),
                period: (rng.below(2) == 0).then(|| float(rng)),
            })
            .collect();
        RingPlan {
            ring: if rng.below(2) == 0 {
                RingKind::Unidirectional
            } else {
                RingKind::Bidirectional
            },
            algorithm: ["unidirectional-batched", "a \"quoted\"\n\u{e9} name", ""][rng.below(3)]
                .to_string(),
            makespan: float(rng),
            lower_bound: float(rng),
            optimal: rng.below(2) == 0,
            light: rng.below(2) == 0,
            flows,
            transfers,
            report: ScheduleReport::default(),
        }
    }

    /// Random plans, with empty and one-row lists, paced trains and floats of
    /// every magnitude: the same bytes as `write_json`.
    #[test]
    fn random_plans_are_written_as_write_json_writes_them() {
        let mut rng = SplitMix64::new(17);
        for _ in 0..400 {
            let plan = random_plan(&mut rng);
            let (fast, serde) = both(&plan);
            assert_eq!(fast, serde);
        }
    }

    /// The planners' own plans (paced trains from the batched planner on
    /// heterogeneous rings, bidirectional plans): the same bytes as `write_json`.
    #[test]
    fn planned_rings_are_written_as_write_json_writes_them() {
        let mut rng = SplitMix64::new(5);
        let mut paced = 0;
        for case in 0..60 {
            let n = 2 + rng.below(12);
            let loads: Vec<u64> = (0..n).map(|_| rng.below_u64(30)).collect();
            let mut targets = loads.clone();
            for _ in 0..n {
                let (a, b) = (rng.below(n), rng.below(n));
                let moved = targets[a].min(rng.below_u64(20));
                targets[a] -= moved;
                targets[b] += moved;
            }
            let costs: Vec<f64> = (0..n).map(|_| rng.range((0.3, 3.0))).collect();
            let ring = if case % 2 == 0 {
                RingInstance::unidirectional(&loads, &targets, &costs)
            } else {
                let back: Vec<f64> = (0..n).map(|_| rng.range((0.3, 3.0))).collect();
                RingInstance::bidirectional(&loads, &targets, &costs, &back)
            }
            .unwrap();
            let planned = plan(&ring, None).unwrap();
            paced += planned
                .transfers
                .iter()
                .filter(|t| t.period.is_some())
                .count();
            let (fast, serde) = both(&planned);
            assert_eq!(fast, serde);
        }
        assert!(paced > 0, "no paced train among the plans");
    }
}
