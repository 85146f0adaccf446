//! SimGrid quantities with units: speeds (`1Gf`), bandwidths (`125MBps`) and
//! latencies (`50us`), as in SimGrid's platform files (feature `simgrid`).

use std::fmt;

/// The kind of quantity a value holds, which sets the units accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// Computing speed, flop/s: `f`, `kf`, `Mf`, `Gf`, `Tf`, `Pf`, `Ef`, `Zf`, `Yf`
    /// (powers of 1000) and `flops`, `kiloflops`, ..., `yottaflops`.
    Speed,
    /// Bandwidth, bytes/s: `Bps`, `kBps`, `MBps`, ... (powers of 1000), `KiBps`,
    /// `MiBps`, ... (powers of 1024), and the bit variants `bps`, `kbps`, `Mbps`,
    /// `Kibps`, ... (1 B = 8 b).
    Bandwidth,
    /// Time, seconds: `s`, `ms`, `us`, `ns`, `ps`, `m`, `h`, `d`, `w`.
    Time,
}

/// Why a value with a unit could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnitError {
    /// The value does not start with a number.
    NotANumber,
    /// The number is followed by a unit that does not fit the quantity.
    UnknownUnit {
        /// The unit found.
        unit: String,
    },
    /// The value is negative, infinite or NaN.
    OutOfRange,
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnitError::NotANumber => f.write_str("does not start with a number"),
            UnitError::UnknownUnit { unit } => write!(f, "unknown unit {unit:?}"),
            UnitError::OutOfRange => f.write_str("must be finite and >= 0"),
        }
    }
}

impl std::error::Error for UnitError {}

const DECIMAL: [(&str, f64); 9] = [
    ("", 1.0),
    ("k", 1e3),
    ("M", 1e6),
    ("G", 1e9),
    ("T", 1e12),
    ("P", 1e15),
    ("E", 1e18),
    ("Z", 1e21),
    ("Y", 1e24),
];
const BINARY: [(&str, f64); 8] = [
    ("Ki", 1024.0),
    ("Mi", 1048576.0),
    ("Gi", 1073741824.0),
    ("Ti", 1099511627776.0),
    ("Pi", 1125899906842624.0),
    ("Ei", 1152921504606846976.0),
    ("Zi", 1.1805916207174113e21),
    ("Yi", 1.2089258196146292e24),
];
const LONG: [(&str, f64); 9] = [
    ("", 1.0),
    ("kilo", 1e3),
    ("mega", 1e6),
    ("giga", 1e9),
    ("tera", 1e12),
    ("peta", 1e15),
    ("exa", 1e18),
    ("zetta", 1e21),
    ("yotta", 1e24),
];

/// The factor of a unit; a negative number `-d` means "divide by d", so that
/// `100us` is exactly `100 / 1e6` (the correctly rounded 1e-4).
fn factor(quantity: Quantity, unit: &str) -> Option<f64> {
    if unit.is_empty() {
        return Some(1.0);
    }
    match quantity {
        Quantity::Speed => {
            for (prefix, f) in DECIMAL {
                if unit.strip_prefix(prefix) == Some("f") {
                    return Some(f);
                }
            }
            for (prefix, f) in LONG {
                if unit.strip_prefix(prefix) == Some("flops") {
                    return Some(f);
                }
            }
            None
        }
        Quantity::Bandwidth => {
            let (prefix, per_byte) = if let Some(p) = unit.strip_suffix("Bps") {
                (p, 1.0)
            } else if let Some(p) = unit.strip_suffix("bps") {
                (p, 0.125)
            } else {
                return None;
            };
            DECIMAL
                .iter()
                .chain(BINARY.iter())
                .find(|(name, _)| *name == prefix)
                .map(|(_, f)| f * per_byte)
        }
        Quantity::Time => match unit {
            "s" => Some(1.0),
            "ms" => Some(-1e3),
            "us" => Some(-1e6),
            "ns" => Some(-1e9),
            "ps" => Some(-1e12),
            "m" => Some(60.0),
            "h" => Some(3600.0),
            "d" => Some(86400.0),
            "w" => Some(604800.0),
            _ => None,
        },
    }
}

/// Reads a SimGrid value such as `98.095Mf`, `1.25E9Bps` or `59.904us` into the base
/// unit of its quantity (flop/s, bytes/s, seconds). A number without a unit is taken
/// in the base unit, as SimGrid does (with a warning there).
///
/// # Errors
/// [`UnitError::NotANumber`], [`UnitError::UnknownUnit`] (a unit of another
/// quantity, or none known), [`UnitError::OutOfRange`] (negative or not finite).
///
/// Complexity: O(length of the text).
///
/// ```
/// use hetbal::platform::units::{parse, Quantity, UnitError};
/// assert_eq!(parse("1Gf", Quantity::Speed), Ok(1e9));
/// assert_eq!(parse("125MBps", Quantity::Bandwidth), Ok(1.25e8));
/// assert_eq!(parse("8Mbps", Quantity::Bandwidth), Ok(1e6));
/// assert_eq!(parse("50us", Quantity::Time), Ok(5e-5));
/// assert_eq!(parse("0", Quantity::Time), Ok(0.0));
/// assert!(matches!(parse("50parsec", Quantity::Time), Err(UnitError::UnknownUnit { .. })));
/// ```
pub fn parse(text: &str, quantity: Quantity) -> Result<f64, UnitError> {
    let t = text.trim();
    // The longest prefix that is a number: digits, sign, point, exponent.
    let bytes = t.as_bytes();
    let mut end = 0;
    let mut seen_digit = false;
    let mut seen_exp = false;
    let mut seen_point = false;
    while end < bytes.len() {
        let b = bytes[end];
        match b {
            b'0'..=b'9' => seen_digit = true,
            b'+' | b'-' if end == 0 => {}
            b'+' | b'-' if seen_exp && matches!(bytes[end - 1], b'e' | b'E') => {}
            b'.' if !seen_point && !seen_exp => seen_point = true,
            b'e' | b'E' if seen_digit && !seen_exp => {
                // Only an exponent when digits follow (`1E9Bps`), not `1Ef`/`1EBps`.
                let rest = &bytes[end + 1..];
                let rest = rest
                    .strip_prefix(b"+")
                    .or_else(|| rest.strip_prefix(b"-"))
                    .unwrap_or(rest);
                if rest.first().is_some_and(u8::is_ascii_digit) {
                    seen_exp = true;
                } else {
                    break;
                }
            }
            _ => break,
        }
        end += 1;
    }
    if !seen_digit {
        return Err(UnitError::NotANumber);
    }
    let value: f64 = t[..end].parse().map_err(|_| UnitError::NotANumber)?;
    let unit = &t[end..];
    let f = factor(quantity, unit).ok_or_else(|| UnitError::UnknownUnit {
        unit: unit.to_string(),
    })?;
    let v = if f < 0.0 { value / -f } else { value * f };
    if !(v.is_finite() && v >= 0.0) {
        return Err(UnitError::OutOfRange);
    }
    Ok(v)
}
