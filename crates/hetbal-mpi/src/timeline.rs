//! Timelines of runs: when each message of a ring redistribution, a scatter or
//! a GEN_BLOCK redistribution really moved, beside when its plan said it would,
//! drawn as a Gantt chart with one lane per rank (the `--gantt` option of the
//! `hetbal-mpi` commands).
//!
//! - **Recording.** With [`Options::record`](crate::Options::record) on, the
//!   three operations note every message this rank sends or receives (a
//!   [`Message`]: direction, peer, items, GEN_BLOCK step, wall-clock start and
//!   end read with `MPI_Wtime`) in their report's `messages`. Off by default:
//!   then no clock is read and nothing is stored. On, a record is two clock reads
//!   and 56 bytes per message (1 MiB messages by default).
//! - **Gathering.** [`gather`] brings every rank's messages to rank 0, each rank's
//!   times taken relative to its own origin (read right after a barrier, so that
//!   the ranks' clocks need not agree).
//! - **The plan's side.** [`planned_ring`], [`planned_scatter`] and
//!   [`planned_genblock`] give the messages each rank's plan holds, in the plan's
//!   time units.
//! - **Drawing.** A [`Timeline`] holds both per lane, and [`Timeline::chart`]
//!   builds the Gantt chart that [`hetbal_draw::render_svg`] draws: in each lane
//!   the plan in the upper half, the measured messages in the lower half, on one
//!   time axis in seconds; in each half, sends above receives.

use hetbal::genblock::{GenBlockInstance, StepSchedule};
use hetbal::scatter::ScatterPlan;
use hetbal::Transfer;
use hetbal_draw::gantt::Rows;
use hetbal_draw::Chart;
use hetbal_draw::RGBColor;
use mpi::datatype::PartitionMut;
use mpi::traits::{Communicator, Root};
use mpi::Count;

/// Which way a message went, seen from the rank that recorded it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// The rank sent the message.
    Send,
    /// The rank received it.
    Receive,
}

/// One message of a rank (or one collective it took part in): what moved, with
/// whom, and when.
///
/// Times are seconds: `MPI_Wtime` in an operation's report, seconds since the
/// rank's origin once [`gather`]ed, time units of the plan in the `planned_*`
/// functions. A send runs from when the rank starts it (its pacing included
/// with emulated links) until it completes; a receive from when it is posted
/// (in a scatter's point-to-point path: when its header has arrived) until the
/// items are in place, so a receive includes the wait for a late sender.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Message {
    /// Sent or received.
    pub direction: Direction,
    /// The other rank, in the communicator the operation ran on (world ranks
    /// once the `hetbal-mpi` binary has translated a scatter's);
    /// `None` for a collective with every other rank (a scatter's
    /// MPI_Scatterv).
    pub peer: Option<usize>,
    /// Items (GEN_BLOCK: elements) in the message.
    pub items: u64,
    /// The GEN_BLOCK step the message belongs to (0 in rings and scatters).
    pub step: usize,
    /// When it started.
    pub start: f64,
    /// When it ended.
    pub end: f64,
}

/// What records an operation's messages: a vector when recording, nothing (and
/// no clock read) otherwise.
pub(crate) struct Recorder(Option<Vec<Message>>);

impl Recorder {
    /// A recorder that records when `on`.
    pub(crate) fn new(on: bool) -> Recorder {
        Recorder(on.then(Vec::new))
    }

    /// `MPI_Wtime` when recording, 0 otherwise.
    pub(crate) fn now(&self) -> f64 {
        if self.0.is_some() {
            mpi::time()
        } else {
            0.0
        }
    }

    /// Records a message of `items` items (none: not recorded) with `peer`,
    /// from `start` (a [`Recorder::now`]) to `end`.
    pub(crate) fn record(
        &mut self,
        direction: Direction,
        peer: Option<usize>,
        (items, step): (u64, usize),
        (start, end): (f64, f64),
    ) {
        if let Some(messages) = self.0.as_mut().filter(|_| items > 0) {
            messages.push(Message {
                direction,
                peer,
                items,
                step,
                start,
                end,
            });
        }
    }

