//! Platforms: the JSON document, the cost model, and the SimGrid XML reader
//! (feature `simgrid`), including every error class and a fuzz test of both readers.

use hetbal::platform::{
    max_min_rates, Link, Platform, PlatformError, PlatformSpec, Processor, Route, SharingPolicy,
};
use hetbal::random::SplitMix64;
use proptest::prelude::*;

fn json(doc: &str) -> Result<Platform, PlatformError> {
    let spec: PlatformSpec = serde_json::from_str(doc).expect("the document parses");
    Platform::from_spec(spec)
}

#[test]
fn json_matrix_form() {
    let p = json(
        r#"{ "processors": [ {"name": "A", "w": 0.0206}, {"name": "B", "w": 0.0291} ],
             "c": [[0, 0.001], [0.0015, 0]] }"#,
    )
    .unwrap();
    assert_eq!(p.len(), 2);
    assert_eq!((p.w(0), p.w(1)), (0.0206, 0.0291));
    assert_eq!((p.cost(0, 1), p.cost(1, 0)), (0.001, 0.0015));
    assert_eq!(p.route(0, 1), None);
    assert_eq!(p.homogeneous_cost(), None);
}

#[test]
fn json_graph_form_bottleneck_and_symmetry() {
    // A -l1- B -l2- C ; A->C crosses l1 then l2 (bottleneck l2); C->A declared one-way
    // through l3 only.
    let p = json(
        r#"{ "processors": [{"name": "A", "w": 1}, {"name": "B", "w": 2}, {"name": "C", "w": 4}],
             "links": [{"name": "l1", "bandwidth": 1.25e8, "latency": 5e-5},
                       {"name": "l2", "bandwidth": 2.5e7, "latency": 1e-3, "sharing_policy": "FATPIPE"},
                       {"name": "l3", "bandwidth": 1e6}],
             "routes": [{"src": "A", "dst": "B", "links": ["l1"]},
                        {"src": "A", "dst": "C", "links": ["l1", "l2"], "symmetrical": true},
                        {"src": "C", "dst": "A", "links": ["l3"], "symmetrical": false}],
             "unit_bytes": 1000 }"#,
    )
    .unwrap();
    assert_eq!(p.cost(0, 1), 1000.0 / 1.25e8);
    assert_eq!(p.cost(1, 0), 1000.0 / 1.25e8, "symmetrical by default");
    assert_eq!(p.cost(0, 2), 1000.0 / 2.5e7);
    // The explicit C->A route wins over the reverse of A->C.
    assert_eq!(p.cost(2, 0), 1000.0 / 1e6);
    assert_eq!(p.route(2, 0), Some(&[2u32][..]));
    assert_eq!(p.route_latency(0, 2), Some(5e-5 + 1e-3));
    // B and C are not joined.
    assert_eq!(p.cost(1, 2), f64::INFINITY);
    assert_eq!(p.route(1, 2), None);
}

