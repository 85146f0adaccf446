//! Weighted partitions: `hetbal.partition`, items of unequal weight cut into
//! contiguous ranges over processors of different speeds (the library's
//! `hetbal::partition`), and its least-moving form.
//!
//! The weights are read where numpy keeps them: a C-contiguous array of one of
//! the library's weight types (float64, float32, int64, uint64, int32, uint32)
//! is borrowed as a slice and handed to the generic library function for that
//! type, without the GIL; the only O(n) memory is the library's prefix sums.

use hetbal::partition::{
    partition as least_bottleneck, partition_with_movement, MovingPartition, Partition as Optimum,
    Weight,
};
use numpy::{
    Element, PyArray1, PyArrayDescrMethods, PyArrayMethods, PyReadonlyArray1, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyString, PyType};

use crate::convert::{costs, counts};
use crate::{shield, Failure};

/// What the library is asked for.
#[derive(Clone, Copy)]
enum Request<'a> {
    /// The partition of least bottleneck.
    Least,
    /// The least-moving partition within `1 + tolerance` of it.
    Moving {
        current: &'a [u64],
        tolerance: f64,
        sizes: Option<&'a [u64]>,
    },
}

/// What the library answered.
enum Outcome {
    Least(Optimum),
    Moving(MovingPartition),
}

/// The library's answer to `request` on `weights`: every refusal is a bad
/// input (its message names the argument and the position).
fn compute<W: Weight>(
    weights: &[W],
    seconds_per_unit: &[f64],
    request: Request<'_>,
) -> Result<Outcome, Failure> {
    let answer = match request {
        Request::Least => least_bottleneck(weights, seconds_per_unit).map(Outcome::Least),
        Request::Moving {
            current,
            tolerance,
            sizes,
        } => partition_with_movement(weights, seconds_per_unit, current, tolerance, sizes)
            .map(Outcome::Moving),
    };
    answer.map_err(|e| Failure::input(e.to_string()))
}

/// [`compute`] on the elements of a typed 1-D array, without the GIL: borrowed
/// in place when contiguous, copied once (the only copy) when strided.
fn compute_on<T: Weight + Element + Sync>(
    py: Python<'_>,
    array: &Bound<'_, PyArray1<T>>,
    seconds_per_unit: &[f64],
    request: Request<'_>,
) -> Result<Outcome, Failure> {
    // The borrow is registered with numpy's borrow checker (shared by every
    // Rust extension) and lives on this frame until the library returns: the
    // slice stays valid while the GIL is released, since the array cannot be
    // freed (we hold a reference) nor resized (numpy refuses to resize an
    // array others refer to).
    let readonly = array
        .try_readonly()
        .map_err(|e| Failure::input(format!("weights: cannot read the array: {e}")))?;
    if let Ok(weights) = readonly.as_slice() {
        return py.detach(|| {
            shield(Failure::Plan, || {
                compute(weights, seconds_per_unit, request)
            })
        });
    }
    let weights: Vec<T> = readonly.as_array().iter().copied().collect();
    drop(readonly);
    py.detach(|| {
        shield(Failure::Plan, || {
            compute(&weights, seconds_per_unit, request)
        })
    })
}

