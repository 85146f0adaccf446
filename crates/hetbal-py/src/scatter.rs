//! Load-balanced scatters: `hetbal.scatter_plan` and the `hetbal.ScatterPlan` it
//! returns (the counts and displacements of MPI_Scatterv, the sending order,
//! finish times, the formats.md document, the Gantt chart).

use hetbal::scatter::{self, Method, OrderPolicy, ScatterInstance, ScatterPlan as Planned};
use numpy::PyArray1;
use pyo3::prelude::*;

use crate::convert::{choice, costs, count, same_length};
use crate::plan::{svg, GANTT_MAX_PROCESSORS};
use crate::{shield, Failure};

/// Plans a scatter of `items` items held by processor `root` to every processor
/// (the root included): `comm[i]` is the root's time to send one item to
/// processor i (0 for the root itself), `comp[i]` processor i's time to compute
/// one item. Each processor computes once it holds its items; the root sends to
/// one processor at a time, in the sending order, itself last. The plan makes
/// the last one finish first (the `hetbal scatter plan` command on linear
/// costs).
///
/// `method`: "exact" (None: optimal counts for the order), "naive-dp" (the
/// paper's Algorithm 1, same optimum, slower), "lp" (the paper's LP and
/// rounding) or "linear" (closed form); `order`: "best" (None: searched),
/// "bandwidth" (Theorem 3) or "given" (processor order, root last).
///
/// Returns a `ScatterPlan`. Raises `InputError` for a bad input (a count not in
/// 0..2^64, a negative or NaN cost, a root's cost not 0, a wrong length, an
/// unknown method or order...).
#[pyfunction]
#[pyo3(signature = (items, root, comm, comp, method=None, order=None))]
fn scatter_plan(
    py: Python<'_>,
    items: &Bound<'_, PyAny>,
    root: &Bound<'_, PyAny>,
    comm: &Bound<'_, PyAny>,
    comp: &Bound<'_, PyAny>,
    method: Option<&Bound<'_, PyAny>>,
    order: Option<&Bound<'_, PyAny>>,
) -> PyResult<ScatterPlan> {
    let items = count("items", items)?;
    let comm = costs("comm", comm)?;
    // The root is an index, not a count: say so when it is not an integer.
    let root = count("root", root).map_err(|_| {
        Failure::input(format!(
            "root = {}: the root is a processor index, an int from 0 to {}",
            root.repr()
                .map_or_else(|_| "?".to_string(), |r| r.to_string()),
            comm.len().saturating_sub(1)
        ))
    })?;
    let comp = costs("comp", comp)?;
    same_length("comp", &comp, comm.len(), "comm")?;
    let root = usize::try_from(root)
        .ok()
        .filter(|&r| r < comm.len())
        .ok_or_else(|| {
            Failure::input(format!(
                "root = {root}: a processor index below {}",
                comm.len()
            ))
        })?;
    let method = match method.filter(|m| !m.is_none()) {
        Some(m) => choice("method", m, &Method::ALL, Method::name)?,
        None => Method::Exact,
    };
    let order = match order.filter(|o| !o.is_none()) {
        Some(o) => choice("order", o, &OrderPolicy::ALL, OrderPolicy::name)?,
        None => OrderPolicy::Best,
    };
    let instance = ScatterInstance::linear(items, root, &comm, &comp)
        .map_err(|e| Failure::input(e.to_string()))?;
    let plan = py.detach(|| {
        shield(Failure::Plan, || {
            scatter::plan(&instance, method, order).map_err(|e| Failure::input(e.to_string()))
        })
    })?;
    Ok(ScatterPlan { instance, plan })
}

