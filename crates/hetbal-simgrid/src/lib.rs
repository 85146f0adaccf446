//! # hetbal-simgrid
//!
//! Replays hetbal's ring redistribution plans under SimGrid's network models, to
//! see how a plan made for the papers' one-port model behaves under SimGrid's
//! validated models (TCP bandwidth sharing, latency, cross traffic).
//!
//! * [`RingNetwork`]: one SimGrid link per ring edge and direction, bandwidth and
//!   latency from the instance (latency = the edge's start-up, `l_succ` or
//!   `l_pred`: [`RingNetwork::from_instance`]) or from a platform's routes
//!   ([`RingNetwork::from_platform`]).
//! * [`NetworkModel`]: `oneport` (SimGrid's CM02 with every correction off and
//!   each link's latency the instance's start-up: a single flow gets exactly
//!   `latency + size / bandwidth`, the papers' model with start-ups), `CM02` and
//!   `LV08` as SimGrid defines them.
//! * [`ReplayJob`]: a plan's transfers on that network (over a link without
//!   start-up a train of items, over a link with one a single message of all its
//!   items, as docs/model.md "Start-ups" has it); [`Worker::replay`] runs
//!   it in a SimGrid worker process (SimGrid runs one simulation per process)
//!   under a wall-time limit and returns a [`ReplayReport`] (formats.md, "SimGrid
//!   replay report"): both makespans and, per transfer, both ends.
//! * [`IterativeJob`]: a run of the iterative simulator ([`hetbal::iterative`])
//!   with its redistributions, re-timed under SimGrid by [`Worker::iterative`]
//!   (see [`iterative`] for what each processor does).
//! * [`Worker::inspect`]: the hosts and routes SimGrid reads in a platform file.
//!
//! How a processor behaves in the simulation is described in [`simulate`]. The
//! crate needs SimGrid 3.32 or later (`libsimgrid.so`; Debian: `libsimgrid-dev`);
//! its C API is bound in [`ffi`], the only module with `unsafe` code.
//!
//! ```no_run
//! use hetbal::ring::{plan, RingInstance};
//! use hetbal_simgrid::{NetworkModel, ReplayJob, RingNetwork, Worker};
//!
//! let ring = RingInstance::bidirectional(&[6, 1, 1, 2], &[2, 3, 3, 2],
//!                                        &[1.0, 2.0, 1.0, 1.5], &[1.0, 1.0, 2.0, 1.0]).unwrap();
//! let plan = plan(&ring, None).unwrap();
//! let network = RingNetwork::from_instance(&ring, 1_000_000).unwrap();
//! // The `hetbal-simgrid` binary of this crate serves as the worker.
//! let worker = Worker::new("hetbal-simgrid", ["worker"]);
//! for model in NetworkModel::ALL {
//!     let job = ReplayJob::new(&ring, &plan.schedule(), &network, model).unwrap();
//!     let report = worker.replay(&job).unwrap();
//!     println!("{model}: plan {} s, SimGrid {} s", report.plan_makespan, report.simgrid_makespan);
//! }
//! ```
#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod ffi;
pub mod inspect;
pub mod iterative;
pub mod model;
pub mod network;
pub mod replay;
pub mod simulate;
pub mod worker;

pub use inspect::PlatformDump;
pub use iterative::{IterativeJob, IterativeOutcome};
pub use model::NetworkModel;
pub use network::{NetworkError, RingNetwork};
pub use replay::{
    ReplayError, ReplayJob, ReplayReport, TransferReplay, MAX_REPLAY_ITEMS, MAX_REPLAY_PROCESSORS,
};
pub use worker::{worker_main, Worker};
