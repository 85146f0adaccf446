//! The run-time decider without MPI: `hetbal.Decider` (the library's
//! [`hetbal::iterative::online::Decider`]) and the `hetbal.Decision` its
//! `observe` returns, for codes that gather the numbers and move the data
//! themselves. Every decision is the library's.

use hetbal::functional::Model;
use hetbal::iterative::online::{DecideError, Decider as Library, DeciderModel, Decision as Made};
use hetbal::iterative::Policy;
use numpy::PyArray1;
use pyo3::prelude::*;

use crate::convert::{costs, count, counts, same_length};
use crate::{shield, Failure};

/// The model names `hetbal.Decider` accepts, with the library's model of each.
pub(crate) const MODELS: [(&str, DeciderModel); 3] = [
    (
        "functional",
        DeciderModel::Functional(Model::PiecewiseLinear),
    ),
    (
        "monotone-cubic",
        DeciderModel::Functional(Model::MonotoneCubic),
    ),
    ("constant", DeciderModel::Constant),
];

/// The library's model named `name` ([`MODELS`]), or the message naming the
/// choices.
pub(crate) fn model_of(name: &str) -> Result<DeciderModel, Failure> {
    MODELS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, m)| m)
        .ok_or_else(|| {
            let names: Vec<&str> = MODELS.iter().map(|(n, _)| *n).collect();
            Failure::input(format!(
                "unknown model {name:?}: choose one of {}",
                names.join(", ")
            ))
        })
}

/// The name of a model in [`MODELS`].
fn model_name(model: DeciderModel) -> &'static str {
    MODELS
        .iter()
        .find(|(_, m)| *m == model)
        .map_or("constant", |(n, _)| n)
}

/// The library's policy named `name` ([`Policy::from_name`]: `profitability`,
/// `adaptive`, `never` or `none`, `fixed-N`, `offline-best`, which the
/// decider refuses), or the message naming the choices.
pub(crate) fn policy_of(name: &str) -> Result<Policy, Failure> {
    Policy::from_name(name).ok_or_else(|| {
        Failure::input(format!(
            "unknown policy {name:?}: choose one of profitability, adaptive, never, fixed-N \
             (N redistributions evenly spaced over the run)"
        ))
    })
}

/// A failure of the library's decider: a plan that fails is a bug
/// ([`Failure::Plan`]), anything else the caller's numbers.
fn decide_failure(e: DecideError) -> Failure {
    match e {
        DecideError::Plan(_) => Failure::Plan(e.to_string()),
        _ => Failure::input(e.to_string()),
    }
}

/// Decides after every iteration of a running code whether moving its data
/// pays, and where to: hetbal's online decider, without MPI. `c_succ[i]` /
/// `c_pred[i]`: seconds per item from processor i to i+1 / i-1 (`c_pred`
/// None: clockwise moves only); `policy`: "profitability", "adaptive",
/// "never" or "fixed-N"; `model`: "functional" (a piecewise-linear time
/// function of the load per processor, learned on line), "monotone-cubic"
/// or "constant" (one time per item). `observe(loads, seconds, remaining)`
/// returns a `Decision`; move the items to its `targets` when it says
/// `redistribute`. Bad input raises `InputError` with the library's message.
///
/// >>> import hetbal
/// >>> dec = hetbal.Decider([1e-3, 1e-3], [1e-3, 1e-3], model="constant")
/// >>> d = dec.observe([50, 50], [0.5, 1.0], 100)
/// >>> d.redistribute, d.targets.tolist()
/// (True, [67, 33])
#[pyclass(module = "hetbal", name = "Decider")]
struct Decider {
    decider: Library,
}

#[pymethods]
impl Decider {
    #[new]
    #[pyo3(signature = (c_succ, c_pred=None, *, policy="profitability", model="functional"))]
    fn new(
        c_succ: &Bound<'_, PyAny>,
        c_pred: Option<&Bound<'_, PyAny>>,
        policy: &str,
        model: &str,
    ) -> PyResult<Self> {
        let c_succ = costs("c_succ", c_succ)?;
        let c_pred = match c_pred.filter(|c| !c.is_none()) {
            None => None,
            Some(c) => {
                let c = costs("c_pred", c)?;
                same_length("c_pred", &c, c_succ.len(), "c_succ")?;
                Some(c)
            }
        };
        let policy = policy_of(policy)?;
        let model = model_of(model)?;
        let decider = Library::new(policy, c_succ, c_pred)
            .map_err(decide_failure)?
            .with_model(model);
        Ok(Decider { decider })
    }

