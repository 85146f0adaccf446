//! Arrays of numbers too large for JSON: NumPy's `.npy` files and raw
//! little-endian files.

use super::DocumentError;

/// A one-dimensional array of numbers read from a file, in the type it was
/// written in.
#[derive(Clone, Debug, PartialEq)]
pub enum NumberArray {
    /// 64-bit floats (`<f8`, `.f64`).
    F64(Vec<f64>),
    /// 32-bit floats (`<f4`, `.f32`).
    F32(Vec<f32>),
    /// Unsigned 64-bit integers (`<u8`, `.u64`).
    U64(Vec<u64>),
    /// Unsigned 32-bit integers (`<u4`, `.u32`).
    U32(Vec<u32>),
    /// Signed 64-bit integers (`<i8`, `.i64`).
    I64(Vec<i64>),
    /// Signed 32-bit integers (`<i4`, `.i32`).
    I32(Vec<i32>),
}

impl NumberArray {
    /// The number of entries.
    pub fn len(&self) -> usize {
        match self {
            NumberArray::F64(v) => v.len(),
            NumberArray::F32(v) => v.len(),
            NumberArray::U64(v) => v.len(),
            NumberArray::U32(v) => v.len(),
            NumberArray::I64(v) => v.len(),
            NumberArray::I32(v) => v.len(),
        }
    }
    /// Whether it has no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The entries as u64 (sizes in bytes): integers >= 0 only.
    ///
    /// # Errors
    /// [`DocumentError::Array`] naming the first entry that is negative, or the
    /// type when it is a float type.
    pub fn into_u64(self) -> Result<Vec<u64>, DocumentError> {
        fn convert<T: Copy + TryInto<u64> + std::fmt::Display>(
            v: Vec<T>,
        ) -> Result<Vec<u64>, DocumentError> {
            v.iter()
                .enumerate()
                .map(|(i, &x)| {
                    x.try_into().map_err(|_| DocumentError::Array {
                        message: format!("entry {i} is {x}: it must be an integer >= 0"),
                    })
                })
                .collect()
        }
        match self {
            NumberArray::U64(v) => Ok(v),
            NumberArray::U32(v) => convert(v),
            NumberArray::I64(v) => convert(v),
            NumberArray::I32(v) => convert(v),
            NumberArray::F64(_) | NumberArray::F32(_) => Err(DocumentError::Array {
                message: "an array of floats where integers (bytes) are expected".into(),
            }),
        }
    }
}

