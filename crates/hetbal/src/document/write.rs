//! Writing documents: JSON laid out for people and for size (a row per entry of
//! the documents' lists), the same from every binary and binding.

use std::io::Write;

use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter};

/// Writes `value` as JSON laid out as `serde_json::to_writer_pretty` does, down to
/// the rows of the document's lists: an object inside a list inside the document
/// (a transfer, a flow, a message) is written on one line,
/// `{"from": 0, "to": 1, "items": 3, ...}`. A plan of millions of transfers is then
/// a line per transfer, about half the bytes of the fully indented document; any
/// JSON parser reads the same values. The `hetbal` command and the bindings'
/// `to_json` write plans this way, so their documents are the same bytes.
///
/// # Errors
/// Those of `serde_json` (the writer's I/O errors, a map with non-string keys).
///
/// # Complexity
/// O(size of the document).
///
/// # Example
/// ```
/// let plan = serde_json::json!({"makespan": 2.0, "transfers": [{"from": 0, "to": 1}]});
/// let text = hetbal::document::to_json(&plan).unwrap();
/// assert_eq!(text, "{\n  \"makespan\": 2.0,\n  \"transfers\": [\n    {\"from\": 0, \"to\": 1}\n  ]\n}");
/// ```
pub fn write_json<W: Write>(writer: W, value: &impl Serialize) -> Result<(), serde_json::Error> {
    let mut serializer = serde_json::Serializer::with_formatter(writer, Rows::default());
    value.serialize(&mut serializer)
}

/// [`write_json`] into a string.
///
/// # Errors
/// As [`write_json`] (never an I/O error).
///
/// # Complexity
/// O(size of the document).
pub fn to_json(value: &impl Serialize) -> Result<String, serde_json::Error> {
    let mut out = Vec::new();
    write_json(&mut out, value)?;
    Ok(String::from_utf8(out).expect("serde_json writes UTF-8"))
}

/// The formatter of [`write_json`].
#[derive(Default)]
struct Rows {
    pretty: PrettyFormatter<'static>,
    /// Containers open (the document is depth 1).
    depth: usize,
    /// The depth of the object being written on one line, if any.
    row: Option<usize>,
}

impl Rows {
    /// Whether the container being written is inside a row.
    fn in_row(&self) -> bool {
        self.row.is_some()
    }

    /// Closes a container.
    fn leave(&mut self) {
        if self.row == Some(self.depth) {
            self.row = None;
        }
        self.depth -= 1;
    }

    /// Writes `row` inside a row, else what the pretty formatter writes.
    fn either<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        row: &[u8],
        pretty: impl FnOnce(&mut PrettyFormatter<'static>, &mut W) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        if self.in_row() {
            w.write_all(row)
        } else {
            pretty(&mut self.pretty, w)
        }
    }
}

/// A separator inside a row: none before the first entry.
fn separator(first: bool) -> &'static [u8] {
    if first {
        b""
    } else {
        b", "
    }
}

impl Formatter for Rows {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth += 1;
        self.either(w, b"[", |p, w| p.begin_array(w))
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        let written = self.either(w, b"]", |p, w| p.end_array(w));
        self.leave();
        written
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.either(w, separator(first), |p, w| p.begin_array_value(w, first))
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.either(w, b"", |p, w| p.end_array_value(w))
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth += 1;
        if self.row.is_none() && self.depth >= 3 {
            self.row = Some(self.depth);
        }
        self.either(w, b"{", |p, w| p.begin_object(w))
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        let written = self.either(w, b"}", |p, w| p.end_object(w));
        self.leave();
        written
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.either(w, separator(first), |p, w| p.begin_object_key(w, first))
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.either(w, b": ", |p, w| p.begin_object_value(w))
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.either(w, b"", |p, w| p.end_object_value(w))
    }
}

#[cfg(test)]
mod tests {
    use super::Rows;
    use serde::Serialize;

    fn rows(value: &serde_json::Value) -> String {
        let mut out = Vec::new();
        let mut serializer = serde_json::Serializer::with_formatter(&mut out, Rows::default());
        value.serialize(&mut serializer).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Objects in the document's arrays are one line each; everything above
    /// them is indented as `to_string_pretty` does; the JSON is the same.
    #[test]
    fn rows_are_one_line_each_and_the_json_is_unchanged() {
        let value = serde_json::json!({
            "algorithm": "x",
            "cuts": [0, 7, 14],
            "empty": [],
            "nested": {"a": [1, 2], "b": {"c": 1}},
            "transfers": [
                {"from": 0, "to": 1, "items": 3, "start": 0.0, "end": 3.0, "deep": {"k": [1, {"z": []}]}},
                {"from": 1, "to": 2, "items": 1, "start": 1.5, "end": 2.5}
            ],
            "matrix": [[1, 2], [3]]
        });
        let text = rows(&value);
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            value
        );
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        // Above the rows, the layout is the pretty one.
        assert!(text.starts_with("{\n  \"algorithm\": \"x\",\n  \"cuts\": [\n    0,\n    7,\n    14\n  ],\n  \"empty\": [],\n"));
        // (serde_json's maps sort their keys.)
        assert!(text.contains("\n    {\"deep\": {\"k\": [1, {\"z\": []}]}, \"end\": 3.0, \"from\": 0, \"items\": 3, \"start\": 0.0, \"to\": 1},\n"), "{text}");
        assert!(
            text.contains(
                "\n    {\"end\": 2.5, \"from\": 1, \"items\": 1, \"start\": 1.5, \"to\": 2}\n  ]\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "\"matrix\": [\n    [\n      1,\n      2\n    ],\n    [\n      3\n    ]\n  ],"
            ),
            "{text}"
        );
        assert!(text.contains("\"nested\": {\n    \"a\": [\n      1,\n      2\n    ],\n    \"b\": {\"c\": 1}\n  },"), "{text}");
        assert!(text.len() < pretty.len());
    }
}
