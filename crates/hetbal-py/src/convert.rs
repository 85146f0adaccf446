//! Python numbers in: item counts (u64, never through floats) and costs (f64),
//! from any sequence or numpy array, every refusal an [`InputError`](crate::InputError)
//! naming the argument (and the element).

use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt};

use crate::Failure;

/// `x` for messages: `str(x)` for numbers (`4.0`, not `np.float64(4.0)`),
/// `repr(x)` for the rest (`'1'`).
fn shown(x: &Bound<'_, PyAny>) -> String {
    let text = if x.is_instance_of::<pyo3::types::PyString>() || x.is_none() {
        x.repr()
    } else {
        x.str()
    };
    text.map(|r| r.to_string()).unwrap_or_else(|_| "?".into())
}

/// The name of `x`'s type, for messages.
fn type_name(x: &Bound<'_, PyAny>) -> String {
    x.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// Python's and numpy's booleans (numpy 1 calls its own `bool_`).
fn is_bool(x: &Bound<'_, PyAny>) -> bool {
    x.is_instance_of::<PyBool>() || matches!(type_name(x).as_str(), "bool" | "bool_")
}

/// One count, `name` naming it: an int or a numpy integer in 0..2^64 (not a
/// boolean, not a float even when whole).
pub(crate) fn count(name: &str, x: &Bound<'_, PyAny>) -> Result<u64, Failure> {
    count_named(&|| name.to_string(), x)
}

/// [`count`], its name made only for a message.
fn count_named(name: &dyn Fn() -> String, x: &Bound<'_, PyAny>) -> Result<u64, Failure> {
    // The common case first: a Python int (exactly: a bool is an int too).
    let exact_int = x.is_exact_instance_of::<PyInt>();
    if exact_int {
        if let Ok(value) = x.extract::<u64>() {
            return Ok(value);
        }
    }
    let rule = if !exact_int && is_bool(x) {
        "a count must be an integer, not a boolean"
    } else if let Ok(value) = x.extract::<u64>() {
        return Ok(value);
    } else if x.hasattr("__index__").unwrap_or(false) {
        if x.lt(0).unwrap_or(false) {
            "a count must be >= 0"
        } else {
            "a count must fit in 64 bits (below 2^64 = 18446744073709551616)"
        }
    } else if x.hasattr("__float__").unwrap_or(false) {
        "a count must be an integer (an int or a numpy integer): counts never pass through floats"
    } else {
        "a count must be an integer"
    };
    Err(Failure::input(format!("{} = {}: {rule}", name(), shown(x))))
}

/// A numpy array given for `name` if `values` is one, checked to be 1-D.
fn array_1d<'a, 'py>(
    name: &str,
    values: &'a Bound<'py, PyAny>,
) -> Result<Option<&'a Bound<'py, PyUntypedArray>>, Failure> {
    let Ok(array) = values.cast::<PyUntypedArray>() else {
        return Ok(None);
    };
    if array.ndim() != 1 {
        return Err(Failure::input(format!(
            "{name}: a 1-D array (one value per processor), not one of shape {:?}",
            array.shape()
        )));
    }
    Ok(Some(array))
}

/// The elements of a sequence given for `name`, each converted by `one` (named
/// `name[i]`).
fn each<T>(
    name: &str,
    what: &str,
    values: &Bound<'_, PyAny>,
    one: impl Fn(&dyn Fn() -> String, &Bound<'_, PyAny>) -> Result<T, Failure>,
) -> Result<Vec<T>, Failure> {
    let not_a_sequence = || {
        Failure::input(format!(
            "{name}: a sequence or numpy array of {what}, not {}",
            type_name(values)
        ))
    };
    if values.is_instance_of::<pyo3::types::PyString>() {
        return Err(not_a_sequence());
    }
    let items = values.try_iter().map_err(|_| not_a_sequence())?;
    items
        .enumerate()
        .map(|(i, x)| {
            let x = x.map_err(|e| Failure::input(format!("{name}[{i}]: {e}")))?;
            one(&|| format!("{name}[{i}]"), &x)
        })
        .collect()
}

/// An integer numpy array as counts, if its element type is one of Rust's.
fn integer_array(
    name: &str,
    array: &Bound<'_, PyUntypedArray>,
) -> Option<Result<Vec<u64>, Failure>> {
    macro_rules! try_types {
        ($($t:ty),*) => {$(
            if let Ok(typed) = array.cast::<PyArray1<$t>>() {
                let readonly = typed.readonly();
                let values = readonly.as_array();
                return Some(values.iter().enumerate().map(|(i, &v)| {
                    u64::try_from(v).map_err(|_| Failure::input(format!(
                        "{name}[{i}] = {v}: a count must be >= 0"
                    )))
                }).collect());
            }
        )*};
    }
    try_types!(u64, i64, u32, i32, u16, i16, u8, i8);
    None
}

/// Item counts given as `name`: a sequence of ints / numpy integers, or a 1-D
/// numpy integer array (of any width; not float, not bool).
pub(crate) fn counts(name: &str, values: &Bound<'_, PyAny>) -> Result<Vec<u64>, Failure> {
    if let Some(array) = array_1d(name, values)? {
        let dtype = array.dtype();
        match dtype.kind() {
            b'u' | b'i' => {
                if let Some(found) = integer_array(name, array) {
                    return found;
                }
                // A byte order or width Rust has no type for: numpy converts
                // it exactly (integers to 64-bit integers).
                let wide = if dtype.kind() == b'u' { "uint64" } else { "int64" };
                let converted = values
                    .call_method1("astype", (wide,))
                    .map_err(|e| Failure::input(format!("{name}: {e}")))?;
                let converted = converted.cast::<PyUntypedArray>().map_err(|e| {
                    Failure::input(format!("{name}: {e}"))
                })?;
                return integer_array(name, converted).unwrap_or_else(|| {
                    Err(Failure::input(format!("{name}: cannot read an array of {dtype}")))
                });
            }
            // Python objects: checked one by one below.
            b'O' => {}
            _ => {
                return Err(Failure::input(format!(
                    "{name}: an array of {dtype}: counts must be integers (u64 counts never pass through floats, nor booleans)"
                )))
            }
        }
    }
    each(name, "counts", values, count_named)
}

/// One cost or time, `name` naming it: any real number (NaN is left to the
/// library, which refuses it with its own message), not a boolean.
fn cost(name: &dyn Fn() -> String, x: &Bound<'_, PyAny>) -> Result<f64, Failure> {
    if let Ok(value) = x.cast_exact::<PyFloat>() {
        return Ok(value.value());
    }
    if !x.is_exact_instance_of::<PyInt>() && is_bool(x) {
        return Err(Failure::input(format!(
            "{} = {}: a cost must be a number, not a boolean",
            name(),
            shown(x)
        )));
    }
    x.extract::<f64>().map_err(|_| {
        Failure::input(format!(
            "{} = {}: a cost must be a number",
            name(),
            shown(x)
        ))
    })
}

/// Costs or times given as `name`: a sequence of numbers or a 1-D numpy array
/// of floats or integers.
pub(crate) fn costs(name: &str, values: &Bound<'_, PyAny>) -> Result<Vec<f64>, Failure> {
    if let Some(array) = array_1d(name, values)? {
        let dtype = array.dtype();
        match dtype.kind() {
            b'f' | b'i' | b'u' => {
                let read = |a: &Bound<'_, PyUntypedArray>| {
                    a.cast::<PyArray1<f64>>()
                        .ok()
                        .map(|typed| typed.readonly().as_array().to_vec())
                };
                if let Some(found) = read(array) {
                    return Ok(found);
                }
                let converted = values
                    .call_method1("astype", ("float64",))
                    .map_err(|e| Failure::input(format!("{name}: {e}")))?;
                let converted = converted
                    .cast::<PyUntypedArray>()
                    .map_err(|e| Failure::input(format!("{name}: {e}")))?;
                return read(converted).ok_or_else(|| {
                    Failure::input(format!("{name}: cannot read an array of {dtype}"))
                });
            }
            b'O' => {}
            _ => {
                return Err(Failure::input(format!(
                    "{name}: an array of {dtype}: costs must be numbers"
                )))
            }
        }
    }
    each(name, "numbers", values, cost)
}

/// Refuses an array `name` whose length is not `n`, the number of processors
/// (given by `reference`).
pub(crate) fn same_length<T>(
    name: &str,
    values: &[T],
    n: usize,
    reference: &str,
) -> Result<(), Failure> {
    if values.len() == n {
        return Ok(());
    }
    Err(Failure::input(format!(
        "{name} has {} values but {reference} has {n}: give one per processor",
        values.len()
    )))
}

/// The member of `all` named `value` (a str) for the argument `what`, or the
/// `hetbal` command's message: `unknown method "fast": choose one of ...`.
pub(crate) fn choice<T: Copy>(
    what: &str,
    value: &Bound<'_, PyAny>,
    all: &[T],
    name: fn(T) -> &'static str,
) -> Result<T, Failure> {
    let names = || all.iter().map(|&v| name(v)).collect::<Vec<_>>().join(", ");
    let text: String = value.extract().map_err(|_| {
        Failure::input(format!(
            "{what}: a name (str), not {}; choose one of {}",
            shown(value),
            names()
        ))
    })?;
    all.iter()
        .copied()
        .find(|&v| name(v) == text)
        .ok_or_else(|| {
            Failure::input(format!(
                "unknown {what} {text:?}: choose one of {}",
                names()
            ))
        })
}
