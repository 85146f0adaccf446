//! The papers' experiments (`hetbal.experiment`): the library's functions, their
//! rows handed to Python as the JSON rows of formats.md's "Experiment tables"
//! (`hetbal.experiment` turns them into dicts that `pandas.DataFrame` takes).

use std::convert::Infallible;

use hetbal::experiment::ring_iterative::{self, paper_platform, Settings};
use hetbal::ring::RingKind;
use pyo3::prelude::*;

use crate::convert::{costs, count, counts};
use crate::{shield, Failure};

/// A count that must fit in a smaller integer type.
fn narrow<T: TryFrom<u64>>(name: &str, value: u64) -> Result<T, Failure> {
    T::try_from(value).map_err(|_| Failure::input(format!("{name} = {value}: too large")))
}

/// The ring paper's section 7 study (`hetbal experiment ring-iterative`, built-in
/// engine, on the paper's generated platform of 90 hosts): every policy on the
/// same iterative runs, for each ring size and cost ratio, averaged over the
/// draws. `progress(done, total)`, if given, is called after each (ring, draw,
/// ratio). Returns the table's rows as JSON (a list of objects).
#[pyfunction]
#[pyo3(signature = (rings, ratios, draws, iterations, items, border_items, kind, spread, seed, progress=None))]
#[allow(clippy::too_many_arguments)]
fn ring_iterative_rows(
    py: Python<'_>,
    rings: &Bound<'_, PyAny>,
    ratios: &Bound<'_, PyAny>,
    draws: &Bound<'_, PyAny>,
    iterations: &Bound<'_, PyAny>,
    items: &Bound<'_, PyAny>,
    border_items: &Bound<'_, PyAny>,
    kind: &str,
    spread: &Bound<'_, PyAny>,
    seed: &Bound<'_, PyAny>,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    let rings = counts("rings", rings)?
        .into_iter()
        .map(|r| narrow::<usize>("rings", r))
        .collect::<Result<Vec<_>, _>>()?;
    let kind = match kind {
        "bidirectional" => RingKind::Bidirectional,
        "unidirectional" => RingKind::Unidirectional,
        other => {
            return Err(Failure::input(format!(
                "kind {other:?}: choose one of bidirectional, unidirectional"
            ))
            .into())
        }
    };
    let spread_value: f64 = spread.extract().map_err(|_| {
        Failure::input(format!(
            "spread = {}: a number",
            spread.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    })?;
    let settings = Settings {
        rings,
        ratios: costs("ratios", ratios)?,
        draws: count("draws", draws)?,
        iterations: narrow("iterations", count("iterations", iterations)?)?,
        items: count("items", items)?,
        border_items: count("border_items", border_items)?,
        kind,
        spread: spread_value,
        traces: None,
        seed: count("seed", seed)?,
    };
    let mut callback_error: Option<PyErr> = None;
    let table = py.detach(|| {
        shield(Failure::Plan, || {
            let platform = paper_platform(settings.seed);
            let mut report = |done: u64, total: u64| {
                let Some(callback) = progress.as_ref() else {
                    return;
                };
                if callback_error.is_some() {
                    return;
                }
                Python::attach(|py| {
                    if let Err(e) = callback.call1(py, (done, total)) {
                        callback_error = Some(e);
                    }
                });
            };
            ring_iterative::run::<Infallible>(&platform, &settings, None, &mut report)
                .map_err(|e| Failure::input(e.to_string()))
        })
    })?;
    if let Some(e) = callback_error {
        return Err(e);
    }
    serde_json::to_string(&table.rows)
        .map_err(|e| Failure::Plan(format!("cannot encode the rows: {e}")).into())
}

/// Adds the experiments to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(ring_iterative_rows, m)?)?;
    Ok(())
}
