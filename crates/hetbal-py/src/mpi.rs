//! The MPI runtime on mpi4py communicators (`hetbal.mpi`, cargo feature `mpi`):
//! a ring redistribution of a numpy array's rows and the balancer of iterative
//! applications, over `hetbal-mpi`. Every call is collective over its
//! communicator. The communicator stays the caller's: hetbal works on a
//! duplicate (`MPI_Comm_dup`), so its messages never mix with the
//! application's, and frees only that duplicate.
//!
//! Items move as bytes (`hetbal.mpi` passes the rows of any dtype and trailing
//! shape as a `(count, item_bytes)` uint8 array). The caller's array is never
//! written: its rows are copied once into the buffer the runtime grows in
//! place, which becomes the returned array's memory without another copy. So on
//! failure every rank's array is untouched, and the error is raised on every
//! rank.

use ::mpi::ffi::MPI_Comm;
use ::mpi::traits::Communicator;
use hetbal::iterative::Policy;
use hetbal_mpi::balancer::{Balancer, DeciderModel, Decision, Mark};
use hetbal_mpi::buffer::ItemBuffer;
use hetbal_mpi::comm::{
    agree_arguments, duplicate_raw, fingerprint, Duplicate, DuplicateError, Refusal,
};
use hetbal_mpi::items::redistribute_items_bytes;
use hetbal_mpi::ring::{link_flows, redistribute_bytes};
use hetbal_mpi::weighted::WeightedBalancer;
use hetbal_mpi::{Fault, Options, RunError};
use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{costs, count};
use crate::decider::{model_of, policy_of};
use crate::item_buffer::PyItemBuffer;
use crate::plan::Plan;
use crate::{shield, Failure};

/// The `MPI_Comm` whose value mpi4py gives (`MPI._handleof(comm)`: for
/// OpenMPI the pointer, for MPICH the integer handle).
fn raw_comm(handle: u64) -> MPI_Comm {
    // SAFETY: MPI_Comm is a pointer or an integer of 4 or 8 bytes, and the
    // value is the handle's own bits.
    unsafe {
        match std::mem::size_of::<MPI_Comm>() {
            8 => std::mem::transmute_copy(&handle),
            4 => std::mem::transmute_copy(&(handle as u32)),
            size => unreachable!("an MPI_Comm of {size} bytes"),
        }
    }
}

/// Duplicates the communicator of mpi4py handle `handle` (collective; see
/// [`hetbal_mpi::comm`]).
pub(crate) fn duplicate(handle: &Bound<'_, PyAny>) -> Result<Duplicate, Failure> {
    let bits = handle
        .extract::<u64>()
        .or_else(|_| handle.extract::<i64>().map(|h| h as u64))
        .map_err(|_| Failure::input("comm: not an mpi4py communicator handle"))?;
    if !::mpi::environment::is_initialized() {
        return Err(Failure::input(
            "MPI is not initialised: import mpi4py.MPI first",
        ));
    }
    // SAFETY: mpi4py's handle of a communicator (or of MPI.COMM_NULL).
    without_gil(handle.py(), || unsafe { duplicate_raw(raw_comm(bits)) }).map_err(|e| match e {
        DuplicateError::Failed { .. } => Failure::Run(e.to_string()),
        DuplicateError::Null => Failure::input("comm is MPI.COMM_NULL"),
        DuplicateError::NotInitialized => Failure::input(e.to_string()),
    })
}

/// Runs `f` (MPI calls that wait for the other ranks) without the GIL, so
/// that the process's other Python threads run meanwhile; with the GIL held
/// when MPI was initialised below `MPI_THREAD_MULTIPLE` (another thread
/// calling MPI at the same time would then be erroneous).
pub(crate) fn without_gil<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> T {
    if ::mpi::environment::threading_support() == ::mpi::Threading::Multiple {
        py.detach(f)
    } else {
        f()
    }
}

/// Every rank's checks agreed ([`agree_arguments`], without the GIL): this
/// rank's failure, or an error naming the first rank that failed, so that
/// every rank raises.
pub(crate) fn agree<T: Send>(
    py: Python<'_>,
    comm: &Duplicate,
    local: Result<T, Failure>,
    fingerprint: u64,
) -> Result<T, Failure> {
    without_gil(py, || agree_arguments(&**comm, local, fingerprint)).map_err(|refusal| {
        match refusal {
            Refusal::Local(failure) => failure,
            Refusal::Refused(refused) => Failure::input(format!(
                "{refused} (the InputError raised on that rank says which)"
            )),
            Refusal::Mismatch => Failure::input(
                "the ranks were given different arguments (every rank must pass the same); nothing done",
            ),
        }
    })
}