    /// The messages recorded (none when not recording).
    pub(crate) fn finish(self) -> Vec<Message> {
        self.0.unwrap_or_default()
    }
}

/// Words of a message on the wire of [`gather`].
const WORDS: usize = 6;

/// Every rank's `messages`, at rank 0 (indexed by rank; `None` on the other
/// ranks), each rank's times minus its `origin` (its `MPI_Wtime` right after a
/// barrier before the operation: the ranks' clocks need not agree). Collective
/// over `comm`; every rank must call it.
///
/// # Complexity
/// Two gathers: O(messages) words to rank 0.
///
/// # Panics
/// When all the ranks' messages together exceed MPI's count limit (about 350
/// million messages).
///
/// # Example
/// ```no_run
/// use hetbal_mpi::ring::redistribute;
/// use hetbal_mpi::{timeline, Options};
/// use mpi::traits::{Communicator, CommunicatorCollectives};
/// let universe = mpi::initialize().expect("MPI");
/// let world = universe.world(); // 2 ranks
/// let mut items = vec![0u64; if world.rank() == 0 { 100 } else { 0 }];
/// let options = Options { record: true, ..Options::default() };
/// world.barrier();
/// let origin = mpi::time();
/// let report = redistribute(&world, &[100, 0], &[60, 0], &mut items, &options)?;
/// if let Some(all) = timeline::gather(&world, &report.messages, origin) {
///     println!("rank 1 recorded {} messages", all[1].len());
/// }
/// # Ok::<(), hetbal_mpi::RunError>(())
/// ```
pub fn gather<C: Communicator>(
    comm: &C,
    messages: &[Message],
    origin: f64,
) -> Option<Vec<Vec<Message>>> {
    let words: Vec<u64> = messages
        .iter()
        .flat_map(|m| {
            [
                u64::from(m.direction == Direction::Receive),
                m.peer.map_or(u64::MAX, |p| p as u64),
                m.items,
                m.step as u64,
                (m.start - origin).to_bits(),
                (m.end - origin).to_bits(),
            ]
        })
        .collect();
    let count = Count::try_from(words.len()).expect("messages within MPI's count limit");
    let root = comm.process_at_rank(0);
    if comm.rank() != 0 {
        root.gather_into(&count);
        root.gather_varcount_into(&words[..]);
        return None;
    }
    let mut counts: Vec<Count> = vec![0; comm.size() as usize];
    root.gather_into_root(&count, &mut counts[..]);
    let displs: Vec<Count> = counts
        .iter()
        .scan(0 as Count, |at, &c| {
            let d = *at;
            *at = at
                .checked_add(c)
                .expect("messages within MPI's count limit");
            Some(d)
        })
        .collect();
    let total: usize = counts.iter().map(|&c| c as usize).sum();
    let mut all = vec![0u64; total];
    {
        let mut partition = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
        root.gather_varcount_into_root(&words[..], &mut partition);
    }
    let decode = |w: &[u64]| Message {
        direction: if w[0] == 1 {
            Direction::Receive
        } else {
            Direction::Send
        },
        peer: (w[1] != u64::MAX).then_some(w[1] as usize),
        items: w[2],
        step: w[3] as usize,
        start: f64::from_bits(w[4]),
        end: f64::from_bits(w[5]),
    };
    Some(
        counts
            .iter()
            .zip(&displs)
            .map(|(&c, &d)| {
                all[d as usize..(d + c) as usize]
                    .chunks_exact(WORDS)
                    .map(decode)
                    .collect()
            })
            .collect(),
    )
}

/// Rank 0's `ok`, on every rank (a broadcast): how every rank learns that rank
/// 0 could, or could not, open a file it alone writes. Collective over `comm`.
///
/// Complexity: one broadcast of one byte.
pub fn root_says<C: Communicator>(comm: &C, ok: bool) -> bool {
    let mut flag = u8::from(ok);
    comm.process_at_rank(0).broadcast_into(&mut flag);
    flag == 1
}

