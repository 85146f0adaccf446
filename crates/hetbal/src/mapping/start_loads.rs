//! Where the items of a mapped ring are before it is balanced: the start loads
//! a user gives as text (`hetbal map --start-loads`), read into one count per
//! processor of the platform.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use crate::platform::Platform;

/// Why a text of start loads cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StartLoadsError {
    /// The text starts like JSON (`{` or `[`) and is not valid JSON.
    InvalidJson {
        /// The JSON reader's message.
        reason: String,
    },
    /// No entry at all.
    Empty,
    /// Plain counts, not one per processor of the platform.
    WrongCount {
        /// Counts given.
        given: usize,
        /// Processors of the platform.
        processors: usize,
    },
    /// `NAME=N` entries mixed with plain counts.
    MixedForms,
    /// A name that no processor of the platform has.
    UnknownProcessor {
        /// The name.
        name: String,
    },
    /// A processor given twice.
    Repeated {
        /// The processor's name.
        name: String,
    },
    /// A count that is not a whole number >= 0.
    NotACount {
        /// The processor's name.
        name: String,
        /// The value as given: JSON values as JSON, list entries quoted.
        value: String,
    },
    /// The counts add up to more items than a u64 counts.
    TooManyItems {
        /// Their sum.
        total: u128,
    },
}

impl fmt::Display for StartLoadsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use StartLoadsError::*;
        match self {
            InvalidJson { reason } => write!(f, "not valid JSON: {reason}"),
            Empty => f.write_str(
                "no loads given: expected NAME=N,... or N,N,... (one per processor)",
            ),
            WrongCount { given, processors } => write!(
                f,
                "{given} counts for {processors} processors: give one per processor, in the platform's order, or NAME=N pairs"
            ),
            MixedForms => f.write_str("mixes NAME=N entries with plain counts: use one form"),
            UnknownProcessor { name } => {
                write!(f, "{name:?} is not a processor of the platform")
            }
            Repeated { name } => write!(f, "{name:?} is given twice"),
            NotACount { name, value } => {
                write!(f, "{name}: {value} is not a whole number >= 0")
            }
            TooManyItems { total } => write!(
                f,
                "the counts add up to {total} items, more than a u64 counts ({})",
                u64::MAX
            ),
        }
    }
}

impl std::error::Error for StartLoadsError {}

/// A JSON object's entries in the order written, a repeated key kept (a
/// `serde_json` map keeps only its last value).
struct Entries(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Each;
        impl<'de> Visitor<'de> for Each {
            type Value = Entries;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object of counts by processor name")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(Each)
    }
}

