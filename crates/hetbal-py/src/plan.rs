//! Planning: `hetbal.balance`, `hetbal.ring_plan` and the `hetbal.Plan` it
//! returns (numbers, structured arrays of transfers and flows, the formats.md
//! JSON document, the Gantt chart as SVG).

use hetbal::balance::balanced_targets;
use hetbal::functional::{self, Model, TimeFunction};
use hetbal::iterative::online::{first_positions, link_flows};
use hetbal::ring::{self, PlanError, RingAlgorithm, RingInstance, RingInstanceSpec, RingPlan};
use numpy::PyArray1;
use pyo3::prelude::*;

use crate::convert::{choice, costs, count, counts, same_length};
use crate::{shield, Failure};

/// Charts beyond these sizes are no longer readable (the `hetbal` command's
/// limits for `--gantt`): a plan that large shows as its repr instead.
pub(crate) const GANTT_MAX_PROCESSORS: usize = 512;
pub(crate) const GANTT_MAX_TRANSFERS: usize = 200_000;

/// Splits `total` items over processors so that the slowest one finishes
/// first, the counts adding up to `total`, `max` of the processors' times the
/// least possible (the exact integer optimum).
///
/// With `seconds_per_item` (one time per item each): every processor gets at
/// least one item; O(n log n). With `points` instead (speeds that depend on
/// the load): `points[i]` holds processor i's measured `(load, seconds)`
/// pairs (a list of pairs or an (m, 2) array), read as a non-decreasing time
/// function of the load (`model`: "piecewise-linear" or "monotone-cubic"; see
/// hetbal::functional); a processor may then get no item.
///
/// Returns `(targets, iteration_time)`: a numpy uint64 array and that maximum.
/// Raises `InputError` for a count that is not an integer in 0..2^64, a time
/// that is not finite and > 0 (>= 0 in points), fewer items than processors
/// (with `seconds_per_item`), both or neither of `seconds_per_item` and
/// `points`, a point that is not a pair with a whole load, or another model.
#[pyfunction]
#[pyo3(signature = (total, seconds_per_item=None, *, points=None, model="piecewise-linear"))]
fn balance<'py>(
    py: Python<'py>,
    total: &Bound<'py, PyAny>,
    seconds_per_item: Option<&Bound<'py, PyAny>>,
    points: Option<&Bound<'py, PyAny>>,
    model: &str,
) -> PyResult<(Bound<'py, PyArray1<u64>>, f64)> {
    let total = count("total", total)?;
    let none = |x: Option<&Bound<'py, PyAny>>| x.is_none_or(|x| x.is_none());
    let (targets, time) = match (none(seconds_per_item), none(points)) {
        (false, true) => {
            let times = costs("seconds_per_item", seconds_per_item.expect("given"))?;
            let balanced = py.detach(|| {
                shield(Failure::Plan, || {
                    balanced_targets(total, &times).map_err(|e| Failure::input(e.to_string()))
                })
            })?;
            (balanced.targets, balanced.max_time)
        }
        (true, false) => {
            let functions = time_functions(points.expect("given"), model)?;
            let balanced = py.detach(|| {
                shield(Failure::Plan, || {
                    functional::balance(total, &functions).map_err(|e| Failure::input(e.to_string()))
                })
            })?;
            (balanced.loads, balanced.time)
        }
        _ => {
            return Err(Failure::input(
                "give seconds_per_item (one time per item each) or points (measured times), not both or neither",
            )
            .into())
        }
    };
    // The library's promise, checked: a split that loses or invents items
    // must never reach the caller.
    let sum: u128 = targets.iter().map(|&t| u128::from(t)).sum();
    if sum != u128::from(total) {
        return Err(Failure::Plan(format!(
            "internal error (a bug in hetbal, please report it): the balanced targets add up to {sum}, not {total}"
        ))
        .into());
    }
    Ok((PyArray1::from_vec(py, targets), time))
}