/// A planned message of `items` items between ranks `from` and `to` over `span`:
/// the send on `from`, the receive on `to`, added to `lanes` (indexed by rank).
fn plan_both(
    lanes: &mut [Vec<Message>],
    (from, to): (usize, usize),
    items: u64,
    step: usize,
    span: (f64, f64),
) {
    let (start, end) = span;
    for (rank, direction, peer) in [(from, Direction::Send, to), (to, Direction::Receive, from)] {
        lanes[rank].push(Message {
            direction,
            peer: Some(peer),
            items,
            step,
            start,
            end,
        });
    }
}

/// The messages of a ring plan's `transfers` on `n` ranks, per rank (rank i is
/// processor i), in the plan's time units: each transfer a send on its sender
/// and a receive on its receiver.
///
/// Complexity: O(n + transfers).
///
/// # Example
/// ```
/// use hetbal::ring::{plan, RingInstance};
/// use hetbal_mpi::timeline::{planned_ring, Direction};
/// let ring = RingInstance::unidirectional(&[3, 1, 1], &[1, 1, 3], &[1.0; 3]).unwrap();
/// let lanes = planned_ring(3, &plan(&ring, None).unwrap().transfers);
/// assert_eq!(lanes[0][0].direction, Direction::Send); // P0 sends two items...
/// assert_eq!((lanes[0][0].peer, lanes[0][0].items), (Some(1), 2));
/// assert_eq!(lanes[2][0].direction, Direction::Receive); // ...that P2 receives
/// ```
pub fn planned_ring(n: usize, transfers: &[Transfer]) -> Vec<Vec<Message>> {
    let mut lanes = vec![Vec::new(); n];
    for t in transfers.iter().filter(|t| t.from < n && t.to < n) {
        plan_both(&mut lanes, (t.from, t.to), t.items, 0, (t.start, t.end));
    }
    lanes
}

/// The messages of a scatter plan, per processor (world rank), in the plan's
/// time units from the start of the scatter (the root holding every item): the
/// root's send to each processor of the order and that processor's receive,
/// `receive_start` to `receive_end`. The computing that follows is not drawn.
///
/// Complexity: O(p).
///
/// # Example
/// ```
/// use hetbal::scatter::{plan, Method, OrderPolicy, ScatterInstance};
/// use hetbal_mpi::timeline::planned_scatter;
/// let s = ScatterInstance::linear(10, 0, &[0.0, 0.1], &[1.0, 1.0]).unwrap();
/// let lanes = planned_scatter(&plan(&s, Method::Exact, OrderPolicy::Best).unwrap());
/// assert_eq!(lanes[0].len(), 1); // the root P0 sends to P1
/// assert_eq!(lanes[1][0].peer, Some(0));
/// ```
pub fn planned_scatter(plan: &ScatterPlan) -> Vec<Vec<Message>> {
    let p = plan.order.len();
    let mut lanes = vec![Vec::new(); p];
    let Some(&root) = plan.order.last() else {
        return lanes;
    };
    let t = &plan.timeline;
    for (k, (&i, &count)) in plan.order.iter().zip(&plan.counts).enumerate() {
        if i != root && count > 0 {
            let span = (
                t.receive_start[k] - plan.start,
                t.receive_end[k] - plan.start,
            );
            plan_both(&mut lanes, (root, i), count, 0, span);
        }
    }
    lanes
}

