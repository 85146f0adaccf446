//! What SimGrid makes of a platform file: its hosts and the links of its routes.
//! Used to check that hetbal's platform reader sees the same platform as SimGrid.

use serde::{Deserialize, Serialize};

use std::sync::{Arc, Mutex};

use crate::ffi::{ActorCtx, Host, PlatformQueries};
use crate::replay::ReplayError;
use crate::simulate::start_engine;

/// A host as SimGrid loaded it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostDump {
    /// The host's name.
    pub name: String,
    /// Its speed in flop/s.
    pub speed: f64,
}

/// A link of a route as SimGrid loaded it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkDump {
    /// The link's name (`ID_UP` / `ID_DOWN` for split-duplex halves).
    pub name: String,
    /// Bandwidth in bytes per second.
    pub bandwidth: f64,
    /// Latency in seconds.
    pub latency: f64,
    /// True when flows share its bandwidth (SHARED), false for a FATPIPE.
    pub shared: bool,
}

/// The route between two hosts as SimGrid computes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteDump {
    /// Source host.
    pub src: String,
    /// Destination host.
    pub dst: String,
    /// The links crossed, in order.
    pub links: Vec<LinkDump>,
}

/// A platform as SimGrid sees it: hosts (SimGrid's order) and routes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlatformDump {
    /// The hosts.
    pub hosts: Vec<HostDump>,
    /// The routes asked for (every ordered pair of distinct hosts by default).
    pub routes: Vec<RouteDump>,
}

/// Loads a platform text into SimGrid in this process and reads back its hosts
/// and the routes between `pairs` of host names (every ordered pair of distinct
/// hosts when `None`). SimGrid runs one simulation per process: call it in a
/// worker ([`crate::Worker::inspect`]).
///
/// # Errors
/// [`ReplayError::Worker`] when SimGrid was already used in this process or a
/// host of `pairs` does not exist. A file SimGrid rejects, or a pair SimGrid has
/// no route for, ends the process (SimGrid's own error handling).
pub fn inspect(
    platform_xml: &str,
    pairs: Option<&[(String, String)]>,
) -> Result<PlatformDump, ReplayError> {
    let mut engine = start_engine(&[], &[], platform_xml)?;
    let first = *engine.hosts().first().ok_or_else(|| ReplayError::Worker {
        message: "the platform has no host".to_string(),
        stderr: String::new(),
    })?;
    // Floyd and Dijkstra zones know their routes once the platform is sealed,
    // which happens when the simulation starts: an actor asks.
    let answer: Arc<Mutex<Option<Result<PlatformDump, ReplayError>>>> = Arc::default();
    let slot = Arc::clone(&answer);
    let pairs = pairs.map(<[_]>::to_vec);
    engine
        .spawn_actor("inspector", first, move |ctx| {
            let dump = dump(ctx, pairs);
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(dump);
        })
        .map_err(|e| ReplayError::Worker {
            message: e.to_string(),
            stderr: String::new(),
        })?;
    engine.run();
    let answer = answer.lock().unwrap_or_else(|e| e.into_inner()).take();
    answer.unwrap_or_else(|| {
        Err(ReplayError::Worker {
            message: "the inspecting actor did not finish".to_string(),
            stderr: String::new(),
        })
    })
}

/// Hosts and routes, read from inside the simulation.
fn dump(ctx: &ActorCtx, pairs: Option<Vec<(String, String)>>) -> Result<PlatformDump, ReplayError> {
    let hosts: Vec<HostDump> = ctx
        .hosts()
        .into_iter()
        .map(|h| HostDump {
            name: ctx.host_name(h),
            speed: ctx.host_speed(h),
        })
        .collect();
    let find = |name: &str| -> Result<Host, ReplayError> {
        ctx.host_by_name(name)
            .ok()
            .flatten()
            .ok_or_else(|| ReplayError::Worker {
                message: format!("the platform has no host named {name:?}"),
                stderr: String::new(),
            })
    };
    let pairs: Vec<(String, String)> = match pairs {
        Some(p) => p,
        None => hosts
            .iter()
            .flat_map(|a| {
                hosts
                    .iter()
                    .filter(move |b| a.name != b.name)
                    .map(move |b| (a.name.clone(), b.name.clone()))
            })
            .collect(),
    };
    let mut routes = Vec::with_capacity(pairs.len());
    for (src, dst) in pairs {
        let (a, b) = (find(&src)?, find(&dst)?);
        let links = ctx
            .route(a, b)
            .into_iter()
            .map(|l| LinkDump {
                name: l.name,
                bandwidth: l.bandwidth,
                latency: l.latency,
                shared: l.shared,
            })
            .collect();
        routes.push(RouteDump { src, dst, links });
    }
    Ok(PlatformDump { hosts, routes })
}