/// The time functions of `points` (per processor, `(load, seconds)` pairs)
/// with `model`.
fn time_functions(points: &Bound<'_, PyAny>, model: &str) -> Result<Vec<TimeFunction>, Failure> {
    let model = match model {
        "piecewise-linear" => Model::PiecewiseLinear,
        "monotone-cubic" => Model::MonotoneCubic,
        other => {
            return Err(Failure::input(format!(
                "model {other:?}: choose one of piecewise-linear, monotone-cubic"
            )))
        }
    };
    let all: Vec<Vec<Vec<f64>>> = points.extract().map_err(|_| {
        Failure::input("points: one sequence of (load, seconds) pairs per processor")
    })?;
    all.iter()
        .enumerate()
        .map(|(j, pairs)| {
            let pairs = pairs
                .iter()
                .enumerate()
                .map(|(k, pair)| match pair[..] {
                    [load, seconds] if load >= 0.0 && load.fract() == 0.0 && load < 2f64.powi(64) => {
                        Ok((load as u64, seconds))
                    }
                    _ => Err(Failure::input(format!(
                        "points[{j}][{k}]: a pair (load, seconds) with a whole load >= 0, not {pair:?}"
                    ))),
                })
                .collect::<Result<Vec<_>, _>>()?;
            TimeFunction::new(j, &pairs, model).map_err(|e| Failure::input(format!("points: {e}")))
        })
        .collect()
}

/// The instance of `ring_plan`'s arguments.
fn instance(
    loads: &Bound<'_, PyAny>,
    targets: &Bound<'_, PyAny>,
    c_succ: &Bound<'_, PyAny>,
    c_pred: Option<&Bound<'_, PyAny>>,
) -> Result<RingInstance, Failure> {
    let loads = counts("loads", loads)?;
    let n = loads.len();
    let targets = counts("targets", targets)?;
    same_length("targets", &targets, n, "loads")?;
    let c_succ = costs("c_succ", c_succ)?;
    same_length("c_succ", &c_succ, n, "loads")?;
    let ring = match c_pred {
        None => RingInstance::unidirectional(&loads, &targets, &c_succ),
        Some(c_pred) => {
            let c_pred = costs("c_pred", c_pred)?;
            same_length("c_pred", &c_pred, n, "loads")?;
            RingInstance::bidirectional(&loads, &targets, &c_succ, &c_pred)
        }
    };
    ring.map_err(|e| Failure::input(e.to_string()))
}

/// Plans the fastest redistribution of a ring of processors from `loads` to
/// `targets` (item counts, the same total; a processor may hold no item before
/// or after, a rank being filled or drained): `c_succ[i]` is the
/// time to send one item from processor i to i+1 (mod n), `c_pred[i]` from i to
/// i-1; without `c_pred` the ring is unidirectional (items move towards
/// successors only). `algorithm` forces a planner by name (as `hetbal ring plan
/// --algorithm`); None lets hetbal choose: optimal where theory allows, with its
/// lower bound otherwise. Every plan is checked by the validator.
///
/// The algorithms (the guide's "Algorithms" page says when each is optimal
/// and what it costs): unidirectional rings: `unidirectional-homogeneous`,
/// `unidirectional-heterogeneous` (the paper's Algorithms 1 and 2),
/// `unidirectional-batched` (Algorithm 2's makespan in the fewest transfers,
/// the default) and `unidirectional-convoys`; bidirectional rings:
/// `bidirectional-blocks` (one block per link, the default on homogeneous
/// rings), `bidirectional-lemma9`, `bidirectional-list`,
/// `bidirectional-segments`, `exact-search` (optimal, small rings only),
/// `system8` (the paper's System 8, a baseline) and `paper-alg3` (the paper's
/// Algorithm 3 as printed, which can be invalid); links with start-ups:
/// `startup-batches`.
///
/// `l_succ[i]` and `l_pred[i]` (keywords, seconds, finite and >= 0; None means
/// 0 everywhere) give the links a start-up per message: a transfer over such a
/// link is one message of `l + m * c`, all its items sent together, and hetbal
/// plans the messages (`startup-batches`, as the command does for an instance
/// with `l_succ`/`l_pred`).
///
/// `path=True` (keyword) makes the ring a path: the link between the last
/// processor and the first is missing (both ways), so no transfer crosses it
/// (a decomposition that is not periodic; `"path": true` in the document).
/// The flows are then fixed, and a unidirectional path whose first processors
/// hold fewer items than they must end with is refused (items would have to
/// move backwards).
///
/// Returns a `Plan`. Raises `InputError` for a bad input (the message of the
/// `hetbal` command: processor, field, value and rule), a path that needs a
/// backward move, or an algorithm that does not apply (the papers' planners
/// refuse empty processors and paths); `PlanError` when the schedule is
/// invalid (the paper's Algorithm 3 can make one).
#[pyfunction]
#[pyo3(signature = (loads, targets, c_succ, c_pred=None, algorithm=None, *, l_succ=None, l_pred=None, path=false))]
#[allow(clippy::too_many_arguments)]
fn ring_plan(
    py: Python<'_>,
    loads: &Bound<'_, PyAny>,
    targets: &Bound<'_, PyAny>,
    c_succ: &Bound<'_, PyAny>,
    c_pred: Option<&Bound<'_, PyAny>>,
    algorithm: Option<&Bound<'_, PyAny>>,
    l_succ: Option<&Bound<'_, PyAny>>,
    l_pred: Option<&Bound<'_, PyAny>>,
    path: bool,
) -> PyResult<Plan> {
    let c_pred = c_pred.filter(|c| !c.is_none());
    let ring = instance(loads, targets, c_succ, c_pred)?;
    let mut ring = with_startups(ring, l_succ, l_pred)?;
    if path {
        ring = ring.as_path().map_err(|e| Failure::input(e.to_string()))?;
    }
    plan_ring(py, ring, algorithm)
}