/// A shape as Python prints it: `(2, 3)`, `(3,)`, `()`.
fn shape_text(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `weights` as a 1-D numpy array of numbers: itself when it is an array, else
/// what `numpy.asarray` makes of it (a list, a tuple...).
fn weight_array<'py>(
    py: Python<'py>,
    weights: &Bound<'py, PyAny>,
) -> Result<Bound<'py, PyUntypedArray>, Failure> {
    let given_array = weights.cast::<PyUntypedArray>().is_ok();
    if weights.is_instance_of::<PyString>()
        || weights.is_instance_of::<PyBytes>()
        || weights.is_none()
    {
        let kind = weights
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "?".into());
        return Err(Failure::input(format!(
            "weights: a 1-D array or a list of numbers, not {kind}"
        )));
    }
    let array = if given_array {
        weights.clone()
    } else {
        py.import("numpy")
            .and_then(|np| np.call_method1("asarray", (weights,)))
            .map_err(|e| Failure::input(format!("weights: not a list of numbers: {e}")))?
    };
    let array = array
        .cast_into::<PyUntypedArray>()
        .map_err(|e| Failure::input(format!("weights: {e}")))?;
    if array.ndim() != 1 {
        return Err(Failure::input(format!(
            "weights must be a 1-D array (one weight per item), not one of shape {}",
            shape_text(array.shape())
        )));
    }
    let dtype = array.dtype();
    let refused = |what: &str| {
        let given = if given_array {
            "an array"
        } else {
            "a sequence numpy reads as an array"
        };
        Err(Failure::input(format!(
            "weights: {given} of {dtype}: weights must be numbers (a float or integer dtype), not {what}"
        )))
    };
    match dtype.kind() {
        b'f' | b'i' | b'u' => Ok(array),
        b'b' => refused("booleans"),
        b'U' | b'S' => refused("strings"),
        b'O' => refused("Python objects (an array of dtype object)"),
        _ => refused(&dtype.to_string()),
    }
}

/// The library's answer to `request` for the weights `weights` (any 1-D array
/// of numbers or sequence of numbers).
fn compute_for(
    py: Python<'_>,
    weights: &Bound<'_, PyAny>,
    seconds_per_unit: &[f64],
    request: Request<'_>,
) -> Result<Outcome, Failure> {
    let mut array = weight_array(py, weights)?;
    for attempt in 0..2 {
        macro_rules! borrowed {
            ($($t:ty),*) => {$(
                if let Ok(typed) = array.cast::<PyArray1<$t>>() {
                    return compute_on(py, typed, seconds_per_unit, request);
                }
            )*};
        }
        borrowed!(f64, i64, u64, f32, i32, u32);
        if attempt == 1 {
            break;
        }
        // A width or byte order the library has no type for (int8, float16,
        // big-endian...): numpy converts it, exactly for integers.
        let wide = match array.dtype().kind() {
            b'u' => "uint64",
            b'i' => "int64",
            _ => "float64",
        };
        let converted = array
            .call_method1("astype", (wide,))
            .map_err(|e| Failure::input(format!("weights: {e}")))?;
        array = converted
            .cast_into::<PyUntypedArray>()
            .map_err(|e| Failure::input(format!("weights: {e}")))?;
    }
    Err(Failure::input(format!(
        "weights: cannot read an array of {}",
        array.dtype()
    )))
}

/// Item sizes: a contiguous uint64 array borrowed in place, anything else read
/// as counts.
enum Sizes<'py> {
    Borrowed(PyReadonlyArray1<'py, u64>),
    Owned(Vec<u64>),
}

impl<'py> Sizes<'py> {
    fn read(values: &Bound<'py, PyAny>) -> Result<Sizes<'py>, Failure> {
        if let Ok(typed) = values.cast::<PyArray1<u64>>() {
            if let Ok(readonly) = typed.try_readonly() {
                if readonly.as_slice().is_ok() {
                    return Ok(Sizes::Borrowed(readonly));
                }
            }
        }
        counts("sizes", values).map(Sizes::Owned)
    }

    fn as_slice(&self) -> Result<&[u64], Failure> {
        match self {
            Sizes::Borrowed(array) => array
                .as_slice()
                .map_err(|e| Failure::input(format!("sizes: {e}"))),
            Sizes::Owned(sizes) => Ok(sizes),
        }
    }
}

/// The tolerance: a number (the library checks it is finite and >= 0).
fn read_tolerance(value: &Bound<'_, PyAny>) -> Result<f64, Failure> {
    let boolean = value.is_instance_of::<pyo3::types::PyBool>()
        || value
            .get_type()
            .name()
            .is_ok_and(|n| n == "bool" || n == "bool_");
    let shown = || {
        value
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| "?".into())
    };
    if boolean {
        return Err(Failure::input(format!(
            "tolerance = {}: a number (a fraction of the optimum: 0.05 for 5 %), not a boolean",
            shown()
        )));
    }
    value.extract::<f64>().map_err(|_| {
        Failure::input(format!(
            "tolerance = {}: a number (a fraction of the optimum: 0.05 for 5 %)",
            shown()
        ))
    })
}