/// A failed run: the caller's arguments ([`Failure::Input`]) or the run
/// ([`Failure::Run`]); either way nothing moved.
pub(crate) fn run_failure(e: RunError) -> Failure {
    match e.is_input() {
        true => Failure::input(e.to_string()),
        false => Failure::Run(e.to_string()),
    }
}

/// `fault=(rank, name)`: the fault one rank injects on purpose (tests).
fn fault_of(fault: Option<&Bound<'_, PyAny>>) -> Result<Option<(usize, Fault)>, Failure> {
    let Some(fault) = fault.filter(|f| !f.is_none()) else {
        return Ok(None);
    };
    let names = || {
        Fault::ALL
            .iter()
            .map(|f| f.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (rank, name): (usize, String) = fault.extract().map_err(|_| {
        Failure::input(format!(
            "fault: a pair (rank, name) with a name among {}",
            names()
        ))
    })?;
    let fault = Fault::from_name(&name)
        .ok_or_else(|| Failure::input(format!("fault {name:?}: choose one of {}", names())))?;
    Ok(Some((rank, fault)))
}

/// Items arriving from the predecessor and from the successor under `flows`
/// (the net flow on every link (i, i+1)).
fn arriving(flows: &[i128], rank: usize) -> (usize, usize) {
    let n = flows.len();
    let before = flows[(rank + n - 1) % n].max(0) as usize;
    let after = (-flows[rank]).max(0) as usize;
    (before, after)
}

/// The rows of this rank in a `Vec` the runtime grows without reallocating:
/// its capacity holds the items arriving from both neighbours too (`flows`: the
/// net flow on every link (i, i+1)). The rows shift once when items arrive in
/// front of them.
fn buffer(rows: &[u8], item_bytes: usize, flows: &[i128], rank: usize) -> Vec<u8> {
    let (before, after) = arriving(flows, rank);
    let room = rows.len() + (before + after) * item_bytes;
    let mut buffer = Vec::with_capacity(room);
    buffer.extend_from_slice(rows);
    buffer
}

/// A copy of this rank's rows that a redistribution under `flows` grows in
/// place.
enum Moving {
    /// In an item buffer, the rows in the middle of a reservation of twice the
    /// larger side (the rows and what arrives behind them, or what arrives in
    /// front): they never move.
    Buffer(ItemBuffer<u8>),
    /// In a `Vec` ([`buffer`]), where the system refuses the reservation.
    Vec(Vec<u8>),
}

impl Moving {
    /// The rows copied once, into an item buffer when the system gives one.
    fn of(rows: &[u8], item_bytes: usize, flows: &[i128], rank: usize) -> Moving {
        Moving::with_room(rows, item_bytes, arriving(flows, rank))
            .unwrap_or_else(|| Moving::Vec(buffer(rows, item_bytes, flows, rank)))
    }

    /// The rows copied once into an item buffer with room for `before` items
    /// in front and `after` behind, or `None` when the system refuses it.
    fn with_room(
        rows: &[u8],
        item_bytes: usize,
        (before, after): (usize, usize),
    ) -> Option<Moving> {
        let front = before.checked_mul(item_bytes);
        let behind = after
            .checked_mul(item_bytes)
            .and_then(|a| a.checked_add(rows.len()));
        let reserve = front.zip(behind).and_then(|(f, b)| f.max(b).checked_mul(2));
        let mut items = ItemBuffer::with_reserve(reserve?).ok()?;
        // Huge pages where the system has them, as numpy gives its large
        // arrays (and hetbal.mpi.ItemBuffer asks for).
        items.advise_huge_pages();
        items.extend_from_slice(rows).ok()?;
        Some(Moving::Buffer(items))
    }

    /// Bytes held.
    fn len(&self) -> usize {
        match self {
            Moving::Buffer(items) => items.len(),
            Moving::Vec(items) => items.len(),
        }
    }

    /// [`redistribute_bytes`] on the rows.
    fn redistribute(
        &mut self,
        comm: &Duplicate,
        (loads, flows): (&[u64], &[i128]),
        item_bytes: usize,
        options: &Options,
    ) -> Result<(), RunError> {
        match self {
            Moving::Buffer(items) => {
                redistribute_bytes(&**comm, loads, flows, item_bytes, items, options)
            }
            Moving::Vec(items) => {
                redistribute_bytes(&**comm, loads, flows, item_bytes, items, options)
            }
        }
        .map(|_| ())
    }

    /// The rows as a 1-D uint8 array, without a copy: a view of the item buffer
    /// (its base keeps the buffer alive), or the `Vec`'s memory.
    fn into_array(self, py: Python<'_>, item_bytes: usize) -> PyResult<Bound<'_, PyArray1<u8>>> {
        match self {
            Moving::Buffer(items) => {
                PyItemBuffer::view(Bound::new(py, PyItemBuffer::holding(items, item_bytes))?)
            }
            Moving::Vec(items) => Ok(PyArray1::from_vec(py, items)),
        }
    }
}

/// The rows given (`(count, item_bytes)` uint8), or the problem `hetbal.mpi`
/// found with the caller's array.
pub(crate) fn rows_of<'a>(
    rows: &'a Option<PyReadonlyArray2<'_, u8>>,
    problem: Option<String>,
) -> Result<(&'a [u8], usize, usize), Failure> {
    if let Some(problem) = problem {
        return Err(Failure::Input(problem));
    }
    let rows = rows
        .as_ref()
        .ok_or_else(|| Failure::input("array: no rows given"))?;
    let (count, item_bytes) = (rows.shape()[0], rows.shape()[1]);
    if item_bytes == 0 {
        return Err(Failure::input("array: items of 0 bytes"));
    }
    let bytes = rows
        .as_slice()
        .map_err(|_| Failure::input("array: the rows are not contiguous"))?;
    Ok((bytes, count, item_bytes))
}

/// Moves this rank's rows as `plan` says (rank i is ring position i): `rows`
/// is a C-contiguous `(count, item_bytes)` uint8 array with `count` the plan's
/// load of this rank, or `problem` says what is wrong with the caller's array.
/// Returns the new rows, in the global order, as a 1-D uint8 array.
#[pyfunction]
#[pyo3(signature = (comm, plan, rows, problem=None, fault=None))]
fn mpi_redistribute<'py>(
    py: Python<'py>,
    comm: &Bound<'py, PyAny>,
    plan: &Bound<'py, PyAny>,
    rows: Option<PyReadonlyArray2<'py, u8>>,
    problem: Option<String>,
    fault: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray1<u8>>> {
    let comm = duplicate(comm)?;
    let (rank, ranks) = (comm.rank() as usize, comm.size() as usize);
    let local = (|| {
        let (bytes, count, item_bytes) = rows_of(&rows, problem)?;
        let (loads, flows, options) =
            checked_move(plan, fault, (rank, ranks), count as u64, "array")?;
        let rows = Moving::of(bytes, item_bytes, &flows, rank);
        Ok((rows, item_bytes, loads, flows, options))
    })();
    let (mut rows, item_bytes, loads, flows, options) = agree(py, &comm, local, 0)?;
    without_gil(py, || {
        shield(Failure::Run, || {
            rows.redistribute(&comm, (&loads, &flows), item_bytes, &options)
                .map_err(run_failure)
        })
    })?;
    rows.into_array(py, item_bytes)
}

/// A ring move's arguments checked on this rank: `plan` a hetbal.Plan for as
/// many processors as the communicator has ranks, whose load of this rank is
/// the `count` rows held (`what`: "array" or "buffer"), and the fault. Returns
/// the plan's loads and net link flows, and the run's options.
pub(crate) fn checked_move(
    plan: &Bound<'_, PyAny>,
    fault: Option<&Bound<'_, PyAny>>,
    (rank, ranks): (usize, usize),
    count: u64,
    what: &str,
) -> Result<(Vec<u64>, Vec<i128>, Options), Failure> {
    let plan = plan
        .cast::<Plan>()
        .map_err(|_| Failure::input("plan: a hetbal.Plan (from hetbal.ring_plan)"))?;
    let plan = plan.get();
    let fault = fault_of(fault)?;
    let n = plan.ring.len();
    if ranks != n {
        return Err(Failure::input(format!(
            "the communicator has {ranks} ranks but the plan {n} processors"
        )));
    }
    let loads = plan.ring.loads().to_vec();
    if count != loads[rank] {
        return Err(Failure::input(format!(
            "{what}: rank {rank} holds {count} rows but the plan's load of rank {rank} is {}",
            loads[rank]
        )));
    }
    let options = Options {
        fault,
        ..Options::default()
    };
    Ok((loads, link_flows(n, &plan.plan.flows), options))
}

/// Variable-size items handed back: their bytes and offsets (in elements).
type Items<'py> = (Bound<'py, PyArray1<u8>>, Bound<'py, PyArray1<u64>>);

/// Moves this rank's variable-size items to the new `cuts` (rank r ends with
/// items `cuts[r] .. cuts[r + 1]` of the global order, a chain): `data` is
/// the items' bytes (1-D uint8), `element_bytes` the size of the caller's
/// elements, `offsets` the `k + 1` offsets of its `k` items in elements, or
/// `problem` says what is wrong with the caller's arrays. Returns the new
/// items' bytes and offsets (in elements).
#[pyfunction]
#[pyo3(signature = (comm, data, element_bytes, offsets, cuts, problem=None, fault=None))]
#[allow(clippy::too_many_arguments)] // the wrapper's arguments, checked here
fn mpi_redistribute_items<'py>(
    py: Python<'py>,
    comm: &Bound<'py, PyAny>,
    data: Option<PyReadonlyArray1<'py, u8>>,
    element_bytes: usize,
    offsets: Option<PyReadonlyArray1<'py, u64>>,
    cuts: Option<PyReadonlyArray1<'py, u64>>,
    problem: Option<String>,
    fault: Option<&Bound<'py, PyAny>>,
) -> PyResult<Items<'py>> {
    let comm = duplicate(comm)?;
    let local = (|| {
        if let Some(problem) = problem {
            return Err(Failure::Input(problem));
        }
        let slice = |a: &Option<PyReadonlyArray1<'py, u64>>, name: &str| {
            a.as_ref()
                .and_then(|a| a.as_slice().ok().map(<[u64]>::to_vec))
                .ok_or_else(|| Failure::input(format!("{name}: a contiguous uint64 array")))
        };
        let (offsets, cuts) = (slice(&offsets, "offsets")?, slice(&cuts, "cuts")?);
        let data = data
            .as_ref()
            .and_then(|d| d.as_slice().ok())
            .ok_or_else(|| Failure::input("data: a contiguous 1-D array"))?;
        if element_bytes == 0 {
            return Err(Failure::input("data: elements of 0 bytes"));
        }
        Ok((data.to_vec(), offsets, cuts, fault_of(fault)?))
    })();
    let (mut buffer, mut offsets, cuts, fault) = agree(py, &comm, local, 0)?;
    let options = Options {
        fault,
        ..Options::default()
    };
    without_gil(py, || {
        shield(Failure::Run, || {
            redistribute_items_bytes(
                &*comm,
                element_bytes,
                &mut buffer,
                &mut offsets,
                &cuts,
                &options,
            )
            .map_err(run_failure)
        })
    })?;
    Ok((
        PyArray1::from_vec(py, buffer),
        PyArray1::from_vec(py, offsets),
    ))
}

