//! The reader's options and errors: how SimGrid's quantities become the model's
//! units, the limits of what is read, and why a file is refused.

use std::fmt;

use crate::platform::PlatformError;

/// Deepest zone nesting accepted (deeper files are refused, not a stack overflow).
pub const MAX_ZONE_DEPTH: usize = 64;

/// Most hosts accepted: the model keeps one route per ordered pair of hosts.
pub const MAX_HOSTS: usize = 4096;

/// How SimGrid's quantities become the model's units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimgridOptions {
    /// Flops in one unit of work: `w = flops_per_unit / speed` (default 1).
    pub flops_per_unit: f64,
    /// Bytes in one unit of data: `c = unit_bytes / bottleneck bandwidth` (default 1).
    pub unit_bytes: f64,
}

impl Default for SimgridOptions {
    fn default() -> Self {
        SimgridOptions {
            flops_per_unit: 1.0,
            unit_bytes: 1.0,
        }
    }
}

/// Why a SimGrid file could not be read. Every variant but `Platform` carries the
/// line (from 1) of the element at fault.
#[derive(Clone, Debug, PartialEq)]
pub enum SimgridError {
    /// The text is not well-formed XML.
    Xml {
        /// Line of the error.
        line: u32,
        /// Column of the error.
        column: u32,
        /// What the XML parser says.
        message: String,
    },
    /// The root is not `<platform version="4.1">` (versions 4, 4.0 and 4.1 are read).
    Version {
        /// Line of the root element.
        line: u32,
        /// What was found instead.
        found: String,
    },
    /// A required attribute is missing.
    MissingAttribute {
        /// Line of the element.
        line: u32,
        /// The element.
        element: String,
        /// The attribute.
        attribute: &'static str,
    },
    /// An attribute has a value that cannot be read or breaks a rule.
    BadValue {
        /// Line of the element.
        line: u32,
        /// The element.
        element: String,
        /// The attribute.
        attribute: String,
        /// The value found.
        value: String,
        /// Why it is wrong.
        reason: String,
    },
    /// An element, attribute or value that SimGrid knows but this reader does not
    /// support, or that is unknown to SimGrid 4.1, or misplaced.
    Unsupported {
        /// Line of the element.
        line: u32,
        /// The element.
        element: String,
        /// What is not supported.
        what: String,
    },
    /// Two hosts/routers, links or zones share an id.
    DuplicateId {
        /// Line of the second declaration.
        line: u32,
        /// `host or router`, `link` or `zone`.
        kind: &'static str,
        /// The id.
        id: String,
        /// Line of the first declaration.
        first_line: u32,
    },
    /// An attribute names a host, router, link or zone that is not declared, or not
    /// where it must be.
    UnknownReference {
        /// Line of the element.
        line: u32,
        /// The element.
        element: String,
        /// The attribute (`src`, `dst`, `gw_src`, `gw_dst`, `id`).
        attribute: &'static str,
        /// The id given.
        id: String,
        /// What was looked for and where.
        expected: String,
    },
    /// The platform read is invalid as a model (e.g. no host at all).
    Platform(PlatformError),
}

impl fmt::Display for SimgridError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use SimgridError::*;
        match self {
            Xml {
                line,
                column,
                message,
            } => write!(f, "line {line}, column {column}: not well-formed XML: {message}"),
            Version { line, found } => write!(
                f,
                "line {line}: expected <platform version=\"4.1\"> (SimGrid platform version 4), found {found}"
            ),
            MissingAttribute {
                line,
                element,
                attribute,
            } => write!(f, "line {line}: <{element}> lacks the attribute `{attribute}`"),
            BadValue {
                line,
                element,
                attribute,
                value,
                reason,
            } => write!(
                f,
                "line {line}: <{element}> attribute `{attribute}` = {value:?}: {reason}"
            ),
            Unsupported {
                line,
                element,
                what,
            } => write!(f, "line {line}: <{element}>: {what}"),
            DuplicateId {
                line,
                kind,
                id,
                first_line,
            } => write!(
                f,
                "line {line}: {kind} id {id:?} already declared at line {first_line}"
            ),
            UnknownReference {
                line,
                element,
                attribute,
                id,
                expected,
            } => write!(
                f,
                "line {line}: <{element}> attribute `{attribute}` = {id:?}: {expected}"
            ),
            Platform(e) => write!(f, "invalid platform: {e}"),
        }
    }
}

impl std::error::Error for SimgridError {}

/// The reader's results.
pub(super) type Result<T> = std::result::Result<T, SimgridError>;