/// The ring with the start-ups given (`None`: 0 on every link), validated by
/// the library (finite, >= 0, each named by processor in the error).
fn with_startups(
    ring: RingInstance,
    l_succ: Option<&Bound<'_, PyAny>>,
    l_pred: Option<&Bound<'_, PyAny>>,
) -> Result<RingInstance, Failure> {
    let (l_succ, l_pred) = (
        l_succ.filter(|l| !l.is_none()),
        l_pred.filter(|l| !l.is_none()),
    );
    if l_succ.is_none() && l_pred.is_none() {
        return Ok(ring);
    }
    let n = ring.len();
    let read = |name: &str, given: Option<&Bound<'_, PyAny>>| match given {
        None => Ok(vec![0.0; n]),
        Some(values) => {
            let values = costs(name, values)?;
            same_length(name, &values, n, "loads")?;
            Ok::<_, Failure>(values)
        }
    };
    let (l_succ, l_pred) = (read("l_succ", l_succ)?, read("l_pred", l_pred)?);
    ring.with_startups(&l_succ, &l_pred)
        .map_err(|e| Failure::input(e.to_string()))
}

/// Plans the ring instance `instance`, a document of formats.md ("Ring
/// redistribution instance", what `hetbal ring plan` reads): its JSON text, or
/// the same as a dict. Processor names come from the document (the Gantt chart
/// shows them). `algorithm` and the errors as `ring_plan`; a document that is
/// not one (bad JSON, an unknown field, a count given as a float) raises
/// `InputError` too.
#[pyfunction]
#[pyo3(signature = (instance, algorithm=None))]
fn ring_plan_from_json(
    py: Python<'_>,
    instance: &Bound<'_, PyAny>,
    algorithm: Option<&Bound<'_, PyAny>>,
) -> PyResult<Plan> {
    let text: String = match instance.extract() {
        Ok(text) => text,
        Err(_) => py
            .import("json")?
            .call_method1("dumps", (instance,))
            .and_then(|t| t.extract())
            .map_err(|e| Failure::input(format!("instance: a JSON document (str or dict): {e}")))?,
    };
    let spec: RingInstanceSpec =
        serde_json::from_str(&text).map_err(|e| Failure::input(format!("instance: {e}")))?;
    let ring = RingInstance::from_spec(spec).map_err(|e| Failure::input(e.to_string()))?;
    plan_ring(py, ring, algorithm)
}