/// The balancer of an iterative application (`hetbal.mpi.Balancer` wraps it).
#[pyclass(module = "hetbal.mpi", name = "_Balancer")]
struct MpiBalancer {
    /// The duplicate of the application's communicator (None once closed).
    comm: Option<Duplicate>,
    /// The balancer on the link costs given (`c_succ`, `c_pred`), until the
    /// first step takes it; None: the links are measured at the first step.
    given: Option<Balancer>,
    /// The fault to inject (tests).
    fault: Option<(usize, Fault)>,
    /// The policy its decider decides with.
    policy: Policy,
    /// The model of the compute times its decider uses.
    model: DeciderModel,
    /// From the first step on: the balancer and the item size it moves.
    state: Option<(Balancer, usize)>,
}

/// Link costs given to a balancer: `c_succ` and, on bidirectional rings, `c_pred`.
type Links = (Vec<f64>, Option<Vec<f64>>);

/// What a step hands back: the new rows (None when nothing moved) and the
/// decision.
type Stepped<'py> = (Option<Bound<'py, PyArray1<u8>>>, Bound<'py, PyDict>);

/// Link costs given to the balancer, checked against the ring size `n`.
fn links_of(
    c_succ: Option<&Bound<'_, PyAny>>,
    c_pred: Option<&Bound<'_, PyAny>>,
    n: usize,
) -> Result<Option<Links>, Failure> {
    let one = |name: &str, values: &Bound<'_, PyAny>| {
        let values = costs(name, values)?;
        crate::convert::same_length(name, &values, n, "the communicator")?;
        Ok::<_, Failure>(values)
    };
    match (c_succ, c_pred) {
        (None, None) => Ok(None),
        (None, Some(_)) => Err(Failure::input(
            "c_pred is given without c_succ: give both, c_succ alone, or neither (measured)",
        )),
        (Some(succ), pred) => Ok(Some((
            one("c_succ", succ)?,
            pred.map(|p| one("c_pred", p)).transpose()?,
        ))),
    }
}