/// The messages of a GEN_BLOCK schedule, per rank (`max(P, Q)` of them), in
/// the instance's time units: step s starts when the previous one ends (step 0
/// at 0), its messages after the startup, each lasting `unit` per element, the
/// step until its largest message ends. A message of a rank to itself moves
/// nothing and is left out.
///
/// Complexity: O(ranks + pieces).
///
/// # Example
/// ```
/// use hetbal::genblock::{GenBlockInstance, Message, StepSchedule};
/// use hetbal_mpi::timeline::planned_genblock;
/// let g = GenBlockInstance::new(&[3, 3], &[5, 1], 0.5, 0.25).unwrap();
/// let m = |from, to, size| Message { from, to, size };
/// let schedule = StepSchedule { steps: vec![vec![m(0, 0, 3), m(1, 1, 1)], vec![m(1, 0, 2)]] };
/// let lanes = planned_genblock(&g, &schedule);
/// let send = lanes[1][0]; // rank 1 sends 2 elements in step 1
/// assert_eq!((send.step, send.start, send.end), (1, 1.75, 2.25));
/// ```
pub fn planned_genblock(instance: &GenBlockInstance, schedule: &StepSchedule) -> Vec<Vec<Message>> {
    let n = instance.sources().max(instance.targets());
    let mut lanes = vec![Vec::new(); n];
    let mut begin = 0.0;
    for (s, (step, largest)) in schedule.steps.iter().zip(schedule.largest()).enumerate() {
        let start = begin + instance.startup();
        for m in step.iter().filter(|m| m.from != m.to && m.size > 0) {
            let end = start + instance.unit() * m.size as f64;
            plan_both(&mut lanes, (m.from, m.to), m.size, s, (start, end));
        }
        begin = start + instance.unit() * largest as f64;
    }
    lanes
}

/// The operation a timeline shows: it names the chart and colours its bars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A ring redistribution: sends coloured by direction (to the successor, to
    /// the predecessor).
    Ring,
    /// A scatter: the root's sends.
    Scatter,
    /// A GEN_BLOCK redistribution: even and odd steps in two colours.
    GenBlock,
}

impl Kind {
    /// What the chart's title calls the operation.
    pub fn title(self) -> &'static str {
        match self {
            Kind::Ring => "ring redistribution",
            Kind::Scatter => "scatter",
            Kind::GenBlock => "GEN_BLOCK redistribution",
        }
    }
}

/// One lane of a [`Timeline`]: a rank, its planned and its measured messages.
#[derive(Clone, Debug, PartialEq)]
pub struct Lane {
    /// The rank (of the world communicator).
    pub rank: usize,
    /// The lane's name in the chart.
    pub name: String,
    /// The plan's messages of this rank, in the plan's time units.
    pub planned: Vec<Message>,
    /// The messages this rank recorded, in seconds since its origin.
    pub measured: Vec<Message>,
}

/// A run's planned and measured messages, one [`Lane`] per rank, ready to be
/// drawn ([`Timeline::chart`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// The operation.
    pub kind: Kind,
    /// The lanes, top to bottom.
    pub lanes: Vec<Lane>,
    /// The plan's makespan of the transfers, in its time units.
    pub planned_makespan: f64,
    /// Seconds per time unit of the plan when the links were emulated (the
    /// plan is then in seconds); `None`: the plan is drawn scaled to the
    /// measured makespan.
    pub scale: Option<f64>,
}

/// Rows of the bars in a lane: the plan's sends and receives, then the
/// measured ones (fractions of the lane's height from its bottom).
const PLANNED_SEND: Rows = (0.76, 0.97);
const PLANNED_RECEIVE: Rows = (0.545, 0.755);
const MEASURED_SEND: Rows = (0.245, 0.455);
const MEASURED_RECEIVE: Rows = (0.03, 0.24);

/// Send colours: the ring's directions, the scatter's root, GEN_BLOCK's steps
/// (those of the `hetbal` command's charts); receives in a lighter shade.
const SUCCESSOR: RGBColor = RGBColor(0x1F, 0x5F, 0xB4);
const PREDECESSOR: RGBColor = RGBColor(0xD9, 0x5F, 0x02);
const ROOT: RGBColor = PREDECESSOR;
const EVEN: RGBColor = SUCCESSOR;
const ODD: RGBColor = RGBColor(0x2C, 0xA0, 0x2C);

/// Messages of one kind closer in time than this fraction of the time axis are
/// drawn as one bar (at most five pixels or so).
const MERGE: f64 = 1.0 / 200.0;

/// `colour` mixed with white (55 % white).
const fn lighten(colour: RGBColor) -> RGBColor {
    const fn mix(channel: u8) -> u8 {
        (channel as u16 + (255 - channel as u16) * 11 / 20) as u8
    }
    RGBColor(mix(colour.0), mix(colour.1), mix(colour.2))
}

