//! The Gantt charts of `ring plan`, `genblock plan` and `scatter plan`, read back
//! from the SVG they write: lanes in order, a bar per transfer in the right row,
//! labels where they fit, legends that name only what occurs, and `--gantt` paths
//! checked before anything is printed.

mod support;

use support::TestDir;

/// Send bars to the successor and to the predecessor, and their receive shades,
/// as the SVG writes them.
const SUCCESSOR: &str = "#1F5FB4";
const PREDECESSOR: &str = "#D95F02";
const SUCCESSOR_SHADE: &str = "#9AB7DD";
const PREDECESSOR_SHADE: &str = "#EDB78D";

/// A ring of `n` processors where P0 holds everything and P(n/2) wants it all:
/// items go both ways round a bidirectional ring, one way round a unidirectional.
fn ring(kind: &str, n: usize) -> String {
    let processors: Vec<String> = (0..n)
        .map(|i| {
            let (load, target) = match i {
                0 => (2 * n, 1),
                i if i == n / 2 => (1, 2 * n),
                _ => (1, 1),
            };
            format!(
                r#"{{"name": "P{i}", "load": {load}, "target": {target}, "c_succ": 1.0, "c_pred": 1.0}}"#
            )
        })
        .collect();
    format!(
        r#"{{"ring": "{kind}", "processors": [{}]}}"#,
        processors.join(",")
    )
}

fn rects_filled_with(svg: &str, colour: &str) -> usize {
    let fill = format!("fill=\"{colour}\"");
    svg.lines()
        .filter(|line| line.starts_with("<rect") && line.contains(&fill))
        .count()
}

/// The `y` attribute of the `<text>` element whose whole content is `content`.
fn text_y(svg: &str, content: &str) -> Option<f64> {
    let end = svg.find(&format!(">\n{content}\n</text>"))?;
    let tag = &svg[svg[..end].rfind("<text")?..end];
    tag.split(" y=\"").nth(1)?.split('"').next()?.parse().ok()
}

/// Vertical centres of the `<rect>` elements filled with `colour`.
fn rect_centres(svg: &str, colour: &str) -> Vec<f64> {
    let fill = format!("fill=\"{colour}\"");
    let attribute = |line: &str, name: &str| -> f64 {
        let value = line.split(&format!(" {name}=\"")).nth(1).expect(name);
        value.split('"').next().expect(name).parse().expect(name)
    };
    svg.lines()
        .filter(|line| line.starts_with("<rect") && line.contains(&fill))
        .map(|line| attribute(line, "y") + attribute(line, "height") / 2.0)
        .collect()
}

/// Plans `instance` with `--gantt` and returns the SVG and the plan's transfers
/// `(from, to)`.
fn ring_chart(dir: &TestDir, instance: &str) -> (String, Vec<(usize, usize)>) {
    dir.write("ring.json", instance);
    dir.run(&["ring", "plan", "ring.json", "--gantt", "g.svg"])
        .expect_status(0);
    let plan = dir.run(&["ring", "plan", "ring.json", "--json"]).json();
    let transfers = plan["transfers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["from"].as_u64().unwrap() as usize,
                t["to"].as_u64().unwrap() as usize,
            )
        })
        .collect();
    let svg = dir.read("g.svg");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    (svg, transfers)
}

#[test]
fn ring_charts_show_each_transfer_in_its_rows_and_only_the_directions_used() {
    let dir = TestDir::new("gantt-ring");
    for (kind, n) in [
        ("bidirectional", 2),
        ("bidirectional", 8),
        ("unidirectional", 8),
        ("bidirectional", 64),
    ] {
        let (svg, transfers) = ring_chart(&dir, &ring(kind, n));
        let names: Vec<String> = (0..n).map(|i| format!("P{i}")).collect();
        let ys: Vec<f64> = names.iter().map(|l| text_y(&svg, l).expect(l)).collect();
        assert!(ys.windows(2).all(|w| w[0] < w[1]), "lanes out of order");
        let succ = transfers.iter().filter(|t| t.1 == (t.0 + 1) % n).count();
        let pred = transfers.len() - succ;
        // One bar per transfer in each row, and one legend swatch per colour shown.
        let shown = |k: usize| k + usize::from(k > 0);
        assert_eq!(
            rects_filled_with(&svg, SUCCESSOR),
            shown(succ),
            "{kind} {n}"
        );
        assert_eq!(
            rects_filled_with(&svg, PREDECESSOR),
            shown(pred),
            "{kind} {n}"
        );
        assert_eq!(rects_filled_with(&svg, SUCCESSOR_SHADE), shown(succ));
        assert_eq!(rects_filled_with(&svg, PREDECESSOR_SHADE), shown(pred));
        assert_eq!(svg.contains("send to predecessor"), pred > 0, "{kind} {n}");
        assert_eq!(pred > 0, kind == "bidirectional" && n > 2, "{kind} {n}");
        if kind == "unidirectional" {
            assert!(svg.contains(">\nreceive (lower row)\n</text>"));
        }
    }
    // Nothing to move: empty lanes over [0, 1] and no legend.
    let still = r#"{"ring": "unidirectional", "processors": [{"load": 2, "target": 2, "c_succ": 1},
        {"load": 1, "target": 1, "c_succ": 1}, {"load": 3, "target": 3, "c_succ": 1}]}"#;
    let (svg, transfers) = ring_chart(&dir, still);
    assert!(
        transfers.is_empty() && svg.contains(">\n1.0\n</text>"),
        "{svg}"
    );
}

