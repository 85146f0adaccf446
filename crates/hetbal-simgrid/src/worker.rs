//! Worker processes: SimGrid runs one simulation per process and cannot be
//! stopped from outside a simulation, so every replay runs in a child process
//! that the parent kills when it exceeds its wall-time limit.
//!
//! The parent ([`Worker`]) writes a [`Request`] (JSON) on the child's standard
//! input and reads a response (JSON) on its standard output. The child is any
//! program that calls [`worker_main`]: the `hetbal-simgrid worker` binary of this
//! crate, or `hetbal replay --simgrid-worker`.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::inspect::{inspect, PlatformDump};
use crate::iterative::{simulate_iterative, IterativeJob, IterativeOutcome};
use crate::replay::{ReplayError, ReplayJob, ReplayReport, SimOutcome};
use crate::simulate::simulate;

/// Wall-time limit of a worker unless told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// What a worker is asked to do.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// Replay a plan.
    Replay(ReplayJob),
    /// Re-time a run of the iterative simulator.
    Iterative(IterativeJob),
    /// Load a platform and report its hosts and routes.
    Inspect {
        /// The platform (SimGrid XML text).
        platform_xml: String,
        /// Ordered pairs of host names whose routes are wanted (all when absent).
        pairs: Option<Vec<(String, String)>>,
    },
}

/// What a worker answers.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum Response {
    Replay(SimOutcome),
    Iterative(IterativeOutcome),
    Inspect(PlatformDump),
    Error(ReplayError),
}

/// The body of a worker process: reads one [`Request`] on the standard input,
/// serves it and writes the answer on the standard output. Returns the exit
/// status (0 when an answer was written, 2 when the request was unreadable).
///
/// # Example
/// ```no_run
/// // The whole body of a worker binary's `main`:
/// std::process::exit(hetbal_simgrid::worker_main());
/// ```
pub fn worker_main() -> i32 {
    let request: Request = match serde_json::from_reader(std::io::stdin().lock()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("hetbal-simgrid worker: unreadable request: {e}");
            return 2;
        }
    };
    let response = match request {
        Request::Replay(job) => match simulate(&job) {
            Ok(outcome) => Response::Replay(outcome),
            Err(e) => Response::Error(e),
        },
        Request::Iterative(job) => match simulate_iterative(&job) {
            Ok(outcome) => Response::Iterative(outcome),
            Err(e) => Response::Error(e),
        },
        Request::Inspect {
            platform_xml,
            pairs,
        } => match inspect(&platform_xml, pairs.as_deref()) {
            Ok(dump) => Response::Inspect(dump),
            Err(e) => Response::Error(e),
        },
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match serde_json::to_writer(&mut out, &response) {
        Ok(()) => {
            let _ = out.write_all(b"\n");
            let _ = out.flush();
            0
        }
        Err(e) => {
            eprintln!("hetbal-simgrid worker: cannot write the answer: {e}");
            2
        }
    }
}

/// How to start a worker process, and its wall-time limit.
///
/// # Example
/// ```no_run
/// use std::time::Duration;
/// use hetbal::ring::{plan, RingInstance};
/// use hetbal_simgrid::{NetworkModel, ReplayJob, RingNetwork, Worker};
/// let ring = RingInstance::unidirectional(&[3, 1, 1], &[1, 2, 2], &[1.0, 2.0, 1.0]).unwrap();
/// let plan = plan(&ring, None).unwrap();
/// let network = RingNetwork::from_instance(&ring, 1_000_000).unwrap();
/// let job = ReplayJob::new(&ring, &plan.schedule(), &network, NetworkModel::OnePort).unwrap();
/// let worker = Worker::new("hetbal-simgrid", ["worker"]).timeout(Duration::from_secs(10));
/// let report = worker.replay(&job).unwrap();
/// assert!(report.agrees(1e-9));
/// ```
#[derive(Clone, Debug)]
pub struct Worker {
    program: PathBuf,
    args: Vec<OsString>,
    timeout: Duration,
}

/// How much of a worker's standard error an error keeps (its end).
const STDERR_TAIL: usize = 4000;

