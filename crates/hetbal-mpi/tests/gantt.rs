//! `hetbal-mpi ring|scatter|genblock --gantt FILE.svg` under `mpirun`: the SVG
//! has one lane per rank, the plan's bars in the upper half of each lane and the
//! measured ones in the lower half (read back from the bars' positions), the
//! legend, and as many planned bars as the library draws for the plan; a path
//! that cannot be written is refused on every rank before anything moves.

mod common;

use std::path::PathBuf;

use common::{alone, assert_refused, mpirun};
use hetbal::genblock::GenBlockInstance;
use hetbal::ring::RingInstance;
use hetbal::scatter::{plan, Method, OrderPolicy, ScatterInstance};
use hetbal_mpi::timeline::{
    planned_genblock, planned_ring, planned_scatter, Direction, Kind, Lane, Message, Timeline,
};

/// A file of the tests: in the build directory (Cargo's temporary directory for
/// integration tests), overwritten by the next run instead of piling up in /tmp.
fn temp_path(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hetbal-mpi-gantt");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Writes `json` to a file of the test directory.
fn write(name: &str, json: &str) -> PathBuf {
    let path = temp_path(name);
    std::fs::write(&path, json).unwrap();
    path
}

/// A bar of the SVG: its lane, whether it is in the plan's half, whether it is a
/// send (upper row of its half).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Bar {
    lane: usize,
    planned: bool,
    send: bool,
}

/// What the test reads back from a chart: its title, lane names (top to
/// bottom), legend texts, and bars.
struct Svg {
    text: String,
    lanes: Vec<String>,
    bars: Vec<Bar>,
}

/// The value of attribute `name` in the tag `tag`.
fn attribute(tag: &str, name: &str) -> f64 {
    let at = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
    tag[at..at + tag[at..].find('"').unwrap()].parse().unwrap()
}

/// Reads an SVG chart of `lanes` lanes: lane names and their centres (the
/// texts left of the lanes), and the bars, each placed by its centre in its
/// lane: the plan's sends about 0.365 lane above its centre, its receives 0.15
/// above, the measured sends 0.15 below, the measured receives 0.365 below.
fn read_svg(text: String, names: &[String]) -> Svg {
    let mut centres = Vec::new();
    for name in names {
        let end = text
            .find(&format!(">\n{name}\n</text>"))
            .unwrap_or_else(|| panic!("no lane {name}"));
        let start = text[..end].rfind("<text").unwrap();
        centres.push(attribute(&text[start..end], "y"));
    }
    let height = (centres[centres.len() - 1] - centres[0]) / (names.len() - 1).max(1) as f64;
    let mut bars = Vec::new();
    for tag in text.split("<rect").skip(1) {
        let tag = &tag[..tag.find("/>").unwrap()];
        let (y, h) = (attribute(tag, "y"), attribute(tag, "height"));
        let centre = y + h / 2.0;
        // Bars are thin; stripes fill a lane, legend swatches lie below the lanes.
        let lane = centres
            .iter()
            .position(|&c| (centre - c).abs() < height / 2.0 - 0.5);
        let Some(lane) = lane.filter(|_| h < 0.3 * height) else {
            continue;
        };
        let offset = (centre - centres[lane]) / height;
        let planned = offset < 0.0;
        let outer = offset.abs() > 0.26;
        bars.push(Bar {
            lane,
            planned,
            send: planned == outer,
        });
    }
    bars.sort();
    Svg {
        text,
        lanes: names.to_vec(),
        bars,
    }
}

impl Svg {
    /// The (planned, send) rows of `lane` holding at least one bar.
    fn rows(&self, lane: usize) -> Vec<(bool, bool)> {
        let mut rows: Vec<(bool, bool)> = (self.bars.iter())
            .filter(|b| b.lane == lane)
            .map(|b| (b.planned, b.send))
            .collect();
        rows.dedup();
        rows
    }

