//! GEN_BLOCK redistributions: `hetbal.genblock_plan` and the
//! `hetbal.GenBlockPlan` it returns (the steps as a structured array, the cost
//! and bounds, the formats.md schedule document, the Gantt chart).

use hetbal::genblock::{self, GenBlockInstance, GenBlockPlan as Planned, Method};
use pyo3::prelude::*;

use crate::convert::{choice, counts};
use crate::plan::{records, svg, GANTT_MAX_PROCESSORS, GANTT_MAX_TRANSFERS};
use crate::{shield, Failure};

/// A time of the cost model, `name` naming it.
fn seconds(name: &str, value: &Bound<'_, PyAny>) -> Result<f64, Failure> {
    value.extract::<f64>().map_err(|_| {
        let given = value
            .repr()
            .map_or_else(|_| "?".to_string(), |r| r.to_string());
        Failure::input(format!("{name} = {given}: a number of seconds"))
    })
}

/// Plans a GEN_BLOCK redistribution of an array split in blocks: `source[i]`
/// elements on source processor i before, `target[j]` on target processor j
/// after (the same total), in communication steps where no processor sends or
/// receives twice; a step costs `startup + unit * (its largest message)`
/// (the `hetbal genblock plan` command).
///
/// `method`: "best" (None: the least cost found, any number of steps) or
/// "paper" (the paper's Selection, Scheduling and Partition: exactly `degree`
/// steps).
///
/// Returns a `GenBlockPlan`. Raises `InputError` for counts that are not
/// integers in 0..2^64, totals that differ, a startup or unit that is not
/// finite and >= 0, an unknown method.
#[pyfunction]
#[pyo3(signature = (source, target, startup, unit, method=None))]
fn genblock_plan(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
    startup: &Bound<'_, PyAny>,
    unit: &Bound<'_, PyAny>,
    method: Option<&Bound<'_, PyAny>>,
) -> PyResult<GenBlockPlan> {
    let source = counts("source", source)?;
    let target = counts("target", target)?;
    let (startup, unit) = (seconds("startup", startup)?, seconds("unit", unit)?);
    let method = match method.filter(|m| !m.is_none()) {
        Some(m) => choice("method", m, &Method::ALL, Method::name)?,
        None => Method::Best,
    };
    let instance = GenBlockInstance::new(&source, &target, startup, unit)
        .map_err(|e| Failure::input(e.to_string()))?;
    let plan = py.detach(|| shield(Failure::Plan, || Ok(genblock::plan(&instance, method))))?;
    Ok(GenBlockPlan { instance, plan })
}

/// A GEN_BLOCK plan (from `genblock_plan`): `steps` (a numpy structured array
/// with fields `step`, `from`, `to` (int64), `size` (uint64), one record per
/// message), `cost`, `lower_bound`, `degree`, the paper's costs
/// (`plain_cost`, `paper_cost`, `paper_bound`); `to_json()` the schedule
/// document of formats.md (`hetbal genblock plan --json`). In Jupyter it shows
/// as its Gantt chart.
#[pyclass(frozen, module = "hetbal", name = "GenBlockPlan")]
struct GenBlockPlan {
    instance: GenBlockInstance,
    plan: Planned,
}

#[pymethods]
impl GenBlockPlan {
    /// The method that made the schedule.
    #[getter]
    fn method(&self) -> &'static str {
        self.plan.method.name()
    }

    /// The messages, step by step: fields `step` (from 0), `from` (source
    /// processor), `to` (target processor), `size` (elements).
    #[getter]
    fn steps<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut bytes = Vec::new();
        for (k, step) in self.plan.schedule.steps.iter().enumerate() {
            for m in step {
                bytes.extend_from_slice(&(k as i64).to_ne_bytes());
                bytes.extend_from_slice(&(m.from as i64).to_ne_bytes());
                bytes.extend_from_slice(&(m.to as i64).to_ne_bytes());
                bytes.extend_from_slice(&m.size.to_ne_bytes());
            }
        }
        let fields = [
            ("step", "=i8"),
            ("from", "=i8"),
            ("to", "=i8"),
            ("size", "=u8"),
        ];
        records(py, &fields, bytes)
    }

    /// The number of steps.
    #[getter]
    fn step_count(&self) -> usize {
        self.plan.schedule.steps.len()
    }

    /// The schedule's cost: `startup * steps + unit * (sum of the steps' largest
    /// messages)`.
    #[getter]
    fn cost(&self) -> f64 {
        self.plan.cost
    }

    /// A lower bound on the cost of every schedule.
    #[getter]
    fn lower_bound(&self) -> f64 {
        self.plan.lower_bound
    }

    /// The maximum degree of the redistribution graph (the paper's Delta).
    #[getter]
    fn degree(&self) -> usize {
        self.plan.degree
    }

    /// The cost of the plain colouring (messages unsplit, Delta steps): the
    /// paper's Tb.
    #[getter]
    fn plain_cost(&self) -> f64 {
        self.plan.plain_cost
    }

    /// The cost of the paper's method (its Ta).
    #[getter]
    fn paper_cost(&self) -> f64 {
        self.plan.paper_cost
    }

    /// The paper's bound B with startups: `Delta * startup + unit * B`.
    #[getter]
    fn paper_bound(&self) -> f64 {
        self.plan.paper_bound
    }

    /// The schedule document of formats.md, as `hetbal genblock plan --json`
    /// prints it.
    fn to_json(&self) -> PyResult<String> {
        hetbal::document::to_json(&self.plan.document())
            .map_err(|e| Failure::Plan(format!("cannot encode the plan: {e}")).into())
    }

    /// The Gantt chart (a lane per source and per target processor) as SVG;
    /// None for an empty schedule or one too large to read.
    fn _repr_svg_(&self, py: Python<'_>) -> Option<String> {
        let lanes = self.instance.sources() + self.instance.targets();
        let messages: usize = self.plan.schedule.steps.iter().map(Vec::len).sum();
        if lanes > GANTT_MAX_PROCESSORS || messages > GANTT_MAX_TRANSFERS || messages == 0 {
            return None;
        }
        let title = format!(
            "GEN_BLOCK {} -> {} processors, {} elements: cost {} s in {} steps ({})",
            self.instance.sources(),
            self.instance.targets(),
            self.instance.total_elements(),
            hetbal_draw::short_number(self.plan.cost),
            self.plan.schedule.steps.len(),
            self.plan.method.name()
        );
        svg(py, || {
            hetbal_draw::genblock_chart(title, &self.instance, &self.plan.schedule)
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "<hetbal.GenBlockPlan: {} -> {} processors, {} elements, cost {} in {} steps, lower bound {} ({})>",
            self.instance.sources(),
            self.instance.targets(),
            self.instance.total_elements(),
            self.plan.cost,
            self.plan.schedule.steps.len(),
            self.plan.lower_bound,
            self.plan.method.name()
        )
    }
}

/// Adds the GEN_BLOCK planner and `GenBlockPlan` to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(genblock_plan, m)?)?;
    m.add_class::<GenBlockPlan>()?;
    Ok(())
}