/// A duration for a title: seconds, milliseconds or microseconds, 3 digits.
fn duration(seconds: f64) -> String {
    if seconds >= 1.0 {
        format!("{seconds:.3} s")
    } else if seconds >= 1e-3 {
        format!("{:.3} ms", seconds * 1e3)
    } else {
        format!("{:.1} µs", seconds * 1e6)
    }
}

/// `messages` times `factor`, those of one direction, peer and step closer than
/// `gap` merged into one (items added up).
fn merged(messages: &[Message], factor: f64, gap: f64) -> Vec<Message> {
    let mut sorted: Vec<Message> = messages
        .iter()
        .map(|m| Message {
            start: m.start * factor,
            end: m.end * factor,
            ..*m
        })
        .collect();
    sorted.sort_by(|a, b| {
        (a.direction, a.peer, a.step)
            .cmp(&(b.direction, b.peer, b.step))
            .then(a.start.total_cmp(&b.start))
    });
    let mut out: Vec<Message> = Vec::with_capacity(sorted.len());
    for m in sorted {
        match out.last_mut() {
            Some(last)
                if (last.direction, last.peer, last.step) == (m.direction, m.peer, m.step)
                    && m.start - last.end <= gap =>
            {
                last.end = last.end.max(m.end);
                last.items += m.items;
            }
            _ => out.push(m),
        }
    }
    out
}

impl Timeline {
    /// The measured makespan: the latest end of a measured message, in seconds
    /// since the origin (0 when nothing was measured).
    ///
    /// Complexity: O(messages).
    pub fn measured_makespan(&self) -> f64 {
        let ends = self.lanes.iter().flat_map(|l| &l.measured).map(|m| m.end);
        ends.fold(0.0, f64::max)
    }

    /// Seconds per time unit of the plan in the chart: the emulated links'
    /// scale, else what makes the planned makespan last the measured one (1
    /// when either is 0).
    ///
    /// Complexity: O(messages).
    pub fn seconds_per_unit(&self) -> f64 {
        let measured = self.measured_makespan();
        match self.scale {
            Some(scale) => scale,
            None if measured > 0.0 && self.planned_makespan > 0.0 => {
                measured / self.planned_makespan
            }
            None => 1.0,
        }
    }

    /// The chart's title: the operation, the ranks, the planned and measured
    /// makespans, and how the plan's times are drawn.
    fn title(&self) -> String {
        let head = format!("{} on {} ranks", self.kind.title(), self.lanes.len());
        let measured = self.measured_makespan();
        let planned = self.planned_makespan;
        match self.scale {
            Some(scale) => format!(
                "{head}: planned {}, measured {} (emulated links)",
                duration(planned * scale),
                duration(measured)
            ),
            None if measured > 0.0 && planned > 0.0 => {
                let units = format!("{planned:.4}");
                let units = units.trim_end_matches('0').trim_end_matches('.');
                format!(
                    "{head}: measured {}, plan ({units} time units) scaled to it",
                    duration(measured)
                )
            }
            None => format!("{head}: nothing measured, plan in time units"),
        }
    }

    /// The send colour of a message on the lane of `rank` (of `n` ranks).
    fn colour(&self, rank: usize, m: &Message) -> RGBColor {
        let n = self.lanes.len().max(1);
        let send = match self.kind {
            Kind::Ring => {
                let clockwise = match m.direction {
                    Direction::Send => m.peer == Some((rank + 1) % n),
                    Direction::Receive => m.peer == Some((rank + n - 1) % n),
                };
                if clockwise {
                    SUCCESSOR
                } else {
                    PREDECESSOR
                }
            }
            Kind::Scatter => ROOT,
            Kind::GenBlock if m.step % 2 == 0 => EVEN,
            Kind::GenBlock => ODD,
        };
        match m.direction {
            Direction::Send => send,
            Direction::Receive => lighten(send),
        }
    }