    /// Checks the chart against the plan's messages per lane: as many planned
    /// bars as `expected` (the library's chart of the plan alone), and in every
    /// lane, measured bars in the rows (send, receive) where the plan has bars,
    /// and none elsewhere.
    fn check(&self, planned: &[Vec<Message>], expected: usize, legend: &[&str]) {
        for text in legend
            .iter()
            .chain(&["each lane: plan above, measured below; sends over receives"])
        {
            assert!(
                self.text.contains(&format!(">\n{text}\n</text>")),
                "legend {text}"
            );
        }
        let planned_bars = self.bars.iter().filter(|b| b.planned).count();
        assert_eq!(planned_bars, expected, "planned bars: {:?}", self.bars);
        for (lane, messages) in planned.iter().enumerate() {
            // Each direction of the plan, in both halves.
            let mut want: Vec<(bool, bool)> = (messages.iter())
                .map(|m| m.direction == Direction::Send)
                .flat_map(|send| [(true, send), (false, send)])
                .collect();
            want.sort();
            want.dedup();
            assert_eq!(self.rows(lane), want, "lane {}", self.lanes[lane]);
        }
    }
}

/// The number of bars the library draws for `planned` alone, its times in
/// seconds (`scale` per time unit).
fn planned_bars(kind: Kind, planned: &[Vec<Message>], makespan: f64, scale: f64) -> usize {
    let lanes = planned.iter().enumerate().map(|(rank, messages)| Lane {
        rank,
        name: String::new(),
        planned: messages.clone(),
        measured: Vec::new(),
    });
    let timeline = Timeline {
        kind,
        lanes: lanes.collect(),
        planned_makespan: makespan,
        scale: Some(scale),
    };
    timeline.chart().bars.len()
}

/// Runs `args` with `--gantt` into a new file and `--json`; the chart, read.
fn chart_of(ranks: usize, args: &[&str], svg: &str, names: &[String]) -> (Svg, serde_json::Value) {
    let path = temp_path(svg);
    let mut all = args.to_vec();
    all.extend(["--json", "--gantt", path.to_str().unwrap()]);
    let run = mpirun(ranks, &all);
    assert_eq!(run.status, Some(0), "{}", run.story());
    let report: serde_json::Value = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("not one JSON report ({e}){}", run.story()));
    assert_eq!(report["verified"], true, "{}", run.story());
    assert!(
        run.stderr.contains("Gantt chart written to"),
        "{}",
        run.story()
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("<svg"));
    (read_svg(text, names), report)
}

/// A ring of 4 ranks, both directions, forwarding, on emulated links: the plan
/// is in seconds (it lasts one second by default).
#[test]
fn ring_with_emulated_links() {
    let json = r#"{"ring": "bidirectional", "processors": [
        {"load": 60, "target": 10, "c_succ": 1.0, "c_pred": 2.0},
        {"load": 2, "target": 30, "c_succ": 2.0, "c_pred": 1.0},
        {"load": 2, "target": 20, "c_succ": 0.5, "c_pred": 1.5},
        {"load": 16, "target": 20, "c_succ": 1.0, "c_pred": 0.5}]}"#;
    let path = write("ring.json", json);
    let ring = RingInstance::from_spec(serde_json::from_str(json).unwrap()).unwrap();
    let plan = hetbal::ring::plan(&ring, None).unwrap();
    let names: Vec<String> = (0..4).map(|i| format!("P{i} (rank {i})")).collect();
    let args = [
        "ring",
        "--instance",
        path.to_str().unwrap(),
        "--item-bytes",
        "256",
    ];
    let (svg, report) = chart_of(
        4,
        &[&args[..], &["--emulate-links"]].concat(),
        "ring.svg",
        &names,
    );
    assert!(
        svg.text
            .contains("ring redistribution on 4 ranks: planned 1.000 s, measured"),
        "title"
    );
    let planned = planned_ring(4, &plan.transfers);
    let scale = report["planned_makespan"].as_f64().unwrap() / plan.makespan;
    let expected = planned_bars(Kind::Ring, &planned, plan.makespan, scale);
    svg.check(&planned, expected, &["send to successor", "receive"]);
}

