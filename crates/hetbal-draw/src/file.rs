//! A chart's file, opened before the work it pictures.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// A chart's file, opened (and so checked writable) before any work, so that an
/// unwritable path is refused before anything is printed or moved. Removed
/// again when dropped unwritten if it did not exist before.
///
/// # Example
/// ```
/// let path = std::env::temp_dir().join("hetbal-draw-doc-chart.svg");
/// let file = hetbal_draw::ChartFile::create(&path)?;   // fails here if unwritable
/// file.write("<svg/>")?;
/// assert_eq!(std::fs::read_to_string(&path)?, "<svg/>");
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct ChartFile {
    path: PathBuf,
    file: Option<File>,
    created: bool,
}

impl ChartFile {
    /// Opens (or creates) `path` for writing, without truncating it yet.
    ///
    /// # Errors
    /// The system's, when the file cannot be opened for writing.
    pub fn create(path: &Path) -> std::io::Result<ChartFile> {
        let created = !path.exists();
        let file = File::options()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        Ok(ChartFile {
            path: path.to_path_buf(),
            file: Some(file),
            created,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Replaces the file's content with `svg` (or any text).
    ///
    /// # Errors
    /// The system's, when writing fails.
    pub fn write(mut self, svg: &str) -> std::io::Result<()> {
        let file = self.file.take().expect("a ChartFile is written once");
        file.set_len(0)?;
        (&file).write_all(svg.as_bytes())
    }
}

impl Drop for ChartFile {
    fn drop(&mut self) {
        if self.file.take().is_some() && self.created {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
