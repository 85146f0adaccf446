//! `hetbal.mpi.ItemBuffer`: a rank's rows in memory that redistributions grow
//! in place (`hetbal_mpi::buffer::ItemBuffer`), so that the rows a rank keeps
//! are never copied or moved, and numpy arrays that view them without a copy.
//!
//! A view holds a reference to the buffer (its numpy base), so the buffer's
//! memory (one reserved range of addresses, unmapped only when the buffer is
//! collected) outlives every view: an old view after a redistribution shows
//! whatever the range holds now (other rows, or zeros where memory was given
//! back), never freed memory.

use ::mpi::traits::Communicator;
use hetbal_mpi::buffer::{BufferError, ItemBuffer};
use hetbal_mpi::ring::redistribute_bytes;
use numpy::ndarray::ArrayView1;
use numpy::{PyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

use crate::mpi::{agree, checked_move, duplicate, rows_of, run_failure, without_gil};
use crate::{shield, Failure};

/// The error of a buffer in use by a redistribution (from another thread).
fn in_use() -> Failure {
    Failure::input("item buffer: in use by a redistribution (from another thread)")
}

/// Rows of `item_bytes` bytes each, in memory that grows in front and behind
/// without moving them (hetbal.mpi.ItemBuffer wraps it).
#[pyclass(module = "hetbal._hetbal", name = "_ItemBuffer")]
pub(crate) struct PyItemBuffer {
    /// The rows' bytes; `None` only while a redistribution runs.
    rows: Option<ItemBuffer<u8>>,
    item_bytes: usize,
}

impl PyItemBuffer {
    /// A buffer of `rows`, `item_bytes` bytes each.
    pub(crate) fn holding(rows: ItemBuffer<u8>, item_bytes: usize) -> Self {
        PyItemBuffer {
            rows: Some(rows),
            item_bytes,
        }
    }

    /// The rows, or the error of a buffer in use by a redistribution.
    fn rows(&self) -> Result<&ItemBuffer<u8>, Failure> {
        self.rows.as_ref().ok_or_else(in_use)
    }
}

#[pymethods]
impl PyItemBuffer {
    /// A buffer holding a copy of `rows` (a C-contiguous `(count,
    /// item_bytes)` uint8 array, `item_bytes` >= 1).
    #[new]
    fn new(rows: PyReadonlyArray2<'_, u8>) -> PyResult<Self> {
        let rows = Some(rows);
        let (bytes, _, item_bytes) = rows_of(&rows, None)?;
        let failed = |e: BufferError| Failure::Run(format!("item buffer: {e}"));
        let mut buffer = ItemBuffer::new().map_err(failed)?;
        // Huge pages where the system has them, as numpy gives its large arrays.
        buffer.advise_huge_pages();
        buffer.extend_from_slice(bytes).map_err(failed)?;
        let rows = buffer;
        Ok(PyItemBuffer {
            rows: Some(rows),
            item_bytes,
        })
    }

    /// Bytes per row.
    #[getter]
    fn item_bytes(&self) -> usize {
        self.item_bytes
    }

    /// Whether redistributions give back the memory of the rows this rank
    /// sends as soon as they have left (hetbal.mpi.ItemBuffer.give_back_sent).
    #[getter]
    fn give_back_sent(&self) -> PyResult<bool> {
        Ok(self.rows()?.gives_back_sent())
    }

    #[setter]
    fn set_give_back_sent(&mut self, on: bool) -> PyResult<()> {
        self.rows
            .as_mut()
            .ok_or_else(in_use)?
            .set_give_back_sent(on);
        Ok(())
    }

    /// Rows held.
    fn __len__(&self) -> PyResult<usize> {
        Ok(self.rows()?.len() / self.item_bytes)
    }

    /// The rows' bytes as a 1-D uint8 numpy array viewing the buffer (no
    /// copy; writable; its base is this buffer).
    pub(crate) fn view<'py>(this: Bound<'py, Self>) -> PyResult<Bound<'py, PyArray1<u8>>> {
        let me = this.borrow();
        let rows = me.rows()?;
        // SAFETY: a pointer to `rows.len()` initialised bytes (ItemBuffer's
        // pointer is never null, also when empty).
        let view = unsafe { ArrayView1::from_shape_ptr(rows.len(), rows.as_ptr()) };
        // SAFETY: the array's base is this buffer, whose mapping stays at its
        // address until the buffer is collected (a redistribution grows it in
        // place; the mapping is unmapped only on drop), so the memory the array
        // shows outlives it.
        let array = unsafe { PyArray1::borrow_from_array(&view, this.clone().into_any()) };
        Ok(array)
    }
}