/// A scatter of 4 ranks with MPI_Scatterv (the root's collective has no
/// peer), links not emulated: the plan is scaled to the measured makespan.
#[test]
fn scatter_in_one_collective() {
    let json = r#"{"items": 2000, "root": "P0", "processors": [
        {"name": "P0", "comm": {"per_item": 0.0, "startup": 0.0}, "comp": {"per_item": 1.0, "startup": 0.0}},
        {"name": "P1", "comm": {"per_item": 0.1, "startup": 0.5}, "comp": {"per_item": 1.0, "startup": 0.0}},
        {"name": "P2", "comm": {"per_item": 0.2, "startup": 0.5}, "comp": {"per_item": 0.5, "startup": 0.0}},
        {"name": "P3", "comm": {"per_item": 0.05, "startup": 0.5}, "comp": {"per_item": 2.0, "startup": 0.0}}]}"#;
    let path = write("scatter.json", json);
    let instance = ScatterInstance::from_spec(serde_json::from_str(json).unwrap()).unwrap();
    let plan = plan(&instance, Method::Exact, OrderPolicy::Best).unwrap();
    // Lanes in the plan's order, root last.
    let names: Vec<String> = plan
        .order
        .iter()
        .map(|&i| format!("P{i} (rank {i})"))
        .collect();
    let args = [
        "scatter",
        "--instance",
        path.to_str().unwrap(),
        "--item-bytes",
        "1024",
    ];
    let (svg, _) = chart_of(4, &args, "scatter.svg", &names);
    assert!(svg.text.contains("scatter on 4 ranks: measured"), "title");
    assert!(svg.text.contains("time units) scaled to it"), "title");
    let by_rank = planned_scatter(&plan);
    let planned: Vec<Vec<Message>> = plan.order.iter().map(|&i| by_rank[i].clone()).collect();
    let comm_time = plan.timeline.receive_start[3] - plan.start;
    let expected = planned_bars(Kind::Scatter, &planned, comm_time, 1.0);
    assert_eq!(expected, 6, "three sends of the root, three receives");
    svg.check(&planned, expected, &["root sends", "receive"]);
}

/// A GEN_BLOCK redistribution on 6 ranks, its steps on emulated links.
#[test]
fn genblock_steps_with_emulated_links() {
    let json = r#"{"source": [7, 16, 11, 10, 7, 49], "target": [15, 16, 10, 16, 15, 28],
        "startup": 0.5, "unit": 1.0}"#;
    let path = write("genblock.json", json);
    let instance = GenBlockInstance::from_spec(serde_json::from_str(json).unwrap()).unwrap();
    let plan = hetbal::genblock::plan(&instance, hetbal::genblock::Method::Best);
    let names: Vec<String> = (0..6).map(|i| format!("rank {i}")).collect();
    let args = [
        "genblock",
        "--instance",
        path.to_str().unwrap(),
        "--emulate-links",
    ];
    let (svg, _) = chart_of(6, &args, "genblock.svg", &names);
    assert!(svg
        .text
        .contains("GEN_BLOCK redistribution on 6 ranks: planned 1.000 s"));
    let planned = planned_genblock(&instance, &plan.schedule);
    let expected = planned_bars(Kind::GenBlock, &planned, plan.cost, 1.0 / plan.cost);
    svg.check(&planned, expected, &["send, even and odd steps", "receive"]);
}

/// A path rank 0 cannot write: refused on every rank (exit status 2) before
/// anything moves: no report, no chart. A run refused for another reason
/// leaves no empty chart behind.
#[test]
fn an_unwritable_chart_is_refused_before_anything_moves() {
    let json = r#"{"ring": "unidirectional", "processors": [
        {"load": 6, "target": 3, "c_succ": 1.0}, {"load": 1, "target": 4, "c_succ": 1.0}]}"#;
    let instance = write("small.json", json);
    let unwritable = temp_path("no-such-directory").join("chart.svg");
    let args = [
        "ring",
        "--instance",
        instance.to_str().unwrap(),
        "--json",
        "--gantt",
    ];
    let run = mpirun(2, &[&args[..], &[unwritable.to_str().unwrap()]].concat());
    assert_refused(&run);
    assert!(
        run.stderr.contains("--gantt") && run.stderr.contains("cannot write"),
        "{}",
        run.story()
    );
    assert!(run.stdout.trim().is_empty(), "something ran{}", run.story());
    assert!(!unwritable.exists());
    // Refused for the number of ranks: the chart's new file is removed again.
    let chart = temp_path("refused.svg");
    let run = mpirun(3, &[&args[..], &[chart.to_str().unwrap()]].concat());
    assert!(run.stderr.contains("mpirun -np 2"), "{}", run.story());
    assert!(!chart.exists(), "an empty chart was left behind");
    // Without mpirun (one rank): exit status 2 exactly.
    let (status, stderr) = alone(&[&args[..], &[unwritable.to_str().unwrap()]].concat());
    assert_eq!(status, Some(2), "{stderr}");
    assert!(stderr.contains("cannot write"), "{stderr}");
}