#[pymethods]
impl MpiBalancer {
    /// A balancer on the communicator of mpi4py handle `comm` (collective),
    /// its decider modelling the compute times with `model` ("constant",
    /// "functional" or "monotone-cubic") and deciding with `policy`
    /// ("adaptive", "profitability", "never" or "fixed-N"): the names of
    /// `hetbal.Decider`.
    #[new]
    #[pyo3(signature = (comm, c_succ=None, c_pred=None, fault=None, model="constant", policy="adaptive"))]
    fn new(
        comm: &Bound<'_, PyAny>,
        c_succ: Option<&Bound<'_, PyAny>>,
        c_pred: Option<&Bound<'_, PyAny>>,
        fault: Option<&Bound<'_, PyAny>>,
        model: &str,
        policy: &str,
    ) -> PyResult<Self> {
        let py = comm.py();
        let comm = duplicate(comm)?;
        let n = comm.size() as usize;
        let none = |x: Option<&Bound<'_, PyAny>>| x.is_none_or(|x| x.is_none());
        let c_succ = c_succ.filter(|_| !none(c_succ));
        let c_pred = c_pred.filter(|_| !none(c_pred));
        let local = (|| {
            let model = model_of(model)?;
            let name = policy;
            let policy = policy_of(name)?;
            // The library refuses the policies that cannot decide on line
            // (offline-best) when a balancer is made; with measured links that
            // is at the first step, so it is asked now, on links of no cost.
            Balancer::with_policy(policy.clone(), vec![0.0; n], None)
                .map_err(|e| Failure::input(format!("policy {name:?}: {e}")))?;
            // The library checks the costs.
            let given = links_of(c_succ, c_pred, n)?
                .map(|(succ, pred)| {
                    Balancer::with_policy(policy.clone(), succ, pred).map(|b| b.with_model(model))
                })
                .transpose()
                .map_err(|e| Failure::input(e.to_string()))?;
            Ok((given, fault_of(fault)?, model, policy))
        })();
        // Every rank measures, or every rank gives the same costs; every rank
        // chooses the same model and policy.
        let setting = match &local {
            Ok((given, _, model, policy)) => fingerprint(&format!(
                "{:?} {model:?} {policy:?}",
                given.as_ref().map(|b| b.decider.links())
            )),
            Err(_) => 0,
        };
        let (given, fault, model, policy) = agree(py, &comm, local, setting)?;
        Ok(MpiBalancer {
            comm: Some(comm),
            given,
            fault,
            policy,
            model,
            state: None,
        })
    }