/// Reads a one-dimensional array of numbers from a file's bytes: a NumPy
/// `.npy` file (version 1, 2 or 3; little-endian `f8`, `f4`, `u8`, `u4`,
/// `i8` or `i4`; C order; any shape with one dimension), recognised by its
/// magic bytes, or a raw file of little-endian numbers whose type is given by
/// the file name's extension: `.f64`, `.f32`, `.u64`, `.u32`, `.i64`, `.i32`.
///
/// # Errors
/// [`DocumentError::Array`] saying what is wrong: a header that cannot be
/// read, a type, byte order or shape not listed, a length that is not a whole
/// number of entries or (in a `.npy` file) not the one its shape gives, an
/// extension that names no type.
///
/// # Complexity
/// O(length of `bytes`): one pass that converts each entry.
///
/// # Example
/// ```
/// use hetbal::document::{parse_array, NumberArray};
/// let bytes: Vec<u8> = [1.5f64, 2.0].iter().flat_map(|x| x.to_le_bytes()).collect();
/// assert_eq!(parse_array(&bytes, "w.f64").unwrap(), NumberArray::F64(vec![1.5, 2.0]));
/// assert!(parse_array(&bytes[..5], "w.f64").is_err());
/// ```
pub fn parse_array(bytes: &[u8], file_name: &str) -> Result<NumberArray, DocumentError> {
    let bad = |message: String| DocumentError::Array { message };
    if let Some(rest) = bytes.strip_prefix(b"\x93NUMPY") {
        let (major, rest) = match rest {
            [major, _minor, rest @ ..] => (*major, rest),
            _ => return Err(bad("a .npy file cut short in its header".into())),
        };
        let (header_len, rest) = match (major, rest) {
            (1, [a, b, rest @ ..]) => (u16::from_le_bytes([*a, *b]) as usize, rest),
            (2 | 3, [a, b, c, d, rest @ ..]) => {
                (u32::from_le_bytes([*a, *b, *c, *d]) as usize, rest)
            }
            _ => {
                return Err(bad(format!(
                    "a .npy file of version {major}, which is not 1, 2 or 3"
                )))
            }
        };
        if rest.len() < header_len {
            return Err(bad("a .npy file cut short in its header".into()));
        }
        let header = String::from_utf8_lossy(&rest[..header_len]);
        let field = |key: &str| -> Option<String> {
            let at = header.find(&format!("'{key}'"))?;
            let after = header[at + key.len() + 2..]
                .trim_start()
                .strip_prefix(':')?
                .trim_start();
            let end = if after.starts_with('(') {
                after.find(')')? + 1
            } else {
                after.find([',', '}']).unwrap_or(after.len())
            };
            Some(after[..end].trim().trim_matches('\'').to_string())
        };
        let descr = field("descr").ok_or_else(|| bad("a .npy header without 'descr'".into()))?;
        // Its value does not matter: with one dimension both orders are the
        // same layout. NumPy writes it always, and reads no header without it.
        field("fortran_order")
            .ok_or_else(|| bad("a .npy header without 'fortran_order'".into()))?;
        let shape = field("shape").ok_or_else(|| bad("a .npy header without 'shape'".into()))?;
        let dims: Vec<&str> = shape
            .trim_matches(|c| c == '(' || c == ')')
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if dims.len() != 1 {
            return Err(bad(format!(
                "a .npy array of shape {shape}: the array must have one dimension"
            )));
        }
        let entries: u64 = dims[0].parse().map_err(|_| {
            bad(format!(
                "a .npy array of shape {shape}: its length {:?} is not a count of entries (a whole number below 2^64)",
                dims[0]
            ))
        })?;
        let kind = match descr.as_str() {
            "<f8" => "f64",
            "<f4" => "f32",
            "<u8" => "u64",
            "<u4" => "u32",
            "<i8" => "i64",
            "<i4" => "i32",
            other => {
                return Err(bad(format!(
                    "a .npy array of type {other:?}: give little-endian float64, float32, \
                     uint64, uint32, int64 or int32"
                )))
            }
        };
        let array = raw(&rest[header_len..], kind)?;
        if array.len() as u64 != entries {
            return Err(bad(format!(
                "a .npy array of shape {shape} holds {} entries after its header: the data must \
                 hold exactly the {entries} its shape gives",
                array.len()
            )));
        }
        return Ok(array);
    }
    let extension = file_name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase());
    match extension.as_deref() {
        Some(kind @ ("f64" | "f32" | "u64" | "u32" | "i64" | "i32")) => raw(bytes, kind),
        Some("npy") => Err(bad(format!(
            "{file_name:?} has no NumPy magic bytes at its start: it is not a .npy file"
        ))),
        _ => Err(bad(format!(
            "{file_name:?} is neither a .npy file nor a raw array named .f64, .f32, .u64, \
             .u32, .i64 or .i32"
        ))),
    }
}

/// Little-endian numbers of type `kind`.
fn raw(bytes: &[u8], kind: &str) -> Result<NumberArray, DocumentError> {
    let width = if kind.ends_with("64") { 8 } else { 4 };
    if bytes.len() % width != 0 {
        return Err(DocumentError::Array {
            message: format!(
                "{} bytes of data are not a whole number of {width}-byte {kind} entries",
                bytes.len()
            ),
        });
    }
    macro_rules! read {
        ($t:ty, $variant:ident) => {
            NumberArray::$variant(
                bytes
                    .chunks_exact(width)
                    .map(|c| <$t>::from_le_bytes(c.try_into().expect("chunks of the width")))
                    .collect(),
            )
        };
    }
    Ok(match kind {
        "f64" => read!(f64, F64),
        "f32" => read!(f32, F32),
        "u64" => read!(u64, U64),
        "u32" => read!(u32, U32),
        "i64" => read!(i64, I64),
        _ => read!(i32, I32),
    })
}