#[test]
fn ring_bars_lie_in_the_sender_and_receiver_lanes_with_their_counts() {
    let dir = TestDir::new("gantt-rows");
    // P1 sends 4 items to P2 and P6 to P5 (both directions on one ring).
    let instance = r#"{"ring": "bidirectional", "processors": [
        {"name": "P0", "load": 1, "target": 1, "c_succ": 1.0, "c_pred": 1.0},
        {"name": "P1", "load": 5, "target": 1, "c_succ": 1.0, "c_pred": 9.0},
        {"name": "P2", "load": 1, "target": 5, "c_succ": 9.0, "c_pred": 9.0},
        {"name": "P3", "load": 1, "target": 1, "c_succ": 1.0, "c_pred": 1.0},
        {"name": "P4", "load": 1, "target": 1, "c_succ": 1.0, "c_pred": 1.0},
        {"name": "P5", "load": 1, "target": 5, "c_succ": 9.0, "c_pred": 9.0},
        {"name": "P6", "load": 5, "target": 1, "c_succ": 9.0, "c_pred": 1.0},
        {"name": "P7", "load": 1, "target": 1, "c_succ": 1.0, "c_pred": 1.0}]}"#;
    let (svg, transfers) = ring_chart(&dir, instance);
    assert_eq!(transfers, vec![(1, 2), (6, 5)], "{svg}");
    let lane_height = text_y(&svg, "P1").unwrap() - text_y(&svg, "P0").unwrap();
    // Sends just above the centre of the sender's lane, receives just below the
    // centre of the receiver's; the legend swatches come last.
    for (colour, lane, side) in [
        (SUCCESSOR, "P1", -1.0),
        (SUCCESSOR_SHADE, "P2", 1.0),
        (PREDECESSOR, "P6", -1.0),
        (PREDECESSOR_SHADE, "P5", 1.0),
    ] {
        let offset = (rect_centres(&svg, colour)[0] - text_y(&svg, lane).unwrap()) * side;
        assert!(
            offset > 0.0 && offset < lane_height / 2.0,
            "{colour} on {lane}"
        );
    }
    // The count of each transfer in its send bar and in its receive bar.
    assert_eq!(svg.matches(">\n4\n</text>").count(), 4, "{svg}");
}

#[test]
fn genblock_bars_carry_the_other_end_and_the_size() {
    let dir = TestDir::new("gantt-genblock");
    dir.write(
        "g.json",
        r#"{"source": [7, 16, 11, 10, 7, 49], "target": [15, 16, 10, 16, 15, 28], "startup": 2.0, "unit": 1.0}"#,
    );
    dir.run(&[
        "genblock", "plan", "g.json", "--method", "paper", "--gantt", "g.svg",
    ])
    .expect_status(0);
    let svg = dir.read("g.svg");
    let steps = dir
        .run(&["genblock", "plan", "g.json", "--method", "paper", "--json"])
        .json();
    let pieces: usize = steps["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_array().unwrap().len())
        .sum();
    // Two bars per piece (sender, receiver) in the two step colours, plus the two
    // legend swatches; startups in grey.
    let bars = rects_filled_with(&svg, "#1F5FB4") + rects_filled_with(&svg, "#2CA02C");
    assert_eq!(bars, 2 * pieces + 2);
    assert!(svg.contains(">\nstartups\n</text>"));
    // S5 sends T5 its 28 elements in one piece: labelled on both lanes.
    assert!(svg.contains(">\nto T5: 28\n</text>"), "{svg}");
    assert!(svg.contains(">\nfrom S5: 28\n</text>"));
}

#[test]
fn unwritable_charts_are_refused_before_anything_is_printed() {
    let dir = TestDir::new("gantt-paths");
    dir.write("ring.json", ring("unidirectional", 4));
    dir.write(
        "g.json",
        r#"{"source": [3, 4], "target": [7], "startup": 1, "unit": 1}"#,
    );
    dir.write(
        "s.json",
        r#"{"items": 3, "root": "r", "processors": [
            {"name": "a", "comm": {"per_item": 1.0}, "comp": {"per_item": 1.0}},
            {"name": "r", "comm": {"per_item": 0.0}, "comp": {"per_item": 1.0}}]}"#,
    );
    for command in [
        ["ring", "plan", "ring.json"],
        ["genblock", "plan", "g.json"],
        ["scatter", "plan", "s.json"],
    ] {
        let mut args = command.to_vec();
        args.extend(["--gantt", "no-such-dir/c.svg"]);
        let run = dir.run(&args);
        run.expect_status(2)
            .expect_stderr("cannot write no-such-dir/c.svg");
        assert_eq!(run.stdout(), "", "{}", run.story());
    }
    // A plan that fails leaves an existing file as it was and creates none.
    dir.write("old.svg", "old");
    for name in ["old.svg", "new.svg"] {
        dir.run(&[
            "ring",
            "plan",
            "ring.json",
            "--algorithm",
            "paper-alg3",
            "--gantt",
            name,
        ])
        .expect_status(2);
    }
    assert_eq!(dir.read("old.svg"), "old");
    assert!(!dir.path.join("new.svg").exists());
}