/// The class `hetbal.Partition` (a tuple subclass, defined in Python).
static PARTITION_TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Cuts items of unequal weight into contiguous ranges, one per processor,
/// for processors of different speeds, so that the slowest finishes first
/// (chains-on-chains partitioning on heterogeneous processors, exact).
///
/// Items `0..n` keep their order (cells along a space-filling curve, rows of a
/// sparse matrix), and so do the processors: processor `j` gets the items
/// `cuts[j]:cuts[j+1]` (possibly none) and takes
/// `seconds_per_unit[j] * weights[cuts[j]:cuts[j+1]].sum()` seconds. The
/// bottleneck is the largest of these times, and the cuts returned make it the
/// least possible (proven: `optimal`, with a `lower_bound` certificate).
///
/// With `current` (the cuts the items are at now), it returns instead, among
/// the partitions whose bottleneck is within `1 + tolerance` of that optimum,
/// one that moves the fewest bytes away from `current` (an item moves when its
/// owner changes and weighs `sizes[i]` bytes): with `tolerance=0` the least
/// moving of the optimal partitions; when `current` is already within the
/// limit, nothing moves. Exact too.
///
/// Arguments:
///     weights: the items' weights in their order, each finite and >= 0: a 1-D
///         numpy array of float64, float32, int64, uint64, int32 or uint32,
///         read in place without a copy when C-contiguous (a strided array is
///         copied once; other integer or float dtypes are converted to 64
///         bits), or a list of numbers (converted by numpy.asarray). Integer
///         weights are summed exactly. Do not write into the array from
///         another thread during the call: it runs without the GIL.
///     seconds_per_unit: each processor's seconds per unit of weight, in
///         processor order, each finite and > 0 (a list or 1-D array).
///     current: the cuts now, p + 1 integers from 0 to n, non-decreasing (a
///         list or integer array); None for the plain optimum.
///     tolerance: how far above the optimal bottleneck the result may be, as
///         a fraction (0.05: 5 %), finite and >= 0; None means 0. Needs current.
///     sizes: each item's size in bytes (n integers: a list or integer array,
///         a contiguous uint64 one read in place); None means 1 byte each, so
///         that bytes count items. Needs current.
///
/// Returns:
///     A `hetbal.Partition`, a tuple `(cuts, bottleneck)`: `cuts` a numpy
///     uint64 array of p + 1 item indices from 0 to n, `bottleneck` a float.
///     It also carries `lower_bound` (no partition does better), `optimal`
///     (these cuts are proven of least bottleneck), `times` (each processor's
///     time, numpy float64) and `probes`; with `current` also `moved_bytes`,
///     `moved_items`, `limit` (the optimal bottleneck times 1 + tolerance, which
///     no time exceeds), `optimal_bottleneck` and `optimal_cuts` (those of the
///     plain optimum).
///
/// Raises:
///     InputError: a weight or speed that is negative, NaN or infinite, a zero
///     speed, no processor, weights that are not a 1-D array or list of numbers
///     (strings, booleans, objects), integer weights whose sum overflows 64
///     bits, `current` of the wrong length, not from 0 to n or decreasing, a
///     negative or NaN tolerance, `sizes` of the wrong length, `tolerance` or
///     `sizes` without `current`. The message names the argument and position.
///
/// Complexity:
///     O(n) for the prefix sums (one pass over the weights, the only O(n)
///     memory: n + 1 sums), then at most about 64 probes of O(p log(n/p))
///     each. With `current`: also O(n + the sum of the cuts' window widths)
///     for the least-moving programme (the windows are about `tolerance * n`
///     wide for evenly spread weights; nothing when `current` is within the
///     limit).
///
/// Example:
///     >>> import numpy as np, hetbal
///     >>> cuts, bottleneck = hetbal.partition(np.array([1, 2, 3, 4, 5, 6]), [1.0, 2.0])
///     >>> cuts.tolist(), bottleneck
///     ([0, 5, 6], 15.0)
///     >>> moved = hetbal.partition(np.ones(8), [1.0, 1.0], current=[0, 5, 8], tolerance=0.25)
///     >>> moved.cuts.tolist(), moved.moved_bytes, moved.optimal_bottleneck
///     ([0, 5, 8], 0, 4.0)
#[pyfunction]
#[pyo3(signature = (weights, seconds_per_unit, current=None, tolerance=None, sizes=None))]
fn partition<'py>(
    py: Python<'py>,
    weights: &Bound<'py, PyAny>,
    seconds_per_unit: &Bound<'py, PyAny>,
    current: Option<&Bound<'py, PyAny>>,
    tolerance: Option<&Bound<'py, PyAny>>,
    sizes: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let given = |x: Option<&Bound<'py, PyAny>>| x.filter(|x| !x.is_none()).cloned();
    let (current, tolerance_given, sizes) = (given(current), given(tolerance), given(sizes));
    if current.is_none() && (tolerance_given.is_some() || sizes.is_some()) {
        let which = match (&tolerance_given, &sizes) {
            (Some(_), Some(_)) => "tolerance and sizes",
            (Some(_), None) => "tolerance",
            _ => "sizes",
        };
        return Err(Failure::input(format!(
            "{which} given without current: current (the cuts the items are at now) is required to choose the partition that moves least"
        ))
        .into());
    }
    let seconds_per_unit = costs("seconds_per_unit", seconds_per_unit)?;
    let outcome = match current {
        None => compute_for(py, weights, &seconds_per_unit, Request::Least)?,
        Some(current) => {
            let current = counts("current", &current)?;
            let tolerance = tolerance_given
                .as_ref()
                .map(read_tolerance)
                .transpose()?
                .unwrap_or(0.0);
            let sizes = sizes.as_ref().map(Sizes::read).transpose()?;
            let sizes = sizes.as_ref().map(Sizes::as_slice).transpose()?;
            let request = Request::Moving {
                current: &current,
                tolerance,
                sizes,
            };
            compute_for(py, weights, &seconds_per_unit, request)?
        }
    };
    result(py, outcome)
}