/// Reads start loads: how many items each processor of `platform` holds.
///
/// `text` is a list, `NAME=N,NAME=N,...` (processors not named hold none) or
/// `N,N,...` (one count per processor, in the platform's order), entries
/// separated by commas or white space; or JSON: an object `{"NAME": N, ...}` or
/// an array `[N, ...]`.
///
/// # Returns
/// One count per processor of the platform, in the platform's order.
///
/// # Errors
/// [`StartLoadsError`]: JSON that is not valid, no
/// entry, plain counts not one per processor, the two forms mixed, an unknown or
/// repeated name, a count that is not a whole number >= 0 (the first of these,
/// entries taken in order); counts that add up to more than a u64 counts.
///
/// Complexity: O(text length + processors).
///
/// ```
/// use hetbal::mapping::{parse_start_loads, StartLoadsError};
/// use hetbal::platform::{Platform, Processor};
/// let p = Platform::from_matrix(vec![Processor::new("A", 1.0), Processor::new("B", 1.0)],
///                               vec![vec![0.0, 1.0], vec![1.0, 0.0]]).unwrap();
/// assert_eq!(parse_start_loads(&p, "B=3").unwrap(), vec![0, 3]);
/// assert_eq!(parse_start_loads(&p, "1 2").unwrap(), vec![1, 2]);
/// assert_eq!(parse_start_loads(&p, r#"{"A": 4}"#).unwrap(), vec![4, 0]);
/// assert_eq!(parse_start_loads(&p, "1"), Err(StartLoadsError::WrongCount { given: 1, processors: 2 }));
/// ```
pub fn parse_start_loads(platform: &Platform, text: &str) -> Result<Vec<u64>, StartLoadsError> {
    let text = text.trim();
    // (name if given, count or the text that is not one), in the order given.
    let entries: Vec<(Option<String>, Result<u64, String>)> = if text.starts_with(['{', '[']) {
        let count = |v: &Value| v.as_u64().ok_or_else(|| v.to_string());
        let invalid = |e: serde_json::Error| StartLoadsError::InvalidJson {
            reason: e.to_string(),
        };
        if text.starts_with('{') {
            let Entries(entries) = serde_json::from_str(text).map_err(invalid)?;
            entries
                .into_iter()
                .map(|(k, v)| (Some(k), count(&v)))
                .collect()
        } else {
            let list: Vec<Value> = serde_json::from_str(text).map_err(invalid)?;
            list.iter().map(|v| (None, count(v))).collect()
        }
    } else {
        text.split(|c: char| c == ',' || c.is_whitespace())
            .filter(|e| !e.is_empty())
            .map(|e| {
                let (name, n) = match e.split_once('=') {
                    Some((name, n)) => (Some(name.trim().to_string()), n),
                    None => (None, e),
                };
                (name, n.trim().parse().map_err(|_| format!("{n:?}")))
            })
            .collect()
    };
    if entries.is_empty() {
        return Err(StartLoadsError::Empty);
    }
    let p = platform.len();
    let named = entries.iter().filter(|(name, _)| name.is_some()).count();
    if named == 0 && entries.len() != p {
        return Err(StartLoadsError::WrongCount {
            given: entries.len(),
            processors: p,
        });
    }
    if named != 0 && named != entries.len() {
        return Err(StartLoadsError::MixedForms);
    }
    let (mut loads, mut seen) = (vec![0u64; p], vec![false; p]);
    for (k, (name, count)) in entries.into_iter().enumerate() {
        let i = match name {
            None => k,
            Some(ref name) => platform
                .index_of(name)
                .ok_or_else(|| StartLoadsError::UnknownProcessor { name: name.clone() })?,
        };
        let name = name.unwrap_or_else(|| platform.name(i).to_string());
        if std::mem::replace(&mut seen[i], true) {
            return Err(StartLoadsError::Repeated { name });
        }
        loads[i] = count.map_err(|value| StartLoadsError::NotACount { name, value })?;
    }
    let total: u128 = loads.iter().map(|&x| u128::from(x)).sum();
    if u64::try_from(total).is_err() {
        return Err(StartLoadsError::TooManyItems { total });
    }
    Ok(loads)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Processor;

    fn platform() -> Platform {
        let names = ["A", "B", "C"];
        let processors = names.iter().map(|n| Processor::new(*n, 1.0)).collect();
        let c = (0..3)
            .map(|i| (0..3).map(|j| if i == j { 0.0 } else { 1.0 }).collect())
            .collect();
        Platform::from_matrix(processors, c).unwrap()
    }

    #[test]
    fn every_form_reads_the_same_loads() {
        let p = platform();
        for text in [
            "A=1,B=0,C=5",
            "C=5, A=1",
            " 1 0\n5 ",
            "1,0,5",
            r#"{"C": 5, "A": 1}"#,
            "[1, 0, 5]",
        ] {
            assert_eq!(
                parse_start_loads(&p, text).unwrap(),
                vec![1, 0, 5],
                "{text}"
            );
        }
    }

    #[test]
    fn every_error_says_what_is_wrong() {
        use StartLoadsError::*;
        let p = platform();
        let error = |text: &str| parse_start_loads(&p, text).unwrap_err();
        let cases: [(&str, StartLoadsError, &str); 14] = [
            ("[1,2", InvalidJson { reason: "EOF while parsing a list at line 1 column 4".into() }, "not valid JSON: EOF while parsing a list at line 1 column 4"),
            ("{\"A\": 1,}", InvalidJson { reason: "trailing comma at line 1 column 9".into() }, "not valid JSON: trailing comma at line 1 column 9"),
            ("", Empty, "no loads given: expected NAME=N,... or N,N,... (one per processor)"),
            (", ,", Empty, "no loads given: expected NAME=N,... or N,N,... (one per processor)"),
            ("[]", Empty, "no loads given: expected NAME=N,... or N,N,... (one per processor)"),
            ("1,2", WrongCount { given: 2, processors: 3 }, "2 counts for 3 processors: give one per processor, in the platform's order, or NAME=N pairs"),
            ("A=1,2", MixedForms, "mixes NAME=N entries with plain counts: use one form"),
            ("A=1,Z=2", UnknownProcessor { name: "Z".into() }, "\"Z\" is not a processor of the platform"),
            ("A=1,A=2", Repeated { name: "A".into() }, "\"A\" is given twice"),
            ("{\"A\": 5, \"A\": 3}", Repeated { name: "A".into() }, "\"A\" is given twice"),
            ("18446744073709551615,1,0", TooManyItems { total: 1 << 64 }, "the counts add up to 18446744073709551616 items, more than a u64 counts (18446744073709551615)"),
            ("A=x", NotACount { name: "A".into(), value: "\"x\"".into() }, "A: \"x\" is not a whole number >= 0"),
            ("[1, -2, 3]", NotACount { name: "B".into(), value: "-2".into() }, "B: -2 is not a whole number >= 0"),
            ("{\"C\": 1.5}", NotACount { name: "C".into(), value: "1.5".into() }, "C: 1.5 is not a whole number >= 0"),
        ];
        for (text, expected, message) in cases {
            let e = error(text);
            assert_eq!(e, expected, "{text}");
            assert_eq!(e.to_string(), message, "{text}");
        }
    }

    #[test]
    fn only_bracketed_text_is_json() {
        // A JSON number or string does not start with `{` or `[`: it is read as a
        // list.
        let p = platform();
        assert_eq!(parse_start_loads(&p, "{\"A\": 1} ").unwrap(), vec![1, 0, 0]);
        assert_eq!(
            parse_start_loads(&p, "\"x\"").unwrap_err(),
            StartLoadsError::WrongCount {
                given: 1,
                processors: 3
            }
        );
    }
}