    /// One call per iteration on every rank (see `hetbal.mpi.Balancer.step`).
    /// Returns the new rows (1-D uint8) or None when nothing moved, and the
    /// decision as a dict.
    #[pyo3(signature = (rows, seconds, remaining, problem=None))]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        rows: Option<PyReadonlyArray2<'py, u8>>,
        seconds: &Bound<'py, PyAny>,
        remaining: &Bound<'py, PyAny>,
        problem: Option<String>,
    ) -> PyResult<Stepped<'py>> {
        let local = rows_of(&rows, problem)
            .map(|(bytes, held, item_bytes)| (bytes, held as u64, item_bytes));
        let (bytes, count, item_bytes, mut decision, mark) =
            self.decide_step(py, local, seconds, remaining)?;
        let (comm, balancer) = self.running();
        let rank = comm.rank() as usize;
        // The items are copied out of the array only when they move; the
        // library carries the decision out (with measured links, as the plan
        // with start-ups says, which may change its flows and first positions).
        let moved = if decision.redistribute {
            // The items kept from either side are at most this rank's target,
            // whatever flows the library carries out (with measured links it
            // may choose others than the decision's).
            let target = decision.targets[rank] as usize;
            let mut moving = Moving::with_room(bytes, item_bytes, (target, target))
                .unwrap_or_else(|| Moving::Vec(buffer(bytes, item_bytes, &decision.flows, rank)));
            without_gil(py, || {
                shield(Failure::Run, || {
                    let carried = match &mut moving {
                        Moving::Buffer(items) => balancer.carry_out_bytes(
                            &**comm,
                            &mut decision,
                            mark,
                            items,
                            item_bytes,
                        ),
                        Moving::Vec(items) => balancer.carry_out_bytes(
                            &**comm,
                            &mut decision,
                            mark,
                            items,
                            item_bytes,
                        ),
                    };
                    carried.map_err(run_failure)
                })
            })?;
            Some(moving)
        } else {
            None
        };
        let held = moved
            .as_ref()
            .map_or(count, |m| (m.len() / item_bytes) as u64);
        let d = decision_dict(py, &decision, rank, held)?;
        let moved = moved.map(|m| m.into_array(py, item_bytes)).transpose()?;
        Ok((moved, d))
    }

    /// `step` on a `hetbal.mpi.ItemBuffer`, moved in place (the rows this
    /// rank keeps never move): returns the decision.
    #[pyo3(signature = (buffer, seconds, remaining))]
    fn step_buffer<'py>(
        &mut self,
        py: Python<'py>,
        buffer: &Bound<'py, PyAny>,
        seconds: &Bound<'py, PyAny>,
        remaining: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let buffer = buffer.cast::<crate::item_buffer::PyItemBuffer>().ok();
        let local = buffer
            .ok_or_else(|| Failure::input("buffer: a hetbal.mpi.ItemBuffer"))
            .and_then(|b| crate::item_buffer::shape(b))
            .map(|(held, item_bytes)| (&[][..], held, item_bytes));
        let (_, count, item_bytes, mut decision, mark) =
            self.decide_step(py, local, seconds, remaining)?;
        let (comm, balancer) = self.running();
        let rank = comm.rank() as usize;
        let buffer = buffer.expect("agreed above");
        if decision.redistribute {
            crate::item_buffer::with_rows(py, buffer, |rows| {
                shield(Failure::Run, || {
                    balancer
                        .carry_out_bytes(&**comm, &mut decision, mark, rows, item_bytes)
                        .map_err(run_failure)
                })
            })?;
        }
        let held = match decision.redistribute {
            true => crate::item_buffer::shape(buffer)?.0,
            false => count,
        };
        decision_dict(py, &decision, rank, held)
    }

    /// Frees the balancer's duplicate of the communicator (collective only in
    /// that every rank should close before `MPI_Finalize`); it cannot step
    /// after.
    fn close(&mut self) {
        self.comm = None;
    }
}