    /// Decides after one more iteration: `loads[i]` items and `seconds[i]`
    /// compute seconds of processor i in it, `remaining` iterations still to
    /// run.
    fn observe(
        &mut self,
        py: Python<'_>,
        loads: &Bound<'_, PyAny>,
        seconds: &Bound<'_, PyAny>,
        remaining: &Bound<'_, PyAny>,
    ) -> PyResult<Decision> {
        let loads = counts("loads", loads)?;
        let seconds = costs("seconds", seconds)?;
        same_length("seconds", &seconds, loads.len(), "loads")?;
        let remaining = count("remaining", remaining)?;
        let decider = &mut self.decider;
        let made = py.detach(|| {
            shield(Failure::Plan, || {
                decider
                    .observe(&loads, &seconds, remaining)
                    .map_err(decide_failure)
            })
        })?;
        // The library's promise, checked: targets that lose or invent items
        // must never reach the caller.
        let (before, after) = (
            made.loads.iter().map(|&x| u128::from(x)).sum::<u128>(),
            made.targets.iter().map(|&x| u128::from(x)).sum::<u128>(),
        );
        if before != after {
            return Err(Failure::Plan(format!(
                "internal error (a bug in hetbal, please report it): the targets add up to {after}, not {before}"
            ))
            .into());
        }
        Ok(Decision { made })
    }

    /// The policy's name (the library's `Policy::name`).
    #[getter]
    fn policy(&self) -> String {
        self.decider.policy().name()
    }

    /// The model's name, as given to the constructor.
    #[getter]
    fn model(&self) -> &'static str {
        model_name(self.decider.model())
    }

    /// Iterations observed so far.
    #[getter]
    fn iterations(&self) -> u32 {
        self.decider.iterations()
    }

    fn __repr__(&self) -> String {
        format!(
            "<hetbal.Decider: {} processors, policy {}, model {}, {} iterations observed>",
            self.decider.links().0.len(),
            self.decider.policy().name(),
            model_name(self.decider.model()),
            self.decider.iterations()
        )
    }
}

/// What a `hetbal.Decider` decided after one iteration (the library's
/// `Decision`, field for field).
#[pyclass(frozen, module = "hetbal", name = "Decision")]
struct Decision {
    made: Made,
}

#[pymethods]
impl Decision {
    #[getter]
    fn iteration(&self) -> u32 {
        self.made.iteration
    }

    #[getter]
    fn redistribute(&self) -> bool {
        self.made.redistribute
    }

    #[getter]
    fn current_step(&self) -> f64 {
        self.made.current_step
    }

    #[getter]
    fn balanced_step(&self) -> f64 {
        self.made.balanced_step
    }

    #[getter]
    fn redistribution_time(&self) -> f64 {
        self.made.redistribution_time
    }

    #[getter]
    fn planned(&self) -> bool {
        self.made.planned
    }

    #[getter]
    fn predicted_gain(&self) -> Option<f64> {
        self.made.predicted_gain
    }

    #[getter]
    fn loads<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_slice(py, &self.made.loads)
    }

    #[getter]
    fn targets<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_slice(py, &self.made.targets)
    }

    #[getter]
    fn flows(&self) -> Vec<i128> {
        self.made.flows.clone()
    }

    #[getter]
    fn firsts<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_slice(py, &self.made.firsts)
    }

    fn __repr__(&self) -> String {
        let d = &self.made;
        format!(
            "<hetbal.Decision: iteration {}, {}, step {} s -> {} s, move {} s, targets {:?}>",
            d.iteration,
            if d.redistribute {
                "redistribute"
            } else {
                "stay"
            },
            d.current_step,
            d.balanced_step,
            d.redistribution_time,
            d.targets
        )
    }
}

/// Adds the decider to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Decider>()?;
    m.add_class::<Decision>()?;
    Ok(())
}
