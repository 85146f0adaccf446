//! Gantt charts of hetbal's plans: a ring redistribution, a scatter, a
//! GEN_BLOCK step schedule, a weighted partition (each processor's time). Each builder returns a [`Chart`] that
//! [`render_svg`](crate::render_svg) draws (or that a caller adds to).

use hetbal::genblock::{GenBlockInstance, StepSchedule};
use hetbal::ring::RingInstance;
use hetbal::scatter::{ScatterInstance, Timeline};
use hetbal::Schedule;
use plotters::style::RGBColor;

use crate::gantt::{Chart, LOWER, SPAN, UPPER, WHOLE};

/// Mixes `colour` with white (55 % white).
const fn lighten(colour: RGBColor) -> RGBColor {
    const fn mix(channel: u8) -> u8 {
        (channel as u16 + (255 - channel as u16) * 11 / 20) as u8
    }
    RGBColor(mix(colour.0), mix(colour.1), mix(colour.2))
}

/// Send bars towards the successor `(i+1) mod n` (blue), towards the predecessor
/// (orange); receive bars in a lighter shade of the sender's direction.
pub(crate) const SUCCESSOR: RGBColor = RGBColor(0x1F, 0x5F, 0xB4);
const PREDECESSOR: RGBColor = RGBColor(0xD9, 0x5F, 0x02);
/// The start-up of a message (dark grey), drawn apart from the items it precedes.
const STARTUP: RGBColor = RGBColor(0x55, 0x55, 0x55);

/// The most items of a paced train drawn one bar each.
const MAX_PACED_BARS: u64 = 64;

/// The Gantt chart of a ring schedule: a lane per processor (the ring's names, in
/// index order), sends in the upper row coloured by direction (blue to the
/// successor, orange to the predecessor), receives in the lower row in a lighter
/// shade, item counts in the bars wide enough; the legend names only the
/// directions that occur.
///
/// On a link with a start-up (`l_succ`, `l_pred` of the ring) a transfer is one
/// message: its start-up is drawn apart, as a dark grey bar in the sender's row
/// before the items it precedes, and the items (sent and received) fill the rest
/// of the transfer.
///
/// A transfer between processors beyond the ring makes
/// [`render_svg`](crate::render_svg) refuse the chart. O(n + m) for n processors
/// and m transfers.
///
/// # Example
/// ```
/// use hetbal::ring::RingInstance;
/// use hetbal::{Schedule, Transfer};
///
/// // One transfer of 3 items at 0.5 s each, after a start-up of 1 s.
/// let ring = RingInstance::unidirectional(&[4, 1], &[1, 4], &[0.5, 0.5])?
///     .with_startups(&[1.0, 1.0], &[0.0, 0.0])?;
/// let send = Transfer::new(0, 1, 3, 0.0, 2.5);
/// let chart = hetbal_draw::ring_chart("one message".into(), &ring, &Schedule::new(vec![send]));
/// assert_eq!(chart.bars.len(), 3); // the start-up, the send and the receive
/// assert_eq!(chart.bars[0].span, (0.0, 1.0));
/// assert_eq!(chart.legend[0].1, "send to successor (upper row)");
/// assert_eq!(chart.legend[2].1, "start-up of a message (before its items)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn ring_chart(title: String, ring: &RingInstance, schedule: &Schedule) -> Chart {
    let n = ring.len().max(1);
    let mut chart = Chart::new(title, ring.names().iter().cloned());
    // A ring's costs are in a unit of the caller's.
    chart.time_label = "time".to_string();
    let mut seen = [false; 2];
    let mut startups = false;
    for t in &schedule.transfers {
        let successor = t.to == (t.from + 1) % n;
        seen[usize::from(!successor)] = true;
        let colour = if successor { SUCCESSOR } else { PREDECESSOR };
        let startup = ring.startup(t.from, t.to);
        let items_from = if startup > 0.0 {
            startups = true;
            let items_from = (t.start + startup).min(t.end);
            chart.bar(t.from, UPPER, (t.start, items_from), STARTUP, Vec::new());
            items_from
        } else {
            t.start
        };
        // A paced train: each item its own bar while they can be told apart, one
        // bar over the whole train (labelled with its count) beyond.
        let spans: Vec<(f64, f64, String)> = match t.period {
            Some(period) if t.items <= MAX_PACED_BARS => {
                let cost = t.item_time();
                (0..t.items)
                    .map(|k| {
                        let start = t.start + k as f64 * period;
                        (start, start + cost, "1".to_string())
                    })
                    .collect()
            }
            _ => vec![(items_from, t.end, t.items.to_string())],
        };
        for (lane, rows, colour) in [(t.from, UPPER, colour), (t.to, LOWER, lighten(colour))] {
            for (from, to, label) in &spans {
                chart.bar(lane, rows, (*from, *to), colour, vec![label.clone()]);
            }
        }
    }
    let directions = [(SUCCESSOR, "successor"), (PREDECESSOR, "predecessor")];
    let occurring = || (0..2).filter(|&d| seen[d]).map(|d| directions[d]);
    for (colour, name) in occurring() {
        let text = format!("send to {name} (upper row)");
        chart.legend.push((vec![colour], text));
    }
    let shades: Vec<RGBColor> = occurring().map(|(c, _)| lighten(c)).collect();
    if !shades.is_empty() {
        let text = if shades.len() == 1 {
            "receive (lower row)"
        } else {
            "receive, shade of the sender's direction (lower row)"
        };
        chart.legend.push((shades, text.to_string()));
    }
    if startups {
        let text = "start-up of a message (before its items)";
        chart.legend.push((vec![STARTUP], text.to_string()));
    }
    chart
}

