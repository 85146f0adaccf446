//! Chains: every item of one processor for another five hops along, through
//! links of different costs, with start-ups. Every link but the first
//! forwards what it receives; the last one's items go no further, yet its
//! last message still waits for the last of them to arrive, so its messages
//! are sized for that wait. (When it sent them all in one message after the
//! last arrival, the plans ended 7.0 to 8.5% above the bound, from 2^12 to
//! 2^30 items.)

use hetbal::ring::{plan, RingInstance};
use hetbal::validate;

#[test]
fn a_chain_pipelines_its_items_to_the_last_processor() {
    let costs = [1.0, 1.5, 0.7, 1.2, 0.9, 1.1];
    // Items, and how far above the start-up bound the plan may end (measured:
    // 2.79%, 0.72%, 0.18% and 0.0055%).
    for (bits, within) in [(12, 0.04), (16, 0.015), (20, 0.005), (30, 1e-3)] {
        let items = 1u64 << bits;
        let ring =
            RingInstance::unidirectional(&[items, 0, 0, 0, 0, 0], &[0, 0, 0, 0, 0, items], &costs)
                .unwrap()
                .with_startups(&[0.5; 6], &[0.0; 6])
                .unwrap();
        let p = plan(&ring, None).unwrap();
        assert_eq!(validate(&ring, &p.schedule()).unwrap().makespan, p.makespan);
        // The slowest link carries every item: the bound is 1.5 per item.
        assert!(p.lower_bound >= 1.5 * items as f64);
        assert!(
            p.makespan <= p.lower_bound * (1.0 + within),
            "2^{bits} items: {} against the bound {} ({:.3}% above)",
            p.makespan,
            p.lower_bound,
            100.0 * (p.makespan / p.lower_bound - 1.0)
        );
    }
}