/// Plans `ring` with the algorithm named `algorithm` (None: hetbal's choice),
/// without the GIL.
fn plan_ring(
    py: Python<'_>,
    ring: RingInstance,
    algorithm: Option<&Bound<'_, PyAny>>,
) -> PyResult<Plan> {
    let algorithm = algorithm
        .filter(|a| !a.is_none())
        .map(|a| choice("algorithm", a, &RingAlgorithm::ALL, RingAlgorithm::name))
        .transpose()?;
    let plan = py.detach(|| {
        shield(Failure::Plan, || {
            ring::plan(&ring, algorithm).map_err(|e| match e {
                PlanError::InvalidSchedule { .. } => Failure::Plan(e.to_string()),
                other => Failure::input(other.to_string()),
            })
        })
    })?;
    Ok(Plan { ring, plan })
}

/// A ring redistribution plan (from `ring_plan`).
///
/// `makespan`, `lower_bound`, `optimal` (proven: the valid schedule meets the
/// bound), `algorithm`; `transfers` and `flows` as numpy structured arrays;
/// `to_json()` the plan document of formats.md (`hetbal ring plan --json`).
/// In Jupyter it shows as its Gantt chart.
#[pyclass(frozen, module = "hetbal", name = "Plan")]
pub(crate) struct Plan {
    /// The instance planned.
    pub(crate) ring: RingInstance,
    /// The plan.
    pub(crate) plan: RingPlan,
}

/// A structured numpy array of `count` records of `fields` (name, numpy type
/// code), from their bytes in native byte order: the bytes become the array's
/// memory, without a copy.
pub(crate) fn records<'py>(
    py: Python<'py>,
    fields: &[(&str, &str)],
    bytes: Vec<u8>,
) -> PyResult<Bound<'py, PyAny>> {
    let dtype = py
        .import("numpy")?
        .getattr("dtype")?
        .call1((fields.to_vec(),))?;
    PyArray1::from_vec(py, bytes).call_method1("view", (dtype,))
}

/// The SVG document of the chart `chart` draws (made without the GIL); None
/// when it cannot be drawn.
pub(crate) fn svg(
    py: Python<'_>,
    chart: impl FnOnce() -> hetbal_draw::Chart + Send,
) -> Option<String> {
    py.detach(|| {
        shield(Failure::Plan, || {
            hetbal_draw::render_svg(&chart()).map_err(|e| Failure::Plan(e.to_string()))
        })
    })
    .ok()
}

#[pymethods]
impl Plan {
    /// Time at which the schedule's last transfer ends.
    #[getter]
    fn makespan(&self) -> f64 {
        self.plan.makespan
    }

    /// The strongest proven lower bound on the makespan of any schedule.
    #[getter]
    fn lower_bound(&self) -> f64 {
        self.plan.lower_bound
    }

    /// True only when proven: the schedule is valid and meets the lower bound.
    #[getter]
    fn optimal(&self) -> bool {
        self.plan.optimal
    }

    /// Name of the algorithm that made the plan.
    #[getter]
    fn algorithm(&self) -> &str {
        &self.plan.algorithm
    }

    /// The ring kind: "unidirectional" or "bidirectional".
    #[getter]
    fn ring(&self) -> String {
        self.plan.ring.to_string()
    }

    /// True when no processor sends more items than it initially holds.
    #[getter]
    fn light(&self) -> bool {
        self.plan.light
    }