/// What a processor does during a bar, its colour and its legend.
const ACTIVITIES: [(RGBColor, &str); 4] = [
    (RGBColor(0xD0, 0xD0, 0xD0), "waiting"),
    (RGBColor(0x1F, 0x5F, 0xB4), "receiving"),
    (RGBColor(0x2C, 0xA0, 0x2C), "computing"),
    (
        RGBColor(0xD9, 0x5F, 0x02),
        "sending (root, or moving the items to it)",
    ),
];
const WAITING: usize = 0;
const RECEIVING: usize = 1;
const COMPUTING: usize = 2;
const SENDING: usize = 3;

/// The Gantt chart of a distribution `(order, counts, timeline)`: a lane per
/// processor in sending order (root last) with its item count after its bars,
/// like the paper's Figures 2–4: each processor waits, receives, then computes;
/// the root sends while the others wait. With a root chosen elsewhere (`start >
/// 0`), the data holder (named `holder`) first sends the items to the root. O(p).
///
/// # Example
/// ```
/// use hetbal::scatter::{plan, Method, OrderPolicy, ScatterInstance};
///
/// // 10 items on P0, sent to P1 at 0.1 s per item; both compute 1 s per item.
/// let instance = ScatterInstance::linear(10, 0, &[0.0, 0.1], &[1.0, 1.0])?;
/// let p = plan(&instance, Method::Exact, OrderPolicy::Best)?;
/// let chart = hetbal_draw::scatter_chart(
///     "scatter".into(), &instance, (&p.order, &p.counts, &p.timeline), p.start, "P0");
/// assert_eq!(chart.lanes, ["P1", "P0"]); // sending order, root last
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn scatter_chart(
    title: String,
    instance: &ScatterInstance,
    (order, counts, t): (&[usize], &[u64], &Timeline),
    start: f64,
    holder: &str,
) -> Chart {
    let names = order.iter().map(|&i| instance.name(i).to_string());
    let mut chart = Chart::new(title, names);
    for (k, &i) in order.iter().enumerate() {
        let mut push = |activity: usize, s: f64, e: f64| {
            if e > s {
                chart.bar(k, WHOLE, (s, e), ACTIVITIES[activity].0, Vec::new());
            }
        };
        let is_holder = instance.name(i) == holder;
        if start > 0.0 && is_holder {
            push(SENDING, 0.0, start);
        }
        if i == instance.root() {
            push(RECEIVING, 0.0, start);
            push(SENDING, start, t.receive_start[k]);
        } else {
            let from = if is_holder { start } else { 0.0 };
            push(WAITING, from, t.receive_start[k]);
            push(RECEIVING, t.receive_start[k], t.receive_end[k]);
        }
        push(COMPUTING, t.receive_end[k], t.finish_times[k]);
        chart.notes[k] = Some(counts[k].to_string());
    }
    chart.legend = ACTIVITIES
        .iter()
        .map(|&(colour, text)| (vec![colour], text.to_string()))
        .chain([(Vec::new(), "numbers: items per processor".to_string())])
        .collect();
    chart
}

/// Bars of even steps, of odd steps.
const EVEN: RGBColor = RGBColor(0x1F, 0x5F, 0xB4);
const ODD: RGBColor = RGBColor(0x2C, 0xA0, 0x2C);