#[test]
fn json_errors_name_what_is_wrong() {
    let cases: &[(&str, &str)] = &[
        (r#"{"processors": [], "c": []}"#, "no processor"),
        (
            r#"{"processors": [{"name": "A", "w": 0}], "c": [[0]]}"#,
            "processor \"A\": time per unit of work w = 0",
        ),
        (
            r#"{"processors": [{"name": "A", "w": 1}, {"name": "A", "w": 1}], "c": [[0,1],[1,0]]}"#,
            "two processors are named \"A\"",
        ),
        (
            r#"{"processors": [{"name": "", "w": 1}], "c": [[0]]}"#,
            "processor 0: the name is empty",
        ),
        (
            r#"{"processors": [{"name": "A", "w": 1}, {"name": "B", "w": 1}], "c": [[0,1]]}"#,
            "1 rows for 2 processors",
        ),
        (
            r#"{"processors": [{"name": "A", "w": 1}, {"name": "B", "w": 1}], "c": [[0,1],[1]]}"#,
            "row 1 has 1 numbers",
        ),
        (
            r#"{"processors": [{"name": "A", "w": 1}, {"name": "B", "w": 1}], "c": [[0,-1],[1,0]]}"#,
            "cost from \"A\" to \"B\" is -1",
        ),
        (
            r#"{"processors": [{"name": "A", "w": 1}]}"#,
            "has no network",
        ),
        (
            r#"{"processors": [{"name": "A", "w": 1}], "c": [[0]], "links": [], "routes": []}"#,
            "not both",
        ),
        (
            r#"{"processors": [{"name": "A", "w": 1}], "links": []}"#,
            "needs both",
        ),
        (
            r#"{"processors": [{"name": "A", "w": 1}], "c": [[0]], "unit_bytes": 2}"#,
            "unit_bytes",
        ),
        (
            r#"{"processors": [{"name": "A", "w": 1}], "links": [], "routes": [], "unit_bytes": 0}"#,
            "unit_bytes = 0",
        ),
        (
            r#"{"processors": [{"name": "A", "w": 1}], "links": [{"name": "l", "bandwidth": 0}], "routes": []}"#,
            "link \"l\": bandwidth = 0",
        ),
        (
            r#"{"processors": [{"name": "A", "w": 1}], "links": [{"name": "l", "bandwidth": 1, "latency": -1}], "routes": []}"#,
            "link \"l\": latency = -1",
        ),
        (
            r#"{"processors": [{"name": "A", "w": 1}], "links": [{"name": "l", "bandwidth": 1}, {"name": "l", "bandwidth": 2}], "routes": []}"#,
            "two links are named \"l\"",
        ),
        (
            r#"{"processors": [{"name": "A", "w": 1}], "links": [{"name": "l", "bandwidth": 1, "sharing_policy": "SPLITDUPLEX"}], "routes": []}"#,
            "SPLITDUPLEX",
        ),
        (
            r#"{"processors": [{"name": "A", "w": 1}], "links": [], "routes": [{"src": "A", "dst": "Z", "links": []}]}"#,
            "route 0: dst \"Z\" is not a processor",
        ),
        (
            r#"{"processors": [{"name": "A", "w": 1}, {"name": "B", "w": 1}], "links": [], "routes": [{"src": "A", "dst": "B", "links": ["nope"]}]}"#,
            "route 0: link \"nope\" is not declared",
        ),
        (
            r#"{"processors": [{"name": "A", "w": 1}], "links": [], "routes": [{"src": "A", "dst": "A", "links": []}]}"#,
            "route 0: goes from \"A\" to itself",
        ),
        (
            r#"{"processors": [{"name": "A", "w": 1}, {"name": "B", "w": 1}], "links": [], "routes": [{"src": "A", "dst": "B", "links": []}, {"src": "A", "dst": "B", "links": []}]}"#,
            "two routes go from \"A\" to \"B\"",
        ),
    ];
    for (doc, needle) in cases {
        let err = json(doc).expect_err(doc);
        let message = err.to_string();
        assert!(
            message.contains(needle),
            "{doc}\n gave {message:?}, expected {needle:?}"
        );
    }
}

#[test]
fn json_unknown_fields_are_refused() {
    let r: Result<PlatformSpec, _> =
        serde_json::from_str(r#"{"processors": [{"name": "A", "w": 1, "speed": 3}], "c": [[0]]}"#);
    assert!(r.unwrap_err().to_string().contains("unknown field `speed`"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The JSON reader on arbitrary text: an error or a platform, never a panic;
    /// when a platform comes out, its costs are non-negative.
    #[test]
    fn json_reader_never_panics(text in "\\PC{0,200}") {
        if let Ok(spec) = serde_json::from_str::<PlatformSpec>(&text) {
            if let Ok(p) = Platform::from_spec(spec) {
                for i in 0..p.len() { for j in 0..p.len() { prop_assert!(p.cost(i, j) >= 0.0); } }
            }
        }
    }

    /// Arbitrary bytes: an error or a platform, never a panic.
    #[test]
    fn json_reader_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(spec) = serde_json::from_slice::<PlatformSpec>(&bytes) {
            let _ = Platform::from_spec(spec);
        }
    }

    /// Structured fuzz: well-formed documents with random numbers and names.
    #[test]
    fn json_reader_on_random_documents(
        ws in prop::collection::vec(-2.0f64..3.0, 0..4),
        bws in prop::collection::vec(-1.0f64..5.0, 0..3),
        routes in prop::collection::vec((0usize..5, 0usize..5, prop::collection::vec(0usize..4, 0..3), any::<bool>()), 0..6),
    ) {
        let procs: Vec<String> = ws.iter().enumerate().map(|(i, w)| format!(r#"{{"name": "P{i}", "w": {w}}}"#)).collect();
        let links: Vec<String> = bws.iter().enumerate().map(|(i, b)| format!(r#"{{"name": "l{i}", "bandwidth": {b}}}"#)).collect();
        let routes: Vec<String> = routes.iter().map(|(s, d, ls, sym)| {
            let ls: Vec<String> = ls.iter().map(|l| format!("\"l{l}\"")).collect();
            format!(r#"{{"src": "P{s}", "dst": "P{d}", "links": [{}], "symmetrical": {sym}}}"#, ls.join(","))
        }).collect();
        let doc = format!(r#"{{"processors": [{}], "links": [{}], "routes": [{}]}}"#, procs.join(","), links.join(","), routes.join(","));
        let spec: PlatformSpec = serde_json::from_str(&doc).unwrap();
        match Platform::from_spec(spec) {
            Ok(p) => {
                prop_assert!(ws.iter().all(|&w| w > 0.0));
                for i in 0..p.len() {
                    for j in 0..p.len() {
                        let c = p.cost(i, j);
                        match p.route(i, j) {
                            None => prop_assert!(i == j || c == f64::INFINITY),
                            Some(r) => {
                                let min_bw = r.iter().map(|&l| p.links()[l as usize].bandwidth).fold(f64::INFINITY, f64::min);
                                prop_assert_eq!(c, if r.is_empty() { 0.0 } else { 1.0 / min_bw });
                            }
                        }
                    }
                }
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}

/// A random graph platform: `p` processors, `l` links of random policy, and a route
/// of 1 to 3 random links for every ordered pair.
fn random_graph(seed: u64, p: usize, l: usize) -> Platform {
    let mut rng = SplitMix64::new(seed);
    let mut next = move || rng.next_u64();
    let processors = (0..p)
        .map(|i| Processor::new(format!("P{i}"), 1.0))
        .collect();
    let links = (0..l)
        .map(|i| Link {
            name: format!("l{i}"),
            bandwidth: 1.0 + (next() % 100) as f64,
            latency: 0.0,
            sharing: match next() % 4 {
                0 => SharingPolicy::Fatpipe,
                1 => SharingPolicy::Splitduplex,
                _ => SharingPolicy::Shared,
            },
        })
        .collect();
    let mut routes = Vec::new();
    for a in 0..p {
        for b in 0..p {
            if a != b {
                let n = 1 + (next() % 3) as usize;
                routes.push(Route {
                    src: a,
                    dst: b,
                    links: (0..n).map(|_| (next() % l as u64) as usize).collect(),
                });
            }
        }
    }
    Platform::from_graph(processors, links, routes, 1.0).unwrap()
}

/// Max-min fairness by its definition: rates are feasible and every flow has a
/// bottleneck, i.e. its fat-pipe cap, or a saturated shared link on which no flow
/// gets more than it does.
#[test]
fn max_min_rates_meet_the_definition() {
    let mut checked = 0;
    for seed in 0..400u64 {
        let p = 2 + (seed % 5) as usize;
        let platform = random_graph(seed, p, 1 + (seed % 7) as usize);
        let flows: Vec<(usize, usize)> = (0..1 + seed % 9)
            .map(|k| {
                let a = ((seed + 3 * k) % p as u64) as usize;
                let b = (a + 1 + ((seed / 7 + k) % (p as u64 - 1)) as usize) % p;
                (a, b)
            })
            .collect();
        let rates = max_min_rates(&platform, &flows).unwrap();
        let links = platform.links();
        let route = |f: usize| platform.route(flows[f].0, flows[f].1).unwrap();
        let mut load = vec![0.0; links.len()];
        for (f, &rate) in rates.iter().enumerate() {
            assert!(rate > 0.0 && rate.is_finite());
            for &l in route(f) {
                let l = l as usize;
                if links[l].sharing == SharingPolicy::Fatpipe {
                    assert!(
                        rate <= links[l].bandwidth * (1.0 + 1e-9),
                        "fat pipe exceeded"
                    );
                } else {
                    load[l] += rate;
                }
            }
        }
        for l in 0..links.len() {
            assert!(
                load[l] <= links[l].bandwidth * (1.0 + 1e-9),
                "seed {seed}: link {l} overloaded"
            );
        }
        for f in 0..flows.len() {
            let capped = route(f).iter().any(|&l| {
                let l = l as usize;
                links[l].sharing == SharingPolicy::Fatpipe
                    && rates[f] >= links[l].bandwidth * (1.0 - 1e-9)
            });
            let bottleneck = route(f).iter().any(|&l| {
                let l = l as usize;
                links[l].sharing != SharingPolicy::Fatpipe
                    && load[l] >= links[l].bandwidth * (1.0 - 1e-9)
                    && (0..flows.len())
                        .filter(|&g| route(g).contains(&(l as u32)))
                        .all(|g| rates[g] <= rates[f] * (1.0 + 1e-9))
            });
            assert!(
                capped || bottleneck,
                "seed {seed}: flow {f} has no bottleneck: {rates:?}"
            );
            checked += 1;
        }
    }
    assert!(checked > 1000, "{checked}");
}

#[test]
fn max_min_rates_policies_and_errors() {
    let link = |n: &str, sharing| Link {
        name: n.into(),
        bandwidth: 12.0,
        latency: 0.0,
        sharing,
    };
    let procs = || {
        vec![
            Processor::new("A", 1.0),
            Processor::new("B", 1.0),
            Processor::new("C", 1.0),
        ]
    };
    // A->B and B->A over one SHARED link: they share; over the two halves of a
    // split-duplex link: they do not; over a FATPIPE: each gets it all.
    for (sharing, expected) in [(SharingPolicy::Shared, 6.0), (SharingPolicy::Fatpipe, 12.0)] {
        let p = Platform::from_graph(
            procs(),
            vec![link("l", sharing)],
            vec![
                Route {
                    src: 0,
                    dst: 1,
                    links: vec![0],
                },
                Route {
                    src: 1,
                    dst: 0,
                    links: vec![0],
                },
            ],
            1.0,
        )
        .unwrap();
        assert_eq!(
            max_min_rates(&p, &[(0, 1), (1, 0)]).unwrap(),
            vec![expected, expected]
        );
    }
    let p = Platform::from_graph(
        procs(),
        vec![
            link("l_UP", SharingPolicy::Splitduplex),
            link("l_DOWN", SharingPolicy::Splitduplex),
        ],
        vec![
            Route {
                src: 0,
                dst: 1,
                links: vec![0],
            },
            Route {
                src: 1,
                dst: 0,
                links: vec![1],
            },
        ],
        1.0,
    )
    .unwrap();
    assert_eq!(
        max_min_rates(&p, &[(0, 1), (1, 0)]).unwrap(),
        vec![12.0, 12.0]
    );
    assert_eq!(
        max_min_rates(&p, &[(0, 1), (0, 1), (0, 1)]).unwrap(),
        vec![4.0; 3]
    );
    let e = max_min_rates(&p, &[(0, 2)]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "no route (no links) from \"A\" to \"C\": bandwidth sharing needs a graph platform"
    );
    assert!(max_min_rates(&p, &[(0, 9)])
        .unwrap_err()
        .to_string()
        .contains("flow 0: processor index 9"));
}

#[test]
fn generated_complete_networks() {
    use hetbal::platform::generate::{random_complete, GenerateError};
    let p = random_complete(3, 6, (0.01, 0.05), (1e6, 1e8), (1e-4, 1e-3)).unwrap();
    assert_eq!(
        p,
        random_complete(3, 6, (0.01, 0.05), (1e6, 1e8), (1e-4, 1e-3)).unwrap(),
        "same seed, same platform"
    );
    assert_ne!(
        p,
        random_complete(4, 6, (0.01, 0.05), (1e6, 1e8), (1e-4, 1e-3)).unwrap()
    );
    assert_eq!(p.links().len(), 15);
    for i in 0..6 {
        assert!((0.01..=0.05).contains(&p.w(i)));
        for j in 0..6 {
            if i != j {
                let r = p.route(i, j).unwrap();
                assert_eq!(r.len(), 1);
                assert_eq!(Some(r), p.route(j, i));
                let l = &p.links()[r[0] as usize];
                assert!((1e6..=1e8).contains(&l.bandwidth) && (1e-4..=1e-3).contains(&l.latency));
                assert_eq!(p.cost(i, j), 1.0 / l.bandwidth);
            }
        }
    }
    assert!(matches!(
        random_complete(1, 0, (0.01, 0.05), (1e6, 1e8), (0.0, 0.0)),
        Err(GenerateError::BadCount { .. })
    ));
    let e = random_complete(1, 3, (0.05, 0.01), (1e6, 1e8), (0.0, 0.0)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "w = [0.05, 0.01]: must be finite, > 0, low <= high"
    );
    assert!(random_complete(1, 3, (0.01, 0.05), (1e6, 1e8), (-1.0, 0.0)).is_err());
}

#[test]
fn generated_tiers_networks() {
    use hetbal::platform::generate::{tiers, GenerateError, TiersOptions};
    for (seed, wan) in [(1u64, 1usize), (2, 2), (3, 5), (4, 8)] {
        let o = TiersOptions {
            wan,
            man_per_wan: 2,
            lan_per_man: 2,
            hosts_per_lan: 2,
            ..TiersOptions::default()
        };
        let p = tiers(seed, &o).unwrap();
        assert_eq!(p, tiers(seed, &o).unwrap());
        let hosts = wan * 8;
        assert_eq!(p.len(), hosts);
        // Link names tell the level: the route of two hosts climbs only as high as
        // their lowest common level, and the route back is the same links reversed.
        for a in 0..hosts {
            for b in 0..hosts {
                if a == b {
                    continue;
                }
                let r = p.route(a, b).expect("a connected network");
                let mut back: Vec<u32> = p.route(b, a).unwrap().to_vec();
                back.reverse();
                assert_eq!(r, &back[..]);
                let names: Vec<&str> = r
                    .iter()
                    .map(|&l| p.links()[l as usize].name.as_str())
                    .collect();
                let (lan_a, lan_b) = (a / 2, b / 2);
                let (man_a, man_b) = (a / 4, b / 4);
                let (wan_a, wan_b) = (a / 8, b / 8);
                let expected_len = if lan_a == lan_b {
                    2
                } else if man_a == man_b {
                    4
                } else if wan_a == wan_b {
                    6
                } else {
                    assert!(
                        names
                            .iter()
                            .any(|n| n.starts_with("wan") || n.starts_with("chord")),
                        "{names:?}"
                    );
                    names.len()
                };
                assert_eq!(names.len(), expected_len, "{a} -> {b}: {names:?}");
                assert_eq!(names[0], format!("h{a}"));
                assert_eq!(names[names.len() - 1], format!("h{b}"));
                // Bottleneck: WAN links are the slowest.
                let bottleneck = r
                    .iter()
                    .map(|&l| p.links()[l as usize].bandwidth)
                    .fold(f64::INFINITY, f64::min);
                assert_eq!(p.cost(a, b), 1.0 / bottleneck);
            }
        }
    }
    let bad = TiersOptions {
        hosts_per_lan: 0,
        ..TiersOptions::default()
    };
    assert!(matches!(
        tiers(1, &bad),
        Err(GenerateError::BadCount {
            parameter: "hosts_per_lan",
            ..
        })
    ));
    let huge = TiersOptions {
        wan: 100,
        man_per_wan: 100,
        ..TiersOptions::default()
    };
    assert!(tiers(1, &huge)
        .unwrap_err()
        .to_string()
        .contains("hosts in all"));
    let bad = TiersOptions {
        wan_bandwidth: (0.0, 1.0),
        ..TiersOptions::default()
    };
    assert!(tiers(1, &bad)
        .unwrap_err()
        .to_string()
        .contains("wan_bandwidth"));
}

#[test]
fn documents_round_trip() {
    use hetbal::platform::generate::{random_complete, tiers, TiersOptions};
    let matrix = json(
        r#"{"processors": [{"name": "A", "w": 1}, {"name": "B", "w": 2}], "c": [[0, 3], [4, 0]]}"#,
    )
    .unwrap();
    use hetbal::platform::generate::{clusters, ClustersOptions};
    let platforms = [
        matrix,
        random_complete(5, 7, (0.01, 0.05), (1e6, 1e8), (0.0, 1e-3)).unwrap(),
        tiers(6, &TiersOptions::default()).unwrap(),
        clusters(6, &ClustersOptions::default()).unwrap(),
    ];
    for p in platforms {
        // Equality covers the network graph (routers, link ends, one-way links).
        assert_eq!(Platform::from_spec(p.to_spec()).unwrap(), p);
        // Through JSON text: the same routes, numbers to the last digit or so.
        let text = serde_json::to_string(&p.to_spec()).unwrap();
        let back = Platform::from_spec(serde_json::from_str(&text).unwrap()).unwrap();
        assert_eq!(back.len(), p.len());
        for i in 0..p.len() {
            assert!((back.w(i) - p.w(i)).abs() <= 1e-15 * p.w(i));
            for j in 0..p.len() {
                assert_eq!(back.route(i, j), p.route(i, j));
                assert!((back.cost(i, j) - p.cost(i, j)).abs() <= 1e-15 * p.cost(i, j));
            }
        }
    }
}

#[cfg(feature = "simgrid")]
mod simgrid {
    use hetbal::platform::simgrid::{read_simgrid, SimgridError, SimgridOptions};
    use hetbal::platform::units::{parse, Quantity, UnitError};
    use hetbal::platform::{Platform, SharingPolicy};
    use proptest::prelude::*;

    fn data(name: &str) -> String {
        let path = format!("{}/tests/data/platforms/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn read(text: &str) -> Result<Platform, SimgridError> {
        read_simgrid(text, &SimgridOptions::default())
    }

    fn idx(p: &Platform, name: &str) -> usize {
        p.index_of(name).unwrap_or_else(|| panic!("no host {name}"))
    }

    fn route_names(p: &Platform, a: &str, b: &str) -> Vec<String> {
        p.route(idx(p, a), idx(p, b))
            .unwrap_or_else(|| panic!("no route {a} -> {b}"))
            .iter()
            .map(|&l| p.links()[l as usize].name.clone())
            .collect()
    }

    #[test]
    fn units_of_every_quantity() {
        let cases = [
            ("98.095Mf", Quantity::Speed, 98.095e6),
            ("1Gf", Quantity::Speed, 1e9),
            ("286.087kf", Quantity::Speed, 286087.0),
            ("5.2297E9f", Quantity::Speed, 5.2297e9),
            ("10f", Quantity::Speed, 10.0),
            ("3", Quantity::Speed, 3.0),
            ("2Ef", Quantity::Speed, 2e18),
            ("1.5megaflops", Quantity::Speed, 1.5e6),
            ("125MBps", Quantity::Bandwidth, 1.25e8),
            ("252.75kBps", Quantity::Bandwidth, 252750.0),
            ("1.25E9Bps", Quantity::Bandwidth, 1.25e9),
            ("2KiBps", Quantity::Bandwidth, 2048.0),
            ("1GiBps", Quantity::Bandwidth, 1073741824.0),
            ("8bps", Quantity::Bandwidth, 1.0),
            ("1Gbps", Quantity::Bandwidth, 1.25e8),
            ("8Mibps", Quantity::Bandwidth, 1048576.0),
            ("50us", Quantity::Time, 5e-5),
            ("1.461517ms", Quantity::Time, 1.461517e-3),
            ("1.0E-4s", Quantity::Time, 1e-4),
            ("2ns", Quantity::Time, 2e-9),
            ("3ps", Quantity::Time, 3e-12),
            ("2m", Quantity::Time, 120.0),
            ("1h", Quantity::Time, 3600.0),
            ("1d", Quantity::Time, 86400.0),
            ("1w", Quantity::Time, 604800.0),
            ("0", Quantity::Time, 0.0),
        ];
        for (text, q, expected) in cases {
            let v = parse(text, q).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert!(
                (v - expected).abs() <= 1e-12 * expected.abs(),
                "{text}: {v} != {expected}"
            );
        }
        assert_eq!(parse("Gf", Quantity::Speed), Err(UnitError::NotANumber));
        assert_eq!(parse("", Quantity::Time), Err(UnitError::NotANumber));
        assert_eq!(parse("-1s", Quantity::Time), Err(UnitError::OutOfRange));
        assert_eq!(parse("1e999f", Quantity::Speed), Err(UnitError::OutOfRange));
        assert!(matches!(
            parse("1Gf", Quantity::Time),
            Err(UnitError::UnknownUnit { .. })
        ));
        assert!(matches!(
            parse("1MBps", Quantity::Speed),
            Err(UnitError::UnknownUnit { .. })
        ));
        assert!(matches!(
            parse("1us", Quantity::Bandwidth),
            Err(UnitError::UnknownUnit { .. })
        ));
    }

    #[test]
    fn full_zone_with_every_unit_and_policy() {
        let p = read_simgrid(
            &data("full_units.xml"),
            &SimgridOptions {
                flops_per_unit: 1e9,
                unit_bytes: 1e6,
            },
        )
        .unwrap();
        // Hosts in document order, routers are not processors.
        let names: Vec<&str> = p.processors().iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["alpha", "beta", "gamma"]);
        // w = flops_per_unit / speed; beta runs at pstate 1 (500Mf).
        assert_eq!((p.w(0), p.w(1), p.w(2)), (1.0, 2.0, 4.0));
        // Split duplex gives two links; the others one each.
        let links: Vec<(&str, SharingPolicy)> = p
            .links()
            .iter()
            .map(|l| (l.name.as_str(), l.sharing))
            .collect();
        assert_eq!(
            links,
            [
                ("fast", SharingPolicy::Shared),
                ("slow_UP", SharingPolicy::Splitduplex),
                ("slow_DOWN", SharingPolicy::Splitduplex),
                ("oneway", SharingPolicy::Shared),
                ("back", SharingPolicy::Shared),
                ("loop", SharingPolicy::Fatpipe),
            ]
        );
        let (a, b, g) = (0, 1, 2);
        assert_eq!(route_names(&p, "alpha", "beta"), ["fast", "loop"]);
        assert_eq!(p.cost(a, b), 1e6 / 125e6);
        // Symmetrical reverse: links reversed.
        assert_eq!(route_names(&p, "beta", "alpha"), ["loop", "fast"]);
        // 8 Mbps = 1e6 B/s, in each direction its own half.
        assert_eq!(route_names(&p, "alpha", "gamma"), ["slow_UP"]);
        assert_eq!(route_names(&p, "gamma", "alpha"), ["slow_DOWN"]);
        assert_eq!((p.cost(a, g), p.cost(g, a)), (1.0, 1.0));
        // One-way routes in both directions.
        assert_eq!(p.cost(b, g), 1e6 / 1048576.0);
        assert_eq!(route_names(&p, "gamma", "beta"), ["back", "slow_DOWN"]);
        assert_eq!(p.cost(g, b), 10.0);
        let lat = p.route_latency(g, b).unwrap();
        assert!((lat - 3.5e-3).abs() < 1e-15, "{lat}");
        assert_eq!(p.route_latency(a, b), Some(50e-6));
    }

    #[test]
    fn floyd_and_dijkstra_take_the_shortest_path() {
        for routing in ["Floyd", "Dijkstra", "dijkstracache"] {
            let p = read(&data("floyd_routers.xml").replace("ROUTING", routing)).unwrap();
            // h0 -> h1: a, b, c (3 links) rather than a, d, e, c (4 links).
            assert_eq!(route_names(&p, "h0", "h1"), ["a", "b", "c"], "{routing}");
            assert_eq!(route_names(&p, "h1", "h0"), ["c", "b", "a"], "{routing}");
            assert_eq!(route_names(&p, "h0", "h2"), ["a", "d", "f"], "{routing}");
            assert_eq!(route_names(&p, "h2", "h1"), ["f", "e", "c"], "{routing}");
            assert_eq!(p.cost(idx(&p, "h0"), idx(&p, "h1")), 1.0 / 100e6);
            assert_eq!(p.cost(idx(&p, "h2"), idx(&p, "h0")), 1.0 / 50e6);
            assert_eq!(p.w(idx(&p, "h2")), 1.0 / 4e9);
        }
    }

    #[test]
    fn clusters_with_and_without_backbone_joined_by_a_zone_route() {
        let p = read(&data("clusters.xml")).unwrap();
        let names: Vec<&str> = p.processors().iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            ["b-0", "b-1", "b-2", "f-5.org", "f-6.org", "f-9.org"]
        );
        assert_eq!(p.w(0), 1e-9);
        assert_eq!(p.w(4), 0.5e-9);
        assert_eq!(
            route_names(&p, "b-0", "b-2"),
            ["bb_link_0_UP", "bb_backbone", "bb_link_2_DOWN"]
        );
        assert_eq!(
            route_names(&p, "f-5.org", "f-9.org"),
            ["flat_link_5", "flat_link_9"]
        );
        assert_eq!(
            route_names(&p, "b-1", "f-6.org"),
            ["bb_link_1_UP", "bb_backbone", "wan", "flat_link_6"]
        );
        assert_eq!(
            route_names(&p, "f-6.org", "b-1"),
            ["flat_link_6", "wan", "bb_backbone", "bb_link_1_DOWN"]
        );
        assert_eq!(p.cost(0, 2), 1.0 / 100e6);
        assert_eq!(p.cost(3, 5), 1.0 / 50e6);
        assert_eq!(p.cost(1, 4), 1.0 / 10e6);
        let bb = p.links().iter().find(|l| l.name == "bb_backbone").unwrap();
        assert_eq!(
            (bb.bandwidth, bb.latency, bb.sharing),
            (1e9, 100e-6, SharingPolicy::Fatpipe)
        );
        let lat = p.route_latency(1, 4).unwrap();
        assert!(
            (lat - (10e-6 + 100e-6 + 10e-3 + 20e-6)).abs() < 1e-15,
            "{lat}"
        );
    }

    #[test]
    fn nested_zones_through_gateways() {
        let p = read(&data("nested_zones.xml")).unwrap();
        assert_eq!(
            route_names(&p, "x", "z"),
            ["x_gl", "lm", "m_1", "m_2", "mr"]
        );
        assert_eq!(
            route_names(&p, "z", "x"),
            ["mr", "m_2", "m_1", "lm", "x_gl"]
        );
        assert_eq!(route_names(&p, "y", "m"), ["y_gl", "lm", "m_1"]);
        assert_eq!(route_names(&p, "y", "x"), ["x_y"]);
        assert_eq!(p.cost(idx(&p, "x"), idx(&p, "z")), 1.0 / 40e6);
        assert_eq!(p.cost(idx(&p, "y"), idx(&p, "m")), 1.0 / 100e6);
    }

    /// SimGrid's own routes for its example platforms: set
    /// `HETBAL_SIMGRID_REFERENCE` to a folder holding SimGrid's example files
    /// (`two_hosts.xml`, `small_platform.xml`, ...) and, in `reference/`, the hosts
    /// and routes SimGrid 4.1 computes for each (`<name>.simgrid.json`). Those files
    /// are not part of this repository; without the variable the check is skipped
    /// with a note.
    #[test]
    fn routes_and_speeds_match_simgrid_on_its_examples() {
        let Some(dir) = std::env::var_os("HETBAL_SIMGRID_REFERENCE").map(std::path::PathBuf::from)
        else {
            eprintln!("note: HETBAL_SIMGRID_REFERENCE not set, SimGrid reference check skipped");
            return;
        };
        if !dir.join("reference").is_dir() {
            eprintln!(
                "note: {} has no reference/ folder, SimGrid reference check skipped",
                dir.display()
            );
            return;
        }
        let mut routes_checked = 0;
        for name in [
            "two_hosts",
            "small_platform",
            "small_platform_with_routers",
            "dogbone",
            "energy_platform",
            "cluster_backbone",
        ] {
            let xml = std::fs::read_to_string(dir.join(format!("{name}.xml"))).unwrap();
            let p = read(&xml).unwrap_or_else(|e| panic!("{name}: {e}"));
            let reference: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(dir.join(format!("reference/{name}.simgrid.json")))
                    .unwrap(),
            )
            .unwrap();
            assert_eq!(
                p.len() as u64,
                reference["n_hosts"].as_u64().unwrap(),
                "{name}: hosts"
            );
            for h in reference["hosts"].as_array().unwrap() {
                let i = idx(&p, h["name"].as_str().unwrap());
                let speed = h["speed"].as_f64().unwrap();
                assert!(
                    (p.w(i) * speed - 1.0).abs() < 1e-12,
                    "{name}: speed of {}",
                    h["name"]
                );
            }
            for r in reference["routes"].as_array().unwrap() {
                let (src, dst) = (r["src"].as_str().unwrap(), r["dst"].as_str().unwrap());
                let Some(links) = r["links"].as_array() else {
                    continue;
                };
                let expected: Vec<&str> = links.iter().map(|l| l.as_str().unwrap()).collect();
                let (i, j) = (idx(&p, src), idx(&p, dst));
                if expected.is_empty() {
                    // SimGrid reports an empty route where the file declares none.
                    assert_eq!(p.route(i, j), None, "{name}: {src} -> {dst}");
                } else {
                    assert_eq!(
                        route_names(&p, src, dst),
                        expected,
                        "{name}: {src} -> {dst}"
                    );
                    let bw = r["bottleneck_bw"].as_f64().unwrap();
                    assert!(
                        (p.cost(i, j) * bw - 1.0).abs() < 1e-9,
                        "{name}: {src} -> {dst} bottleneck"
                    );
                    let lat = r["latency"].as_f64().unwrap();
                    assert!(
                        (p.route_latency(i, j).unwrap() - lat).abs() <= 1e-12 * lat.max(1.0),
                        "{name}: latency"
                    );
                }
                routes_checked += 1;
            }
        }
        assert!(routes_checked >= 100, "{routes_checked} routes checked");
    }

    #[test]
    fn missing_routes_cost_infinity() {
        let xml = r#"<platform version="4.1"><zone id="z" routing="Full">
            <host id="a" speed="1f"/><host id="b" speed="1f"/></zone></platform>"#;
        let p = read(xml).unwrap();
        assert_eq!(p.cost(0, 1), f64::INFINITY);
        assert_eq!(p.route(0, 1), None);
    }

    fn platform(body: &str) -> String {
        format!("<?xml version='1.0'?>\n<platform version=\"4.1\">\n{body}\n</platform>\n")
    }

    /// Every error class, with the line and the attribute it must name.
    #[test]
    fn every_error_class_names_line_and_attribute() {
        let zone = |inner: &str| {
            platform(&format!(
                "<zone id=\"z\" routing=\"Full\">\n{inner}\n</zone>"
            ))
        };
        let cases: Vec<(String, &str)> = vec![
            ("<platform version=\"4.1\"><zone".to_string(), "line 1, column"),
            ("".to_string(), "not well-formed XML"),
            ("<platform version=\"3\"/>".to_string(), "version=\"3\""),
            ("<platform/>".to_string(), "no version attribute"),
            ("<plateforme version=\"4.1\"/>".to_string(), "root element <plateforme>"),
            (zone("<host id=\"a\"/>"), "line 4: <host> lacks the attribute `speed`"),
            (zone("<host speed=\"1Gf\"/>"), "line 4: <host> lacks the attribute `id`"),
            (zone("<host id=\"a\" speed=\"1Gx\"/>"), "line 4: <host> attribute `speed` = \"1Gx\": unknown unit \"Gx\""),
            (zone("<host id=\"a\" speed=\"0f\"/>"), "line 4: <host> attribute `speed` = \"0f\": the speed must be > 0"),
            (zone("<host id=\"a\" speed=\"1f,2f\" pstate=\"2\"/>"), "attribute `pstate` = \"2\": the speed list has 2 entries"),
            (zone("<host id=\"a\" speed=\"1f\" core=\"0\"/>"), "attribute `core` = \"0\""),
            (zone("<host id=\"a\" speed=\"1f\" colour=\"red\"/>"), "line 4: <host>: unknown attribute `colour`"),
            (zone("<host id=\"a\" speed=\"1f\"><link id=\"l\" bandwidth=\"1Bps\"/></host>"), "line 4: <link>: not allowed inside <host>"),
            (zone("<link id=\"l\" bandwidth=\"fast\"/>"), "<link> attribute `bandwidth` = \"fast\": does not start with a number"),
            (zone("<link id=\"l\" bandwidth=\"0Bps\"/>"), "attribute `bandwidth` = \"0Bps\": must be > 0"),
            (zone("<link id=\"l\" bandwidth=\"1Bps\" latency=\"5parsecs\"/>"), "attribute `latency` = \"5parsecs\": unknown unit"),
            (zone("<link id=\"l\" bandwidth=\"1Bps\" sharing_policy=\"FAIR\"/>"), "attribute `sharing_policy` = \"FAIR\""),
            (zone("<link id=\"l\" bandwidth=\"1Bps\" sharing_policy=\"WIFI\"/>"), "sharing policy WIFI is not supported"),
            (zone("<host id=\"a\" speed=\"1f\"/>\n<host id=\"a\" speed=\"2f\"/>"), "line 5: host or router id \"a\" already declared at line 4"),
            (zone("<link id=\"l\" bandwidth=\"1Bps\"/>\n<link id=\"l\" bandwidth=\"1Bps\"/>"), "line 5: link id \"l\" already declared at line 4"),
            (zone("<link id=\"l\" bandwidth=\"1Bps\" sharing_policy=\"SPLITDUPLEX\"/>\n<link id=\"l_UP\" bandwidth=\"1Bps\"/>"), "link id \"l_UP\" already declared"),
            (platform("<zone id=\"z\" routing=\"Full\"/>\n<zone id=\"z\" routing=\"Full\"/>"), "line 4: zone id \"z\" already declared at line 3"),
            (zone("<host id=\"a\" speed=\"1f\"/><host id=\"b\" speed=\"1f\"/>\n<route src=\"a\" dst=\"b\"><link_ctn id=\"nope\"/></route>"), "line 5: <link_ctn> attribute `id` = \"nope\": no <link> has this id"),
            (zone("<host id=\"a\" speed=\"1f\"/>\n<route src=\"a\" dst=\"ghost\"/>"), "line 5: <route> attribute `dst` = \"ghost\": no <host> or <router> has this id"),
            (zone("<host id=\"a\" speed=\"1f\"/>\n<route dst=\"a\"/>"), "line 5: <route> lacks the attribute `src`"),
            (zone("<host id=\"a\" speed=\"1f\"/><host id=\"b\" speed=\"1f\"/><link id=\"l\" bandwidth=\"1Bps\" sharing_policy=\"SPLITDUPLEX\"/>\n<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route>"), "line 5: <link_ctn> lacks the attribute `direction`"),
            (zone("<host id=\"a\" speed=\"1f\"/><host id=\"b\" speed=\"1f\"/><link id=\"l\" bandwidth=\"1Bps\"/>\n<route src=\"a\" dst=\"b\"><link_ctn id=\"l\" direction=\"LEFT\"/></route>"), "attribute `direction` = \"LEFT\""),
            (zone("<host id=\"a\" speed=\"1f\"/><host id=\"b\" speed=\"1f\"/>\n<route src=\"a\" dst=\"b\" symmetrical=\"maybe\"/>"), "attribute `symmetrical` = \"maybe\""),
            (zone("<host id=\"a\" speed=\"1f\"/><host id=\"b\" speed=\"1f\"/>\n<route src=\"a\" dst=\"b\"><host id=\"c\" speed=\"1f\"/></route>"), "line 5: <host>: not allowed inside <route> (only <link_ctn>)"),
            (zone("<host id=\"a\" speed=\"1f\"/><host id=\"b\" speed=\"1f\"/>\n<route src=\"a\" dst=\"b\" gw_src=\"a\"/>"), "attribute `gw_src` is not supported"),
            (platform("<zone id=\"z\" routing=\"Full\">\n<zone id=\"in\" routing=\"Full\"><host id=\"a\" speed=\"1f\"/></zone>\n<host id=\"b\" speed=\"1f\"/>\n<route src=\"a\" dst=\"b\"/></zone>"), "line 6: <route> attribute `src` = \"a\": not a host or router of zone \"z\""),
            (platform("<zone id=\"z\" routing=\"Full\">\n<zone id=\"p\" routing=\"Full\"><host id=\"a\" speed=\"1f\"/></zone>\n<zone id=\"q\" routing=\"Full\"><host id=\"b\" speed=\"1f\"/></zone>\n<zoneRoute src=\"p\" dst=\"q\" gw_src=\"b\" gw_dst=\"b\"/></zone>"), "line 6: <zoneRoute> attribute `gw_src` = \"b\": not a host or router inside zone \"p\""),
            (platform("<zone id=\"z\" routing=\"Full\">\n<zone id=\"p\" routing=\"Full\"><host id=\"a\" speed=\"1f\"/></zone>\n<zoneRoute src=\"p\" dst=\"elsewhere\" gw_src=\"a\" gw_dst=\"a\"/></zone>"), "attribute `dst` = \"elsewhere\": not a zone directly inside zone \"z\""),
            (platform("<zone id=\"z\" routing=\"Vivaldi\"/>"), "line 3: <zone>: routing=\"Vivaldi\" is not supported"),
            (platform("<zone id=\"z\" routing=\"Cluster\"/>"), "routing=\"Cluster\" is not supported"),
            (platform("<zone id=\"z\" routing=\"Shortest\"/>"), "attribute `routing` = \"Shortest\": expected Full, Floyd or Dijkstra"),
            (platform("<zone id=\"z\"/>"), "lacks the attribute `routing`"),
            (zone("<cabinet id=\"c\" prefix=\"\" suffix=\"\" radical=\"1\" speed=\"1f\" bw=\"1Bps\" lat=\"0\"/>"), "line 4: <cabinet>: this element is not supported"),
            (zone("<bypassRoute src=\"a\" dst=\"b\"/>"), "<bypassRoute>: this element is not supported"),
            (zone("<teleporter/>"), "<teleporter> is not allowed inside <zone>"),
            (platform("<host id=\"a\" speed=\"1f\"/>"), "<host> is not allowed directly inside <platform>"),
            (platform("<include file=\"other.xml\"/>"), "included files are not supported"),
            (platform("<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-3\" speed=\"1Gf\" bw=\"1Bps\" lat=\"0\" topology=\"DRAGONFLY\" topo_parameters=\"2,1;2,1;2,1;2\"/>"), "line 3: <cluster>: attribute `topology` = \"DRAGONFLY\" is not supported (FLAT, TORUS and FAT_TREE are)"),
            (platform("<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-3\" speed=\"1Gf\" bw=\"1Bps\" lat=\"0\" topology=\"RING\"/>"), "line 3: <cluster> attribute `topology` = \"RING\": expected FLAT, TORUS, FAT_TREE or DRAGONFLY"),
            (platform("<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-3\" speed=\"1Gf\" bw=\"1Bps\" lat=\"0\" topology=\"TORUS\"/>"), "line 3: <cluster> lacks the attribute `topo_parameters`"),
            (platform("<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-3\" speed=\"1Gf\" bw=\"1Bps\" lat=\"0\" topology=\"TORUS\" topo_parameters=\"2,x\"/>"), "line 3: <cluster> attribute `topo_parameters` = \"2,x\": \"x\" is not a whole number >= 1"),
            (platform("<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-2\" speed=\"1Gf\" bw=\"1Bps\" lat=\"0\" topology=\"TORUS\" topo_parameters=\"2,2\"/>"), "attribute `radical` = \"3 hosts\": the topology has 4 hosts"),
            (platform("<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-3\" speed=\"1Gf\" bw=\"1Bps\" lat=\"0\" topology=\"TORUS\" topo_parameters=\"2,2\" router_id=\"r\"/>"), "attribute `router_id` with topology TORUS"),
            (platform("<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-3\" speed=\"1Gf\" bw=\"1Bps\" lat=\"0\" topology=\"FAT_TREE\" topo_parameters=\"2;2,2;1,2\"/>"), "attribute `topo_parameters` = \"2;2,2;1,2\": a fat tree is"),
            (platform("<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-3\" speed=\"1Gf\" bw=\"1Bps\" lat=\"0\" topology=\"FAT_TREE\" topo_parameters=\"2;2,2;1;1,1\"/>"), "2 levels but 1 parents counts"),
            (platform("<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-3\" speed=\"1Gf\" bw=\"1Bps\" lat=\"0\" topology=\"FAT_TREE\" topo_parameters=\"2;2,2;1,2;1,1\" bb_bw=\"1Bps\"/>"), "attribute `bb_bw` with topology FAT_TREE"),
            (platform("<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-3\" speed=\"1Gf\" bw=\"1Bps\" lat=\"0\" limiter_link=\"1Bps\"/>"), "attribute `limiter_link` is not supported"),
            (platform("<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"3-1\" speed=\"1Gf\" bw=\"1Bps\" lat=\"0\"/>"), "attribute `radical` = \"3-1\": range 3-1 is empty"),
            (platform("<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"1,x\" speed=\"1Gf\" bw=\"1Bps\" lat=\"0\"/>"), "attribute `radical` = \"1,x\": \"x\" is not a whole number"),
            (platform("<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-99999999\" speed=\"1Gf\" bw=\"1Bps\" lat=\"0\"/>"), "more than 4096 hosts"),
            (platform("<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0\" speed=\"1Gf\" lat=\"0\"/>"), "<cluster> lacks the attribute `bw`"),
            (platform("<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0\" speed=\"1Gf\" bw=\"1Bps\" lat=\"0\" bb_lat=\"1s\"/>"), "<cluster> lacks the attribute `bb_bw`"),
            (platform("<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0\" speed=\"1Gf\" bw=\"1Bps\" lat=\"0\" bb_bw=\"1Bps\" bb_sharing_policy=\"SPLITDUPLEX\"/>"), "a backbone is SHARED or FATPIPE"),
            (platform("<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0,0\" speed=\"1Gf\" bw=\"1Bps\" lat=\"0\"/>"), "host or router id \"n0\" already declared"),
            (platform("<zone id=\"z\" routing=\"Full\"><router id=\"r\"/></zone>"), "invalid platform: the platform has no processor"),
            (platform(&format!("{}{}", (0..70).map(|i| format!("<zone id=\"z{i}\" routing=\"Full\">")).collect::<String>(), "</zone>".repeat(70))), "zones nested deeper than 64"),
        ];
        for (xml, needle) in &cases {
            let err = read(xml).expect_err(xml);
            let message = err.to_string();
            assert!(
                message.contains(needle),
                "{xml}\n gave {message:?}\n expected {needle:?}"
            );
        }
        // Bad options are refused too.
        let opts = SimgridOptions {
            flops_per_unit: 0.0,
            unit_bytes: 1.0,
        };
        assert!(read_simgrid(&platform(""), &opts)
            .unwrap_err()
            .to_string()
            .contains("flops_per_unit"));
    }

    /// The host of rank `r` of a torus or fat tree, from a link name's numbers.
    fn numbers(name: &str) -> Vec<usize> {
        name.split(|c: char| !c.is_ascii_digit())
            .filter(|x| !x.is_empty())
            .map(|x| x.parse().unwrap())
            .collect()
    }

    /// A 3 x 2 x 2 torus (SimGrid's example): every route is a shortest path of
    /// the torus (its length is the sum over dimensions of the shorter way round),
    /// goes dimension after dimension, and each link joins the nodes it is named
    /// after (UP from its first node to its second, DOWN back).
    #[test]
    fn torus_cluster_routes() {
        let xml = platform(
            r#"<zone id="world" routing="Full">
    <cluster id="bob" topology="TORUS" topo_parameters="3,2,2"
             prefix="node-" radical="0-11" suffix=".org"
             speed="1Gf" bw="125MBps" lat="50us" loopback_bw="100MBps" loopback_lat="0"/>
  </zone>"#,
        );
        let p = read(&xml).unwrap();
        assert_eq!((p.len(), p.links().len()), (12, 12 * 3 * 2));
        assert!(p
            .links()
            .iter()
            .all(|l| l.sharing == SharingPolicy::Splitduplex));
        let dims = [3usize, 2, 2];
        let coords = |r: usize| [r % 3, (r / 3) % 2, r / 6];
        for a in 0..12 {
            for b in (0..12).filter(|&b| b != a) {
                let names = route_names(&p, &format!("node-{a}.org"), &format!("node-{b}.org"));
                let (ca, cb) = (coords(a), coords(b));
                let expected: usize = (0..3)
                    .map(|j| {
                        let delta = ca[j].abs_diff(cb[j]);
                        delta.min(dims[j] - delta)
                    })
                    .sum();
                assert_eq!(names.len(), expected, "{a} -> {b}: {names:?}");
                let (mut at, mut last_dim) = (a, 0);
                for name in &names {
                    let n = numbers(name);
                    let (from, to) = (n[0], n[1]);
                    let (x, y) = if name.ends_with("_UP") {
                        (from, to)
                    } else {
                        (to, from)
                    };
                    assert_eq!(x, at, "{a} -> {b}: {names:?}");
                    let dim = (0..3).find(|&j| coords(x)[j] != coords(y)[j]).unwrap();
                    assert!(dim >= last_dim, "{a} -> {b}: dimension order {names:?}");
                    last_dim = dim;
                    at = y;
                }
                assert_eq!(at, b);
            }
        }
        // By hand, SimGrid's rule: 0 = (0,0,0) to 11 = (2,1,1): dimension 0 the
        // short way back (0 -> 2, on 2's link DOWN), then up in 1 and 2.
        assert_eq!(
            route_names(&p, "node-0.org", "node-11.org"),
            [
                "bob_link_from_2_to_0_DOWN",
                "bob_link_from_2_to_5_UP",
                "bob_link_from_5_to_11_UP"
            ]
        );
        // SHARED links: one link per node and dimension, used both ways.
        let shared =
            read(&xml.replace("lat=\"50us\"", "lat=\"50us\" sharing_policy=\"SHARED\"")).unwrap();
        assert_eq!(shared.links().len(), 36);
        assert_eq!(
            route_names(&shared, "node-0.org", "node-11.org"),
            [
                "bob_link_from_2_to_0",
                "bob_link_from_2_to_5",
                "bob_link_from_5_to_11"
            ]
        );
    }

    /// A fat tree of 4 hosts, 2 levels (2 children per node, 1 then 2 parents, one
    /// link each): the routes worked out by hand from SimGrid's rules, and on a
    /// larger tree every route climbs then descends through joined nodes.
    #[test]
    fn fat_tree_cluster_routes() {
        let xml = |params: &str, radical: &str| {
            platform(&format!(
                r#"<zone id="world" routing="Full">
    <cluster id="ft" topology="FAT_TREE" topo_parameters="{params}"
             prefix="n" radical="{radical}" suffix="" speed="1Gf" bw="125MBps" lat="50us"/>
  </zone>"#
            ))
        };
        let p = read(&xml("2;2,2;1,2;1,1", "0-3")).unwrap();
        // Switches 7, 6 (level 1) and 5, 4 (level 2); 4 + 4 links, split duplex.
        assert_eq!((p.len(), p.links().len()), (4, 16));
        assert_eq!(
            route_names(&p, "n0", "n1"),
            ["link_from_0_7_0_UP", "link_from_1_7_1_DOWN"]
        );
        assert_eq!(
            route_names(&p, "n0", "n3"),
            [
                "link_from_0_7_0_UP",
                "link_from_7_4_5_UP",
                "link_from_6_4_7_DOWN",
                "link_from_3_6_3_DOWN"
            ]
        );
        assert_eq!(
            route_names(&p, "n3", "n0"),
            [
                "link_from_3_6_3_UP",
                "link_from_6_5_6_UP",
                "link_from_7_5_4_DOWN",
                "link_from_0_7_0_DOWN"
            ]
        );
        // SimGrid's documented example: 16 hosts, 4 + 2 switches, 2 cables between
        // the levels 1 and 2.
        let p = read(&xml("2;4,4;1,2;1,2", "0-15")).unwrap();
        assert_eq!(p.len(), 16);
        assert_eq!(p.links().len(), 2 * (16 + 4 * 2 * 2));
        for a in 0..16 {
            for b in (0..16).filter(|&b| b != a) {
                let names = route_names(&p, &format!("n{a}"), &format!("n{b}"));
                let ups = names.iter().take_while(|n| n.ends_with("_UP")).count();
                assert!(
                    names[ups..].iter().all(|n| n.ends_with("_DOWN")),
                    "{names:?}"
                );
                assert_eq!(ups, names.len() - ups, "{a} -> {b}: {names:?}");
                // Same first-level switch (4 hosts each) iff one hop up.
                assert_eq!(ups == 1, a / 4 == b / 4, "{a} -> {b}: {names:?}");
                let mut at = a;
                for (k, name) in names.iter().enumerate() {
                    let n = numbers(name);
                    let (child, parent) = (n[0], n[1]);
                    at = if k < ups {
                        assert_eq!(child, at, "{names:?}");
                        parent
                    } else {
                        assert_eq!(parent, at, "{names:?}");
                        child
                    };
                }
                assert_eq!(at, b, "{names:?}");
            }
        }
        // Too few radicals for the tree.
        assert!(read(&xml("2;4,4;1,2;1,2", "0-14"))
            .unwrap_err()
            .to_string()
            .contains("the topology has 16 hosts"));
    }

    #[test]
    fn ignored_elements_do_not_change_the_model() {
        let base = r#"<zone id="z" routing="Full"><host id="a" speed="2f"/><host id="b" speed="4f"/>
            <link id="l" bandwidth="8Bps"/><route src="a" dst="b"><link_ctn id="l"/></route></zone>"#;
        let plain = read(&platform(base)).unwrap();
        let decorated = read(&platform(&format!(
            "<config><prop id=\"x\" value=\"y\"/></config>{}<trace id=\"t\" periodicity=\"1\">0 1</trace>\
             <trace_connect kind=\"SPEED\" trace=\"t\" element=\"a\"/><actor host=\"a\" function=\"f\"/>",
            base.replace("speed=\"2f\"", "speed=\"2f\" speed_file=\"s.profile\"")
        )))
        .unwrap();
        assert_eq!(plain, decorated);
    }

    fn arbitrary_xml() -> impl Strategy<Value = String> {
        // Fragments of platform files glued at random: mostly well-formed, often wrong.
        let fragments = prop::sample::select(vec![
            "<zone id=\"z\" routing=\"Full\">", "<zone id=\"y\" routing=\"Floyd\">", "</zone>",
            "<host id=\"a\" speed=\"1Gf\"/>", "<host id=\"b\" speed=\"2Mf,1f\" pstate=\"1\"/>",
            "<router id=\"r\"/>", "<link id=\"l\" bandwidth=\"1MBps\" latency=\"1ms\"/>",
            "<link id=\"s\" bandwidth=\"1kbps\" sharing_policy=\"SPLITDUPLEX\"/>",
            "<route src=\"a\" dst=\"b\">", "<route src=\"a\" dst=\"r\">", "</route>",
            "<link_ctn id=\"l\"/>", "<link_ctn id=\"s\" direction=\"DOWN\"/>",
            "<zoneRoute src=\"z\" dst=\"y\" gw_src=\"r\" gw_dst=\"a\">", "</zoneRoute>",
            "<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-2\" speed=\"1f\" bw=\"1Bps\" lat=\"0\"/>",
            "<cluster id=\"d\" prefix=\"m\" suffix=\"\" radical=\"1\" speed=\"1f\" bw=\"1Bps\" lat=\"0\" bb_bw=\"2Bps\"/>",
            "<", ">", "\"", "&amp;", "&bogus;", "<!-- c -->", "x",
        ]);
        prop::collection::vec(fragments, 0..24).prop_map(|v| {
            format!("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">{}</platform>", v.concat())
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Arbitrary text: an error or a platform, never a panic.
        #[test]
        fn xml_reader_never_panics_on_text(text in "\\PC{0,300}") {
            let _ = read(&text);
        }

        /// Arbitrary bytes (as lossy UTF-8, which is what a caller can hand over).
        #[test]
        fn xml_reader_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
            let _ = read(&String::from_utf8_lossy(&bytes));
        }

        /// Platform-shaped fragments: every result is a valid model or a located error.
        #[test]
        fn xml_reader_on_platform_fragments(xml in arbitrary_xml()) {
            match read(&xml) {
                Ok(p) => {
                    for i in 0..p.len() {
                        prop_assert!(p.w(i) > 0.0);
                        for j in 0..p.len() { prop_assert!(p.cost(i, j) >= 0.0); }
                    }
                }
                Err(SimgridError::Platform(_)) => {}
                Err(e) => prop_assert!(e.to_string().starts_with("line "), "{}", e),
            }
        }
    }
}

/// Every simple path from `a` to `b` through routers only (brute force).
fn all_paths(net: &hetbal::platform::Network, p: usize, a: usize, b: usize) -> Vec<Vec<u32>> {
    fn go(
        net: &hetbal::platform::Network,
        p: usize,
        at: usize,
        b: usize,
        seen: &mut Vec<bool>,
        path: &mut Vec<u32>,
        out: &mut Vec<Vec<u32>>,
    ) {
        if at == b {
            out.push(path.clone());
            return;
        }
        if at < p && !path.is_empty() {
            return; // processors do not forward
        }
        for (l, e) in net.ends().iter().enumerate() {
            let next = if e.from == at {
                e.to
            } else if !e.one_way && e.to == at {
                e.from
            } else {
                continue;
            };
            if seen[next] {
                continue;
            }
            seen[next] = true;
            path.push(l as u32);
            go(net, p, next, b, seen, path, out);
            path.pop();
            seen[next] = false;
        }
    }
    let mut seen = vec![false; net.nodes()];
    seen[a] = true;
    let mut out = Vec::new();
    go(net, p, a, b, &mut seen, &mut Vec::new(), &mut out);
    out
}

/// A random network: `p` processors, `r` routers, `l` links between random nodes
/// (some one way), random widths; routes: none needed (an empty platform graph).
fn random_network(seed: u64, p: usize, r: usize, l: usize) -> (Platform, Vec<f64>) {
    use hetbal::platform::LinkEnds;
    let mut rng = SplitMix64::new(seed);
    let mut next = move || rng.next_u64();
    let n = p + r;
    let mut links = Vec::new();
    let mut ends = Vec::new();
    while links.len() < l {
        let a = (next() % n as u64) as usize;
        let b = (next() % n as u64) as usize;
        if a == b {
            continue;
        }
        links.push(Link {
            name: format!("l{}", links.len()),
            bandwidth: 1.0,
            latency: 0.0,
            sharing: SharingPolicy::Shared,
        });
        ends.push(if next() % 4 == 0 {
            LinkEnds::one_way(a, b)
        } else {
            LinkEnds::both_ways(a, b)
        });
    }
    // Few distinct widths, so that ties (broken by fewer links) happen.
    let widths = (0..l).map(|_| (1 + next() % 4) as f64).collect();
    let platform = Platform::from_graph(
        (0..p)
            .map(|i| Processor::new(format!("P{i}"), 1.0))
            .collect(),
        links,
        Vec::new(),
        1.0,
    )
    .unwrap()
    .with_network((0..r).map(|i| format!("R{i}")).collect(), ends)
    .unwrap();
    (platform, widths)
}

/// Widest paths against every simple path: the same width, the fewest links
/// among the widest, and a walk of the network from source to destination.
#[test]
fn widest_paths_equal_brute_force() {
    let mut pairs = 0;
    for seed in 0..300u64 {
        let p = 2 + (seed % 3) as usize;
        let r = (seed % 4) as usize;
        let l = 3 + (seed % 7) as usize;
        let (platform, widths) = random_network(seed, p, r, l);
        let net = platform.network().unwrap();
        for a in 0..p {
            for b in (0..p).filter(|&b| b != a) {
                let paths = all_paths(net, p, a, b);
                let width = |path: &[u32]| {
                    path.iter()
                        .map(|&l| widths[l as usize])
                        .fold(f64::INFINITY, f64::min)
                };
                let best = paths.iter().map(|x| width(x)).fold(0.0, f64::max);
                let found = net.widest_path(a, b, |l| widths[l]);
                match found {
                    None => assert!(paths.is_empty(), "seed {seed}: {a} -> {b} missed"),
                    Some(w) => {
                        assert!(paths.contains(&w.links), "seed {seed}: not a path {w:?}");
                        assert_eq!(w.width, best, "seed {seed}: {a} -> {b}");
                        assert_eq!(width(&w.links), w.width);
                        let fewest = paths
                            .iter()
                            .filter(|x| width(x) == best)
                            .map(Vec::len)
                            .min()
                            .unwrap();
                        assert_eq!(w.links.len(), fewest, "seed {seed}: {a} -> {b}");
                        pairs += 1;
                    }
                }
            }
        }
    }
    assert!(pairs > 300, "{pairs}");
}

#[test]
fn network_graphs_are_checked() {
    use hetbal::platform::LinkEnds;
    let link = |n: &str| Link {
        name: n.into(),
        bandwidth: 1.0,
        latency: 0.0,
        sharing: SharingPolicy::Shared,
    };
    //  A --a--> R --b-- B   (a one way)
    let base = Platform::from_graph(
        vec![Processor::new("A", 1.0), Processor::new("B", 1.0)],
        vec![link("a"), link("b")],
        vec![Route {
            src: 0,
            dst: 1,
            links: vec![0, 1],
        }],
        1.0,
    )
    .unwrap();
    let good = vec![LinkEnds::one_way(0, 2), LinkEnds::both_ways(2, 1)];
    let p = base
        .clone()
        .with_network(vec!["R".into()], good.clone())
        .unwrap();
    assert_eq!(p.network().unwrap().nodes(), 3);
    // The network survives a change of unit.
    assert_eq!(p.with_unit_bytes(10.0).unwrap().network(), p.network());
    // No path back from B to A: a is one way.
    let net = p.network().unwrap();
    assert!(net.widest_path(1, 0, |_| 1.0).is_none());
    assert_eq!(net.widest_path(0, 1, |_| 1.0).unwrap().links, vec![0, 1]);
    let err = |routers: Vec<&str>, ends: Vec<LinkEnds>| {
        base.clone()
            .with_network(routers.into_iter().map(String::from).collect(), ends)
            .unwrap_err()
            .to_string()
    };
    assert!(err(vec!["R"], vec![LinkEnds::one_way(0, 2)]).contains("1 link ends for 2 links"));
    assert!(err(
        vec!["R"],
        vec![LinkEnds::one_way(0, 5), LinkEnds::both_ways(2, 1)]
    )
    .contains("link \"a\": end 5 is not a node"));
    assert!(err(
        vec!["R"],
        vec![LinkEnds::one_way(2, 2), LinkEnds::both_ways(2, 1)]
    )
    .contains("link \"a\" joins node 2 to itself"));
    assert!(err(vec!["A"], good.clone()).contains("router \"A\": the name is already"));
    assert!(err(vec![""], good.clone()).contains("empty name"));
    // The route A -> B is [a, b]: with a pointing the other way it is no path.
    assert!(err(
        vec!["R"],
        vec![LinkEnds::one_way(2, 0), LinkEnds::both_ways(2, 1)]
    )
    .contains("the route from \"A\" to \"B\" is not a path of the network"));
    // A route through a processor (B forwarding) is no path either.
    let through = Platform::from_graph(
        vec![
            Processor::new("A", 1.0),
            Processor::new("B", 1.0),
            Processor::new("C", 1.0),
        ],
        vec![link("a"), link("b")],
        vec![Route {
            src: 0,
            dst: 2,
            links: vec![0, 1],
        }],
        1.0,
    )
    .unwrap();
    assert!(through
        .with_network(
            Vec::new(),
            vec![LinkEnds::both_ways(0, 1), LinkEnds::both_ways(1, 2)]
        )
        .is_err());
    // JSON: ends for every link or none, names that exist.
    let doc = |ends_b: &str, routers: &str| {
        format!(
            r#"{{"processors": [{{"name": "A", "w": 1}}, {{"name": "B", "w": 1}}],
                "links": [{{"name": "a", "bandwidth": 1, "ends": ["A", "R"], "one_way": true}},
                          {{"name": "b", "bandwidth": 1{ends_b}}}],
                "routes": [{{"src": "A", "dst": "B", "links": ["a", "b"], "symmetrical": false}}]{routers}}}"#
        )
    };
    let ok = json(&doc(r#", "ends": ["R", "B"]"#, r#", "routers": ["R"]"#)).unwrap();
    assert_eq!(ok, p);
    for (ends_b, routers, needle) in [
        (
            "",
            r#", "routers": ["R"]"#,
            "link \"b\" has no `ends` while others do",
        ),
        (
            r#", "ends": ["R", "B"]"#,
            "",
            "end \"R\" is neither a processor nor a router",
        ),
        (
            r#", "ends": ["R", "Q"]"#,
            r#", "routers": ["R"]"#,
            "end \"Q\" is neither",
        ),
    ] {
        let e = json(&doc(ends_b, routers)).unwrap_err().to_string();
        assert!(e.contains(needle), "{e}");
    }
    let no_ends =
        r#"{"processors": [{"name": "A", "w": 1}], "links": [], "routes": [], "routers": ["R"]}"#;
    assert!(json(no_ends)
        .unwrap_err()
        .to_string()
        .contains("no link has `ends`"));
}

/// Clusters of clusters: hosts and routers as documented, every route a shortest
/// path in links of the network (checked against a breadth-first search done by
/// `widest_path` with equal widths), intra-cluster routes up-fabric-down.
#[test]
fn generated_clusters_of_clusters() {
    use hetbal::platform::generate::{clusters, ClustersOptions};
    let o = ClustersOptions::default();
    for seed in 0..20 {
        let p = clusters(seed, &o).unwrap();
        assert!(p.len() >= 4 * 3 && p.len() <= 4 * 8, "{}", p.len());
        let net = p.network().unwrap();
        assert_eq!(net.routers().len(), 4 * 3);
        for a in 0..p.len() {
            for b in (0..p.len()).filter(|&b| b != a) {
                let route = p.route(a, b).unwrap();
                let shortest = net.widest_path(a, b, |_| 1.0).unwrap();
                assert_eq!(route.len(), shortest.links.len(), "{a} -> {b}");
                let name = |k: usize| p.links()[route[k] as usize].name.as_str();
                assert_eq!(name(0), format!("h{a}_up"));
                assert!(name(1).starts_with("fabric"));
                assert_eq!(name(route.len() - 1), format!("h{b}_down"));
            }
        }
        // A fabric is a hub (SHARED) or a switch (FATPIPE); WAN links are SHARED.
        for l in p.links() {
            if l.name.starts_with("fabric") {
                assert!(matches!(
                    l.sharing,
                    SharingPolicy::Shared | SharingPolicy::Fatpipe
                ));
            } else {
                assert_eq!(l.sharing, SharingPolicy::Shared, "{}", l.name);
            }
        }
        assert_eq!(clusters(seed, &o).unwrap(), p);
    }
    let bad = |o: ClustersOptions| clusters(1, &o).unwrap_err().to_string();
    assert!(bad(ClustersOptions { clusters: 0, ..o }).contains("clusters = 0"));
    assert!(bad(ClustersOptions { hosts: (4, 2), ..o }).contains("high end"));
    assert!(bad(ClustersOptions {
        hub_probability: 2.0,
        ..o
    })
    .contains("hub_probability"));
    assert!(bad(ClustersOptions {
        wan_bandwidth: (0.0, 1.0),
        ..o
    })
    .contains("wan_bandwidth"));
    // One cluster: no WAN at all.
    let one = clusters(2, &ClustersOptions { clusters: 1, ..o }).unwrap();
    assert!(one.links().iter().all(|l| !l.name.starts_with("wan")));
}