    /// The loads planned from (numpy uint64).
    #[getter]
    fn loads<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_slice(py, self.ring.loads())
    }

    /// The targets planned to (numpy uint64).
    #[getter]
    fn targets<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_slice(py, self.ring.targets())
    }

    /// Where every processor's items start after the plan (numpy uint64): the
    /// global position of its first item, positions counted from processor
    /// 0's first item before and wrapping at the total; processor i then
    /// holds items `firsts[i] .. firsts[i] + targets[i]` (modulo the total).
    #[getter]
    fn firsts<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        let flows = link_flows(self.ring.len(), &self.plan.flows);
        PyArray1::from_vec(py, first_positions(self.ring.loads(), &flows))
    }

    /// The schedule: a numpy structured array with fields `from`, `to` (int64:
    /// processors, neighbours), `items` (uint64), `start`, `end`, `period`
    /// (float64), one record per batch of items sent back to back (`period` 0)
    /// or paced train (its k-th item, from 0, starts at `start + k * period`),
    /// sorted by start then sender.
    #[getter]
    fn transfers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut bytes = Vec::with_capacity(48 * self.plan.transfers.len());
        for t in &self.plan.transfers {
            bytes.extend_from_slice(&(t.from as i64).to_ne_bytes());
            bytes.extend_from_slice(&(t.to as i64).to_ne_bytes());
            bytes.extend_from_slice(&t.items.to_ne_bytes());
            bytes.extend_from_slice(&t.start.to_ne_bytes());
            bytes.extend_from_slice(&t.end.to_ne_bytes());
            bytes.extend_from_slice(&t.period.unwrap_or(0.0).to_ne_bytes());
        }
        let fields = [
            ("from", "=i8"),
            ("to", "=i8"),
            ("items", "=u8"),
            ("start", "=f8"),
            ("end", "=f8"),
            ("period", "=f8"),
        ];
        records(py, &fields, bytes)
    }

    /// The net items per ring link and direction (non-zero only): a numpy
    /// structured array with fields `from`, `to` (int64), `items` (uint64).
    #[getter]
    fn flows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut bytes = Vec::with_capacity(24 * self.plan.flows.len());
        for f in &self.plan.flows {
            bytes.extend_from_slice(&(f.from as i64).to_ne_bytes());
            bytes.extend_from_slice(&(f.to as i64).to_ne_bytes());
            bytes.extend_from_slice(&f.items.to_ne_bytes());
        }
        records(
            py,
            &[("from", "=i8"), ("to", "=i8"), ("items", "=u8")],
            bytes,
        )
    }

    /// The instance planned, as a document of formats.md ("Ring redistribution
    /// instance", names filled in): what `hetbal ring plan` and
    /// `ring_plan_from_json` read.
    fn instance_json(&self) -> PyResult<String> {
        serde_json::to_string_pretty(&self.ring.to_spec())
            .map_err(|e| Failure::Plan(format!("cannot encode the instance: {e}")).into())
    }

    /// The plan document of formats.md, as `hetbal ring plan --json` prints it.
    fn to_json(&self) -> PyResult<String> {
        hetbal::document::to_json(&self.plan)
            .map_err(|e| Failure::Plan(format!("cannot encode the plan: {e}")).into())
    }

    /// The Gantt chart as an SVG document (Jupyter shows it); None for a plan
    /// with no transfer or too large to read (over 512 processors or 200,000
    /// transfers).
    fn _repr_svg_(&self, py: Python<'_>) -> Option<String> {
        if self.ring.len() > GANTT_MAX_PROCESSORS
            || self.plan.transfers.len() > GANTT_MAX_TRANSFERS
            || self.plan.transfers.is_empty()
        {
            return None;
        }
        let title = format!(
            "{} ring, {} processors: makespan {} ({})",
            self.plan.ring,
            self.ring.len(),
            hetbal_draw::short_number(self.plan.makespan),
            self.plan.algorithm
        );
        svg(py, || {
            hetbal_draw::ring_chart(title, &self.ring, &self.plan.schedule())
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "<hetbal.Plan: {} ring of {} processors, makespan {}, lower bound {}{}, {} transfers ({})>",
            self.plan.ring,
            self.ring.len(),
            self.plan.makespan,
            self.plan.lower_bound,
            if self.plan.optimal { ", optimal" } else { "" },
            self.plan.transfers.len(),
            self.plan.algorithm
        )
    }
}

/// Adds the planning functions and `Plan` to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(balance, m)?)?;
    m.add_function(wrap_pyfunction!(ring_plan, m)?)?;
    m.add_function(wrap_pyfunction!(ring_plan_from_json, m)?)?;
    m.add_class::<Plan>()?;
    Ok(())
}