impl MpiBalancer {
    /// Checks this rank's step (`local`: its rows' bytes, count and item size,
    /// or what is wrong with them; `seconds`, `remaining`) with every rank's,
    /// makes the balancer at the first step, and decides: the rows, their
    /// count and size, the decision, and the mark that forgets it.
    #[allow(clippy::type_complexity)]
    fn decide_step<'a>(
        &mut self,
        py: Python<'_>,
        local: Result<(&'a [u8], u64, usize), Failure>,
        seconds: &Bound<'_, PyAny>,
        remaining: &Bound<'_, PyAny>,
    ) -> Result<(&'a [u8], u64, usize, Decision, Mark), Failure> {
        let comm = self
            .comm
            .as_ref()
            .ok_or_else(|| Failure::input("the balancer is closed"))?;
        let local = local.and_then(|(bytes, held, item_bytes)| {
            let seconds: f64 = seconds.extract().unwrap_or(f64::NAN);
            if !(seconds.is_finite() && seconds > 0.0) {
                return Err(Failure::input(format!(
                    "seconds = {seconds}: a compute time must be finite and > 0"
                )));
            }
            let remaining = count("remaining", remaining)?;
            if let Some((_, bytes_before)) = &self.state {
                if *bytes_before != item_bytes {
                    return Err(Failure::input(format!(
                        "array: items of {item_bytes} bytes, but this balancer moves items of {bytes_before} bytes (those of its first step)"
                    )));
                }
            }
            Ok((bytes, held, item_bytes, seconds, remaining))
        });
        let (bytes, count, item_bytes, seconds, remaining) = agree(py, comm, local, 0)?;
        if self.state.is_none() {
            let balancer = match self.given.take() {
                Some(balancer) => balancer,
                None => without_gil(py, || {
                    shield(Failure::Run, || {
                        Balancer::measuring(&**comm, self.policy.clone(), item_bytes)
                            .map(|b| b.with_model(self.model))
                            .map_err(run_failure)
                    })
                })?,
            };
            self.state = Some((balancer, item_bytes));
        }
        let (balancer, _) = self.state.as_mut().expect("made above");
        balancer.options.fault = self.fault;
        let mark = balancer.decider.mark();
        let decision = without_gil(py, || {
            shield(Failure::Run, || {
                balancer
                    .decide(&**comm, count, seconds, remaining)
                    .map_err(run_failure)
            })
        })?;
        Ok((bytes, count, item_bytes, decision, mark))
    }