    /// The Gantt chart of the run: a lane per rank (top to bottom as
    /// [`Timeline::lanes`]), in each lane the plan's messages in the upper half
    /// and the measured ones in the lower half, sends above receives in each
    /// half, on one time axis in seconds (the plan scaled by
    /// [`Timeline::seconds_per_unit`]). Sends are coloured as in the `hetbal`
    /// command's charts (ring: blue to the successor, orange to the
    /// predecessor; scatter: orange; GEN_BLOCK: blue and green steps in turn),
    /// receives in a lighter shade of their sender's colour. Messages of one
    /// direction, peer and step less than 1/200 of the time axis apart are drawn
    /// as one bar. The title gives the planned and measured makespans; the
    /// legend names the colours occurring and which row is which.
    ///
    /// Complexity: O(m log m) for m messages.
    ///
    /// # Example
    /// ```
    /// use hetbal_mpi::timeline::{Direction, Kind, Lane, Message, Timeline};
    /// let m = |direction, peer, start, end| Message {
    ///     direction, peer: Some(peer), items: 4, step: 0, start, end,
    /// };
    /// let timeline = Timeline {
    ///     kind: Kind::Ring,
    ///     lanes: vec![
    ///         Lane { rank: 0, name: "rank 0".into(),
    ///                planned: vec![m(Direction::Send, 1, 0.0, 2.0)],
    ///                measured: vec![m(Direction::Send, 1, 0.0, 0.7),
    ///                               m(Direction::Send, 1, 0.7, 1.1)] },
    ///         Lane { rank: 1, name: "rank 1".into(),
    ///                planned: vec![m(Direction::Receive, 0, 0.0, 2.0)],
    ///                measured: vec![m(Direction::Receive, 0, 0.0, 1.1)] },
    ///     ],
    ///     planned_makespan: 2.0,
    ///     scale: Some(0.5), // emulated links: 0.5 s per time unit
    /// };
    /// let chart = timeline.chart();
    /// assert_eq!(chart.lanes, ["rank 0", "rank 1"]);
    /// assert_eq!(chart.bars.len(), 4); // the two back-to-back sends are one bar
    /// assert!(chart.title.contains("planned 1.000 s, measured 1.100 s"));
    /// let svg = hetbal_draw::render_svg(&chart).unwrap();
    /// assert!(svg.contains("send to successor"));
    /// ```
    pub fn chart(&self) -> Chart {
        let per_unit = self.seconds_per_unit();
        let axis = self
            .measured_makespan()
            .max(self.planned_makespan * per_unit);
        let gap = axis * MERGE;
        let mut chart = Chart::new(self.title(), self.lanes.iter().map(|l| l.name.clone()));
        for (index, lane) in self.lanes.iter().enumerate() {
            let halves = [
                (&lane.planned, per_unit, PLANNED_SEND, PLANNED_RECEIVE),
                (&lane.measured, 1.0, MEASURED_SEND, MEASURED_RECEIVE),
            ];
            for (messages, factor, send_rows, receive_rows) in halves {
                for m in merged(messages, factor, gap) {
                    let rows = match m.direction {
                        Direction::Send => send_rows,
                        Direction::Receive => receive_rows,
                    };
                    let colour = self.colour(lane.rank, &m);
                    chart.bar(index, rows, (m.start, m.end), colour, Vec::new());
                }
            }
        }
        let sends: &[(&[RGBColor], &str)] = match self.kind {
            Kind::Ring => &[
                (&[SUCCESSOR], "send to successor"),
                (&[PREDECESSOR], "send to predecessor"),
            ],
            Kind::Scatter => &[(&[ROOT], "root sends")],
            Kind::GenBlock => &[(&[EVEN, ODD], "send, even and odd steps")],
        };
        let occurs = |c: &RGBColor| chart.bars.iter().any(|b| b.colour == *c);
        let mut legend = Vec::new();
        let mut shades = Vec::new();
        for &(colours, text) in sends {
            let seen: Vec<RGBColor> = colours.iter().copied().filter(|c| occurs(c)).collect();
            shades.extend(colours.iter().map(|&c| lighten(c)).filter(|c| occurs(c)));
            if !seen.is_empty() {
                legend.push((seen, text.to_string()));
            }
        }
        if !shades.is_empty() {
            legend.push((shades, "receive".to_string()));
        }
        legend.push((
            Vec::new(),
            "each lane: plan above, measured below; sends over receives".to_string(),
        ));
        chart.legend = legend;
        chart
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(direction: Direction, peer: usize, step: usize, span: (f64, f64)) -> Message {
        Message {
            direction,
            peer: Some(peer),
            items: 1,
            step,
            start: span.0,
            end: span.1,
        }
    }

    #[test]
    fn close_messages_merge_and_others_do_not() {
        let send = |peer, step, span| message(Direction::Send, peer, step, span);
        let messages = [
            send(1, 0, (0.0, 1.0)),
            send(1, 0, (1.004, 2.0)), // 0.004 apart: one bar with the first
            send(1, 0, (3.0, 4.0)),   // a second apart: a bar of its own
            send(2, 0, (1.0, 1.5)),   // another peer
            send(1, 1, (2.0, 2.5)),   // another step
        ];
        let bars = merged(&messages, 2.0, 0.01);
        assert_eq!(bars.len(), 4);
        assert_eq!((bars[0].start, bars[0].end, bars[0].items), (0.0, 4.0, 2));
    }

    #[test]
    fn plans_are_scaled_to_the_measured_makespan_without_emulation() {
        let lane = |rank, direction, peer| Lane {
            rank,
            name: format!("rank {rank}"),
            planned: vec![message(direction, peer, 0, (0.0, 10.0))],
            measured: vec![message(direction, peer, 0, (0.001, 0.002))],
        };
        let mut timeline = Timeline {
            kind: Kind::Scatter,
            lanes: vec![lane(0, Direction::Receive, 1), lane(1, Direction::Send, 0)],
            planned_makespan: 10.0,
            scale: None,
        };
        assert_eq!(timeline.seconds_per_unit(), 0.0002);
        let chart = timeline.chart();
        assert_eq!(
            chart.title,
            "scatter on 2 ranks: measured 2.000 ms, plan (10 time units) scaled to it"
        );
        // Planned bars in the upper half, measured in the lower; the root's
        // send above, the receive (a lighter shade) below.
        let rows: Vec<(usize, Rows)> = chart.bars.iter().map(|b| (b.lane, b.rows)).collect();
        assert_eq!(
            rows,
            [
                (0, PLANNED_RECEIVE),
                (0, MEASURED_RECEIVE),
                (1, PLANNED_SEND),
                (1, MEASURED_SEND)
            ]
        );
        assert_eq!(chart.bars[2].span, (0.0, 0.002));
        assert_eq!(chart.bars[0].colour, lighten(ROOT));
        let texts: Vec<&str> = chart.legend.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(
            texts,
            [
                "root sends",
                "receive",
                "each lane: plan above, measured below; sends over receives"
            ]
        );
        timeline.lanes.iter_mut().for_each(|l| l.measured.clear());
        assert!(timeline
            .chart()
            .title
            .ends_with("nothing measured, plan in time units"));
    }

    #[test]
    fn ring_directions_and_steps_colour_the_bars() {
        // Three ranks: rank 1 receives from 0 (clockwise) and sends to 0
        // (counterclockwise).
        let timeline = Timeline {
            kind: Kind::Ring,
            lanes: (0..3)
                .map(|rank| Lane {
                    rank,
                    name: format!("rank {rank}"),
                    planned: Vec::new(),
                    measured: Vec::new(),
                })
                .collect(),
            planned_makespan: 1.0,
            scale: Some(1.0),
        };
        let receive = message(Direction::Receive, 0, 0, (0.0, 1.0));
        let send = message(Direction::Send, 0, 0, (0.0, 1.0));
        assert_eq!(timeline.colour(1, &receive), lighten(SUCCESSOR));
        assert_eq!(timeline.colour(1, &send), PREDECESSOR);
        let steps = Timeline {
            kind: Kind::GenBlock,
            ..timeline.clone()
        };
        let odd = message(Direction::Send, 0, 3, (0.0, 1.0));
        assert_eq!(steps.colour(1, &odd), ODD);
        assert_eq!(duration(0.5e-3), "500.0 µs");
        assert_eq!(duration(12.0), "12.000 s");
    }
}