/// Moves this rank's rows in `buffer` as `plan` says (rank i is ring position
/// i), in place: the rows it keeps stay where they are, the rows it receives
/// land beside them. `problem` says what the Python layer found wrong.
#[pyfunction]
#[pyo3(signature = (comm, plan, buffer, problem=None, fault=None))]
pub(crate) fn mpi_redistribute_buffer<'py>(
    py: Python<'py>,
    comm: &Bound<'py, PyAny>,
    plan: &Bound<'py, PyAny>,
    buffer: &Bound<'py, PyAny>,
    problem: Option<String>,
    fault: Option<&Bound<'py, PyAny>>,
) -> PyResult<()> {
    let comm = duplicate(comm)?;
    let (rank, ranks) = (comm.rank() as usize, comm.size() as usize);
    let buffer = buffer.cast::<PyItemBuffer>().ok();
    let local = (|| {
        if let Some(problem) = problem {
            return Err(Failure::Input(problem));
        }
        let buffer = buffer.ok_or_else(|| Failure::input("buffer: a hetbal.mpi.ItemBuffer"))?;
        let (count, item_bytes) = shape(buffer)?;
        let (loads, flows, options) = checked_move(plan, fault, (rank, ranks), count, "buffer")?;
        Ok((item_bytes, loads, flows, options))
    })();
    let (item_bytes, loads, flows, options) = agree(py, &comm, local, 0)?;
    // Every rank checked its arguments.
    let buffer = buffer.expect("agree passed this rank's checks");
    with_rows(py, buffer, |rows| {
        shield(Failure::Run, || {
            redistribute_bytes(&*comm, &loads, &flows, item_bytes, rows, &options)
                .map(|_| ())
                .map_err(run_failure)
        })
    })
    .map_err(PyErr::from)
}

/// The rows held by `buffer` and their size, or the error of a buffer in use.
pub(crate) fn shape(buffer: &Bound<'_, PyItemBuffer>) -> Result<(u64, usize), Failure> {
    let me = buffer
        .try_borrow()
        .map_err(|_| Failure::input("item buffer: in use (from another thread)"))?;
    let item_bytes = me.item_bytes;
    Ok(((me.rows()?.len() / item_bytes) as u64, item_bytes))
}

/// Runs `run` on `buffer`'s rows without the GIL (MPI calls that wait for the
/// other ranks). The rows are taken out meanwhile (another thread reaching the
/// buffer finds it in use) and put back, moved or (on failure) as they were:
/// the mapping numpy views show is never dropped here. Call it only after
/// every rank's checks agreed (`shape` found the rows).
pub(crate) fn with_rows<T: Send>(
    py: Python<'_>,
    buffer: &Bound<'_, PyItemBuffer>,
    run: impl FnOnce(&mut ItemBuffer<u8>) -> Result<T, Failure> + Send,
) -> Result<T, Failure> {
    let mut rows = buffer
        .borrow_mut()
        .rows
        .take()
        .expect("the checks found the rows");
    let outcome = without_gil(py, || run(&mut rows));
    buffer.borrow_mut().rows = Some(rows);
    outcome
}