impl Worker {
    /// A worker started as `program args...`, with the [`DEFAULT_TIMEOUT`].
    pub fn new<I, S>(program: impl Into<PathBuf>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Worker {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// The same worker with another wall-time limit.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Replays a job in a new worker process.
    ///
    /// # Errors
    /// [`ReplayError::Deadlock`] when the plan blocks; [`ReplayError::Timeout`]
    /// when the worker exceeds the limit (it is killed);
    /// [`ReplayError::Worker`] when it cannot start, crashes or answers nonsense.
    pub fn replay(&self, job: &ReplayJob) -> Result<ReplayReport, ReplayError> {
        match self.call(&Request::Replay(job.clone()))? {
            (Response::Replay(outcome), _)
                if outcome.transfer_ends.len() == job.transfers.len() =>
            {
                Ok(ReplayReport::new(job, &outcome))
            }
            (Response::Error(e), _) => Err(e),
            (_, stderr) => Err(ReplayError::Worker {
                message: "the worker answered something else than a replay".to_string(),
                stderr,
            }),
        }
    }

    /// Re-times a run of the iterative simulator in a new worker process.
    ///
    /// # Errors
    /// As [`Worker::replay`].
    pub fn iterative(&self, job: &IterativeJob) -> Result<IterativeOutcome, ReplayError> {
        match self.call(&Request::Iterative(job.clone()))? {
            (Response::Iterative(outcome), _) => Ok(outcome),
            (Response::Error(e), _) => Err(e),
            (_, stderr) => Err(ReplayError::Worker {
                message: "the worker answered something else than an iterative run".to_string(),
                stderr,
            }),
        }
    }

    /// Loads a platform in a new worker process and reports SimGrid's hosts and
    /// routes (between `pairs` of host names, or every ordered pair).
    ///
    /// # Errors
    /// As [`Worker::replay`]; a platform SimGrid rejects is a
    /// [`ReplayError::Worker`] carrying SimGrid's message.
    pub fn inspect(
        &self,
        platform_xml: &str,
        pairs: Option<Vec<(String, String)>>,
    ) -> Result<PlatformDump, ReplayError> {
        let request = Request::Inspect {
            platform_xml: platform_xml.to_string(),
            pairs,
        };
        match self.call(&request)? {
            (Response::Inspect(dump), _) => Ok(dump),
            (Response::Error(e), _) => Err(e),
            (_, stderr) => Err(ReplayError::Worker {
                message: "the worker answered something else than a platform".to_string(),
                stderr,
            }),
        }
    }

    /// Runs one worker: request in, response out (with the worker's stderr), or
    /// an error when it times out, crashes or answers nonsense.
    fn call(&self, request: &Request) -> Result<(Response, String), ReplayError> {
        let failed = |message: String, stderr: String| ReplayError::Worker { message, stderr };
        let input = serde_json::to_vec(request)
            .map_err(|e| failed(format!("cannot encode the request: {e}"), String::new()))?;
        let mut child = Command::new(&self.program)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                failed(
                    format!("cannot start {}: {e}", self.program.display()),
                    String::new(),
                )
            })?;
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let writer = std::thread::spawn(move || {
            // A worker that dies early closes the pipe: its status tells why.
            let _ = stdin.write_all(&input);
        });
        let mut stdout = child.stdout.take().expect("stdout is piped");
        let out_reader = std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = stdout.read_to_end(&mut text);
            text
        });
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let err_reader = std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = stderr.read_to_end(&mut text);
            text
        });

        let deadline = Instant::now() + self.timeout;
        let mut pause = Duration::from_millis(1);
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) => {}
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(failed(
                        format!("cannot watch the worker: {e}"),
                        String::new(),
                    ));
                }
            }
            let now = Instant::now();
            if now >= deadline {
                // Our own child, by its handle: SIGKILL, then reap it.
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(Duration::from_millis(20));
        };
        let _ = writer.join();
        let out = out_reader.join().unwrap_or_default();
        let err = err_reader.join().unwrap_or_default();
        let err = tail(&String::from_utf8_lossy(&err));
        let Some(status) = status else {
            return Err(ReplayError::Timeout {
                seconds: self.timeout.as_secs_f64(),
            });
        };
        match serde_json::from_slice::<Response>(&out) {
            Ok(response) if status.success() => Ok((response, err)),
            _ if err.contains("cannot catch foreign exceptions") => Err(failed(
                format!(
                    "the worker ended ({status}): SimGrid refused the request with a C++ exception (SimGrid 3.32 does so for platform files it cannot parse or route)"
                ),
                err,
            )),
            _ => Err(failed(
                format!("the worker ended ({status}) without an answer"),
                err,
            )),
        }
    }
}

/// The end of a text, at most [`STDERR_TAIL`] bytes (cut at a character).
fn tail(text: &str) -> String {
    if text.len() <= STDERR_TAIL {
        return text.to_string();
    }
    let mut start = text.len() - STDERR_TAIL;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("...{}", &text[start..])
}