/// The `hetbal.Partition` of the library's answer: the cuts and times become
/// numpy arrays without a copy.
fn result<'py>(py: Python<'py>, outcome: Outcome) -> PyResult<Bound<'py, PyAny>> {
    let fields = PyDict::new(py);
    let (cuts, bottleneck) = match outcome {
        Outcome::Least(p) => {
            fields.set_item("lower_bound", p.lower_bound)?;
            fields.set_item("optimal", p.optimal)?;
            fields.set_item("times", PyArray1::from_vec(py, p.times))?;
            fields.set_item("probes", p.probes)?;
            fields.set_item("limit", py.None())?;
            fields.set_item("moved_bytes", py.None())?;
            fields.set_item("moved_items", py.None())?;
            fields.set_item("optimal_bottleneck", p.bottleneck)?;
            fields.set_item("optimal_cuts", py.None())?;
            (p.cuts, p.bottleneck)
        }
        Outcome::Moving(m) => {
            let optimum = m.optimum;
            fields.set_item("lower_bound", optimum.lower_bound)?;
            fields.set_item("optimal", m.bottleneck <= optimum.lower_bound)?;
            fields.set_item("times", PyArray1::from_vec(py, m.times))?;
            fields.set_item("probes", optimum.probes)?;
            fields.set_item("limit", m.limit)?;
            fields.set_item("moved_bytes", m.moved_bytes)?;
            fields.set_item("moved_items", m.moved_items)?;
            fields.set_item("optimal_bottleneck", optimum.bottleneck)?;
            fields.set_item("optimal_cuts", PyArray1::from_vec(py, optimum.cuts))?;
            (m.cuts, m.bottleneck)
        }
    };
    let class = PARTITION_TYPE.import(py, "hetbal._partition", "Partition")?;
    let pair = (PyArray1::from_vec(py, cuts), bottleneck);
    class.call((pair,), Some(&fields))
}

/// Adds `partition` to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(partition, m)?)?;
    Ok(())
}