/// The Gantt chart of a step schedule: a lane per source (S0, S1, ...) then per
/// destination (T0, T1, ...); each message a bar on its sender's lane (labelled
/// with its destination and size) and on its receiver's (its source and size)
/// during its step, after the step's startup (grey), steps in alternating
/// colours. O(P + Q + pieces).
///
/// # Example
/// ```
/// use hetbal::genblock::{plan, GenBlockInstance, Method};
///
/// let g = GenBlockInstance::new(&[6, 2], &[2, 6], 1.0, 0.5)?;
/// let p = plan(&g, Method::Best);
/// let chart = hetbal_draw::genblock_chart("GEN_BLOCK".into(), &g, &p.schedule);
/// assert_eq!(chart.lanes, ["S0", "S1", "T0", "T1"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn genblock_chart(title: String, g: &GenBlockInstance, schedule: &StepSchedule) -> Chart {
    let p = g.sources();
    let names = (0..p).map(|i| format!("S{i}"));
    let mut chart = Chart::new(
        title,
        names.chain((0..g.targets()).map(|j| format!("T{j}"))),
    );
    let mut begin = 0.0;
    for (c, (step, largest)) in schedule.steps.iter().zip(schedule.largest()).enumerate() {
        let start = begin + g.startup();
        if g.startup() > 0.0 {
            chart.spans.push((begin, start));
        }
        let colour = if c % 2 == 0 { EVEN } else { ODD };
        for m in step {
            let end = start + g.unit() * m.size as f64;
            let ends = [(m.from, "to", 'T', m.to), (p + m.to, "from", 'S', m.from)];
            for (lane, word, side, other) in ends {
                let size = m.size;
                let labels = vec![
                    format!("{word} {side}{other}: {size}"),
                    format!("{side}{other}: {size}"),
                    size.to_string(),
                ];
                chart.bar(lane, WHOLE, (start, end), colour, labels);
            }
        }
        begin = start + g.unit() * largest as f64;
    }
    chart.legend = vec![
        (vec![EVEN], "even steps".to_string()),
        (vec![ODD], "odd steps".to_string()),
    ];
    if g.startup() > 0.0 {
        chart.legend.push((vec![SPAN], "startups".to_string()));
    }
    chart
        .legend
        .push((Vec::new(), "labels: the other end, elements".to_string()));
    chart
}

/// Processors at the bottleneck (red), the others (blue).
const AT_BOTTLENECK: RGBColor = RGBColor(0xC0, 0x39, 0x2B);
const BELOW: RGBColor = RGBColor(0x1F, 0x5F, 0xB4);

/// The chart of a weighted partition: one lane per processor (in the order that
/// takes the items), a bar from 0 to its time per iteration, red where it is at
/// the bottleneck; each lane notes its range of items. The bars end together
/// when the work is balanced; the grey span is what the slowest processor
/// waits beyond the lower bound. O(p).
///
/// # Example
/// ```
/// use hetbal::partition::{partition, PartitionDocument};
///
/// let p = partition(&[3.0, 1.0, 2.0, 2.0], &[1.0, 100.0, 1.0])?;
/// let chart = hetbal_draw::partition_chart("three processors".into(), &PartitionDocument::optimal(&p));
/// assert_eq!(chart.lanes, ["P0", "P1", "P2"]);
/// assert_eq!(chart.bars.len(), 2); // P1 gets nothing
/// assert_eq!(chart.notes[1].as_deref(), Some("no items"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn partition_chart(title: String, doc: &hetbal::partition::PartitionDocument) -> Chart {
    let p = doc.times.len();
    let name = |k: usize| format!("P{}", doc.order.as_ref().map_or(k, |o| o[k]));
    let mut chart = Chart::new(title, (0..p).map(name));
    for k in 0..p {
        let (a, b) = (doc.cuts[k], doc.cuts[k + 1]);
        let t = doc.times[k];
        if t > 0.0 {
            let colour = if t >= doc.bottleneck {
                AT_BOTTLENECK
            } else {
                BELOW
            };
            chart.bar(k, WHOLE, (0.0, t), colour, Vec::new());
        }
        chart.notes[k] = Some(if a == b {
            "no items".to_string()
        } else {
            format!("items {a}..{b}")
        });
    }
    if doc.bottleneck > doc.lower_bound {
        chart.spans.push((doc.lower_bound, doc.bottleneck));
    }
    chart.legend = vec![
        (vec![AT_BOTTLENECK], "at the bottleneck".to_string()),
        (vec![BELOW], "below it".to_string()),
    ];
    if doc.bottleneck > doc.lower_bound {
        chart
            .legend
            .push((vec![SPAN], "above the optimum (the tolerance)".to_string()));
    }
    chart
}