    /// The communicator and balancer of a balancer that decided (after
    /// [`MpiBalancer::decide_step`]).
    fn running(&mut self) -> (&Duplicate, &mut Balancer) {
        let comm = self.comm.as_ref().expect("decided: not closed");
        let (balancer, _) = self.state.as_mut().expect("decided: made");
        (comm, balancer)
    }
}

/// A decision as the dict `hetbal.mpi.Decision` is made of (`held`: this
/// rank's rows after it).
fn decision_dict<'py>(
    py: Python<'py>,
    decision: &Decision,
    rank: usize,
    held: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("iteration", decision.iteration)?;
    d.set_item("redistribute", decision.redistribute)?;
    d.set_item("current_step", decision.current_step)?;
    d.set_item("balanced_step", decision.balanced_step)?;
    d.set_item("redistribution_time", decision.redistribution_time)?;
    d.set_item("predicted_gain", decision.predicted_gain)?;
    d.set_item("first", decision.firsts[rank])?;
    d.set_item("count", held)?;
    Ok(d)
}

/// The balancer of an application whose items differ in cost and size
/// (`hetbal.mpi.WeightedBalancer` wraps it): the library's
/// [`WeightedBalancer`], on links measured at its first step.
#[pyclass(module = "hetbal.mpi", name = "_WeightedBalancer")]
struct MpiWeightedBalancer {
    /// The duplicate of the application's communicator (None once closed).
    comm: Option<Duplicate>,
    /// The balancer (None until the first step measures the links).
    balancer: Option<WeightedBalancer>,
    /// The tolerance and the fault to inject (tests).
    tolerance: f64,
    fault: Option<(usize, Fault)>,
}

/// What a weighted step hands back: the new data (1-D uint8), offsets (in
/// elements) and weights, None when nothing moved, and the decision.
type WeightedStepped<'py> = (
    Option<(
        Bound<'py, PyArray1<u8>>,
        Bound<'py, PyArray1<u64>>,
        Bound<'py, PyArray1<f64>>,
    )>,
    Bound<'py, PyDict>,
);

#[pymethods]
impl MpiWeightedBalancer {
    /// A weighted balancer on the communicator of mpi4py handle `comm`
    /// (collective).
    #[new]
    #[pyo3(signature = (comm, tolerance=0.05, fault=None))]
    fn new(
        comm: &Bound<'_, PyAny>,
        tolerance: f64,
        fault: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let py = comm.py();
        let comm = duplicate(comm)?;
        let local = (|| {
            if !(tolerance.is_finite() && tolerance >= 0.0) {
                return Err(Failure::input(format!(
                    "tolerance = {tolerance}: a fraction above the optimum, finite and >= 0"
                )));
            }
            fault_of(fault)
        })();
        let fault = agree(py, &comm, local, fingerprint(&format!("{tolerance}")))?;
        Ok(MpiWeightedBalancer {
            comm: Some(comm),
            balancer: None,
            tolerance,
            fault,
        })
    }