/// A scatter plan (from `scatter_plan`): `order` (processors, root last),
/// `counts`, `displacements` and `finish_times` per position of the order, the
/// same per processor (`counts_by_processor`, `displacements_by_processor`: the
/// arguments of MPI_Scatterv on ranks numbered as the processors), `makespan`,
/// `lower_bound`; `to_json()` the plan document of formats.md (`hetbal scatter
/// plan --json`). In Jupyter it shows as its Gantt chart.
#[pyclass(frozen, module = "hetbal", name = "ScatterPlan")]
struct ScatterPlan {
    instance: ScatterInstance,
    plan: Planned,
}

impl ScatterPlan {
    /// `values` (per position of the order) per processor.
    fn by_processor(&self, values: &[u64]) -> Vec<u64> {
        let mut out = vec![0; self.plan.order.len()];
        for (&i, &v) in self.plan.order.iter().zip(values) {
            out[i] = v;
        }
        out
    }
}

#[pymethods]
impl ScatterPlan {
    /// The method that computed the counts.
    #[getter]
    fn method(&self) -> &'static str {
        self.plan.method.name()
    }

    /// The sending order (processor indices, int64), root last.
    #[getter]
    fn order<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        PyArray1::from_vec(py, self.plan.order.iter().map(|&i| i as i64).collect())
    }

    /// Items per position of the order (uint64); they add up to the items.
    #[getter]
    fn counts<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_slice(py, &self.plan.counts)
    }

    /// Where each position's items start in the root's buffer (uint64).
    #[getter]
    fn displacements<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_slice(py, &self.plan.displacements)
    }

    /// Items per processor (uint64): `counts` in processor order.
    #[getter]
    fn counts_by_processor<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_vec(py, self.by_processor(&self.plan.counts))
    }

    /// Where each processor's items start in the root's buffer (uint64):
    /// `displacements` in processor order.
    #[getter]
    fn displacements_by_processor<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_vec(py, self.by_processor(&self.plan.displacements))
    }

    /// When each position of the order finishes computing (float64).
    #[getter]
    fn finish_times<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, &self.plan.timeline.finish_times)
    }

    /// The last finish time.
    #[getter]
    fn makespan(&self) -> f64 {
        self.plan.makespan
    }

    /// A lower bound on the makespan of every integer distribution in this order.
    #[getter]
    fn lower_bound(&self) -> f64 {
        self.plan.lower_bound
    }

    /// True when the counts are proven optimal for the order ("exact",
    /// "naive-dp").
    #[getter]
    fn optimal_for_order(&self) -> bool {
        self.plan.optimal_for_order
    }

    /// The plan document of formats.md, as `hetbal scatter plan --json` prints it.
    fn to_json(&self) -> PyResult<String> {
        hetbal::document::to_json(&self.plan.document(&self.instance))
            .map_err(|e| Failure::Plan(format!("cannot encode the plan: {e}")).into())
    }

    /// The Gantt chart (waiting, receiving, computing per processor) as SVG;
    /// None beyond 512 processors.
    fn _repr_svg_(&self, py: Python<'_>) -> Option<String> {
        if self.instance.len() > GANTT_MAX_PROCESSORS {
            return None;
        }
        let title = format!(
            "scatter of {} items from {}: makespan {} s ({}, {} order)",
            self.instance.items(),
            self.instance.name(self.instance.root()),
            hetbal_draw::short_number(self.plan.makespan),
            self.plan.method,
            self.plan.order_policy
        );
        svg(py, || {
            let p = &self.plan;
            let timeline = (&p.order[..], &p.counts[..], &p.timeline);
            let root = self.instance.name(self.instance.root());
            hetbal_draw::scatter_chart(title, &self.instance, timeline, p.start, root)
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "<hetbal.ScatterPlan: {} items from processor {} to {} processors, makespan {}, lower bound {} ({}, {} order)>",
            self.instance.items(),
            self.instance.root(),
            self.instance.len(),
            self.plan.makespan,
            self.plan.lower_bound,
            self.plan.method,
            self.plan.order_policy
        )
    }
}

/// Adds the scatter planner and `ScatterPlan` to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(scatter_plan, m)?)?;
    m.add_class::<ScatterPlan>()?;
    Ok(())
}
