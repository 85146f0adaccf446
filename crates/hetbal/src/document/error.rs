//! Why a document could not be read, in words that name the place, the line and
//! the column.

use std::fmt;

use crate::functional::PointsError;
use crate::platform::PlatformError;
use crate::{genblock, ring, scatter};

#[cfg(feature = "simgrid")]
use crate::platform::simgrid::SimgridError;

/// Why a document could not be read. The message names the place of the error
/// (``document``, ``field `x` ``, or ``processor 3 (NAME): field `load` ``), not
/// the file: put the file's name in front.
#[derive(Clone, Debug, PartialEq)]
pub enum DocumentError {
    /// The bytes are not UTF-8 text.
    NotUtf8 {
        /// Offset of the first invalid byte.
        offset: usize,
    },
    /// The text is empty (or only white space).
    Empty {
        /// What the document should have been, e.g. `a JSON document`.
        expected: &'static str,
    },
    /// The top level of a JSON document is of the wrong kind (an array where an
    /// object is expected...).
    WrongShape {
        /// What the document should be, in words.
        expected: &'static str,
        /// What its top level is: `an object`, `an array`, `a string`, `a
        /// number`, `a boolean` or `null`.
        found: &'static str,
    },
    /// JSON that cannot be read, ends too early, or holds a value that does not
    /// fit its field.
    Json {
        /// Which of the three.
        kind: JsonErrorKind,
        /// Where in the document: ``document``, ``field `x` ``, ``processor 3
        /// (NAME): field `load` `` (empty for the top level of a platform). In
        /// unreadable text, the innermost place open before the error.
        place: String,
        /// What is wrong, as the JSON reader says (without the position).
        message: String,
        /// Line of the error (from 1; 0 when unknown).
        line: usize,
        /// Column of the error.
        column: usize,
    },
    /// Text after the end of the JSON document.
    TrailingText {
        /// What the JSON parser says, with the line and column.
        message: String,
    },
    /// A TOML document that cannot be read, or a value that does not fit its field.
    Toml {
        /// The field, or `document`.
        place: String,
        /// What is wrong (may span several lines).
        message: String,
        /// Line of the error (from 1), when known.
        line: Option<usize>,
    },
    /// An entry of a list of times is not a number.
    NotANumber {
        /// Index of the entry (from 0).
        index: usize,
        /// The entry as written (trimmed).
        value: String,
    },
    /// An array of numbers (`.npy` or raw little-endian) that cannot be read.
    Array {
        /// What is wrong, in words.
        message: String,
    },
    /// The document is a ring instance that breaks a rule.
    Ring(ring::InstanceError),
    /// The document is a scatter instance that breaks a rule.
    Scatter(scatter::InstanceError),
    /// The document is a GEN_BLOCK instance that breaks a rule.
    GenBlock(genblock::InstanceError),
    /// The document is a measured-points document that breaks a rule.
    Points(PointsError),
    /// The document is a platform that breaks a rule.
    Platform(PlatformError),
    /// The SimGrid platform XML cannot be read.
    #[cfg(feature = "simgrid")]
    Simgrid(SimgridError),
}

/// What went wrong in a JSON document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JsonErrorKind {
    /// Text that is not JSON (a trailing comma, a missing quote...).
    Syntax,
    /// The text ends before the document does.
    Truncated,
    /// A value that does not fit its field: wrong type, unknown or missing field,
    /// a number out of range.
    Data,
}

/// ` at line L column C` as the JSON parser writes it, or nothing for line 0.
fn json_position(f: &mut fmt::Formatter<'_>, line: usize, column: usize) -> fmt::Result {
    if line > 0 {
        write!(f, " at line {line} column {column}")?;
    }
    Ok(())
}

/// `place: `, or nothing for an empty place.
fn write_place(f: &mut fmt::Formatter<'_>, place: &str) -> fmt::Result {
    if !place.is_empty() {
        write!(f, "{place}: ")?;
    }
    Ok(())
}

impl fmt::Display for DocumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DocumentError::NotUtf8 { offset } => {
                write!(f, "not UTF-8 text (invalid byte at offset {offset})")
            }
            DocumentError::Empty { expected } => {
                write!(f, "the file is empty: expected {expected}")
            }
            DocumentError::WrongShape { expected, found } => {
                write!(f, "expected {expected}, found {found}")
            }
            DocumentError::Json {
                kind,
                place,
                message,
                line,
                column,
            } => {
                write_place(f, place)?;
                match kind {
                    JsonErrorKind::Syntax => {
                        write!(f, "{message} at line {line}, column {column}")?;
                        if message == "trailing comma" {
                            f.write_str(
                                " (JSON allows no comma after the last entry of an object or array)",
                            )?;
                        }
                        Ok(())
                    }
                    JsonErrorKind::Truncated => {
                        write!(f, "the document is truncated ({message}")?;
                        json_position(f, *line, *column)?;
                        f.write_str(")")
                    }
                    JsonErrorKind::Data => {
                        f.write_str(message)?;
                        json_position(f, *line, *column)?;
                        if message.contains("expected u64") {
                            let max = u64::MAX;
                            write!(f, " (item counts are whole numbers from 0 to {max})")?;
                        }
                        Ok(())
                    }
                }
            }
            DocumentError::TrailingText { message } => {
                write!(f, "unexpected text after the document: {message}")
            }
            DocumentError::Toml {
                place,
                message,
                line,
            } => {
                write_place(f, place)?;
                f.write_str(message)?;
                match line {
                    Some(line) => write!(f, " at line {line}"),
                    None => Ok(()),
                }
            }
            DocumentError::NotANumber { index, value } => {
                write!(f, "--times: value {index} ({value:?}) is not a number")
            }
            DocumentError::Array { message } => f.write_str(message),
            DocumentError::Ring(e) => e.fmt(f),
            DocumentError::Scatter(e) => e.fmt(f),
            DocumentError::GenBlock(e) => e.fmt(f),
            DocumentError::Points(e) => e.fmt(f),
            DocumentError::Platform(e) => e.fmt(f),
            #[cfg(feature = "simgrid")]
            DocumentError::Simgrid(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for DocumentError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DocumentError::Ring(e) => Some(e),
            DocumentError::Scatter(e) => Some(e),
            DocumentError::GenBlock(e) => Some(e),
            DocumentError::Points(e) => Some(e),
            DocumentError::Platform(e) => Some(e),
            #[cfg(feature = "simgrid")]
            DocumentError::Simgrid(e) => Some(e),
            _ => None,
        }
    }
}