    /// One call per iteration on every rank (see
    /// `hetbal.mpi.WeightedBalancer.step`): `data` the items' bytes,
    /// `element_bytes` an element's size, `offsets` in elements, `weights` one
    /// per item. Returns the new data, offsets and weights (None when nothing
    /// moved) and the decision as a dict.
    #[pyo3(signature = (data, element_bytes, offsets, weights, seconds, remaining, problem=None))]
    #[allow(clippy::too_many_arguments)] // the wrapper's arguments, checked here
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        data: Option<PyReadonlyArray1<'py, u8>>,
        element_bytes: usize,
        offsets: Option<PyReadonlyArray1<'py, u64>>,
        weights: Option<PyReadonlyArray1<'py, f64>>,
        seconds: &Bound<'py, PyAny>,
        remaining: &Bound<'py, PyAny>,
        problem: Option<String>,
    ) -> PyResult<WeightedStepped<'py>> {
        let comm = self
            .comm
            .as_ref()
            .ok_or_else(|| Failure::input("the balancer is closed"))?;
        let local = (|| {
            if let Some(problem) = problem {
                return Err(Failure::Input(problem));
            }
            let data = data
                .as_ref()
                .and_then(|d| d.as_slice().ok())
                .ok_or_else(|| Failure::input("data: a contiguous 1-D array"))?;
            let offsets = offsets
                .as_ref()
                .and_then(|o| o.as_slice().ok())
                .ok_or_else(|| Failure::input("offsets: a contiguous uint64 array"))?;
            let weights = weights
                .as_ref()
                .and_then(|w| w.as_slice().ok())
                .ok_or_else(|| Failure::input("weights: a contiguous float64 array"))?;
            if element_bytes == 0 {
                return Err(Failure::input("data: elements of 0 bytes"));
            }
            let seconds: f64 = seconds.extract().unwrap_or(f64::NAN);
            let remaining = count("remaining", remaining)?;
            Ok((data, offsets, weights, seconds, remaining))
        })();
        let (data, offsets, weights, seconds, remaining) = agree(py, comm, local, 0)?;
        if self.balancer.is_none() {
            let mut balancer = without_gil(py, || {
                shield(Failure::Run, || {
                    WeightedBalancer::measuring(&**comm).map_err(run_failure)
                })
            })?;
            balancer.tolerance = self.tolerance;
            self.balancer = Some(balancer);
        }
        let balancer = self.balancer.as_mut().expect("made above");
        balancer.options.fault = self.fault;
        let elements = (data.len() / element_bytes) as u64;
        let decision = without_gil(py, || {
            shield(Failure::Run, || {
                balancer
                    .decide(
                        &**comm,
                        (offsets, weights, element_bytes, Some(elements)),
                        seconds,
                        remaining,
                    )
                    .map_err(run_failure)
            })
        })?;
        // The items are copied out of the arrays only when they move (as
        // bytes: the offsets in bytes, back in elements after).
        let moved = if decision.redistribute {
            let mut bytes = data.to_vec();
            let mut byte_offsets: Vec<u64> =
                offsets.iter().map(|&o| o * element_bytes as u64).collect();
            let mut moving_weights = weights.to_vec();
            without_gil(py, || {
                shield(Failure::Run, || {
                    balancer
                        .carry_out(
                            &**comm,
                            (&mut bytes, &mut byte_offsets, &mut moving_weights),
                            &decision,
                        )
                        .map_err(run_failure)
                })
            })?;
            let elements: Vec<u64> = byte_offsets
                .iter()
                .map(|o| o / element_bytes as u64)
                .collect();
            Some((
                PyArray1::from_vec(py, bytes),
                PyArray1::from_vec(py, elements),
                PyArray1::from_vec(py, moving_weights),
            ))
        } else {
            None
        };
        let fields = PyDict::new(py);
        fields.set_item("redistribute", decision.redistribute)?;
        fields.set_item("cuts", decision.cuts.clone())?;
        fields.set_item("first", decision.first)?;
        fields.set_item("items", decision.items)?;
        fields.set_item("current_seconds", decision.current_seconds)?;
        fields.set_item("balanced_seconds", decision.balanced_seconds)?;
        fields.set_item("optimum_seconds", decision.optimum_seconds)?;
        fields.set_item("moved_items", decision.moved_items)?;
        fields.set_item("moved_bytes", decision.moved_bytes)?;
        fields.set_item("move_seconds", decision.move_seconds)?;
        fields.set_item("saved_seconds", decision.saved_seconds)?;
        Ok((moved, fields))
    }

    /// Frees the duplicate communicator (collective); the balancer is
    /// unusable after.
    fn close(&mut self) {
        self.comm = None;
    }
}

/// Adds the MPI runtime to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(mpi_redistribute, m)?)?;
    m.add_function(wrap_pyfunction!(mpi_redistribute_items, m)?)?;
    m.add_function(wrap_pyfunction!(
        crate::item_buffer::mpi_redistribute_buffer,
        m
    )?)?;
    m.add_class::<crate::item_buffer::PyItemBuffer>()?;
    m.add_class::<MpiBalancer>()?;
    m.add_class::<MpiWeightedBalancer>()?;
    Ok(())
}
