//! The result file (`-o`): opened before anything is read, so a path that
//! cannot be written fails at once instead of after the whole run.

use crate::error::{Error, Result};
use crate::report::{write_report, OutputFormat, Precision, QualitySize, Report};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

pub struct ResultFile {
    path: PathBuf,
    /// `None`: standard output (`-`).
    file: Option<File>,
    /// The file did not exist before: removed again if nothing is written.
    created: bool,
    written: bool,
}

impl ResultFile {
    /// Opens `path` for writing without truncating it (a failed run leaves
    /// an existing file as it was); `-` is standard output.
    pub fn open(path: &Path) -> Result<Self> {
        let mut result = Self {
            path: path.to_path_buf(),
            file: None,
            created: false,
            written: false,
        };
        if path.as_os_str() != "-" {
            result.created = std::fs::symlink_metadata(path).is_err();
            let file = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)
                .map_err(|e| Error::io(path, e))?;
            result.file = Some(file);
        }
        Ok(result)
    }

    /// Writes the report, replacing what the file held.
    pub fn write(
        mut self,
        report: &Report,
        format: OutputFormat,
        precision: Precision,
        size: QualitySize,
    ) -> Result<()> {
        let path = self.path.clone();
        let io = |e| Error::io(&path, e);
        match &self.file {
            None => {
                let stdout = std::io::stdout();
                let mut out = stdout.lock();
                write_report(report, format, precision, size, &mut out).map_err(io)?;
                out.flush().map_err(io)?;
            }
            Some(file) => {
                // Only a regular file has a length to cut (not /dev/stdout).
                if file.metadata().map_err(io)?.is_file() {
                    file.set_len(0).map_err(io)?;
                }
                let mut out = std::io::BufWriter::new(file);
                write_report(report, format, precision, size, &mut out).map_err(io)?;
                out.flush().map_err(io)?;
            }
        }
        self.written = true;
        Ok(())
    }
}

impl Drop for ResultFile {
    fn drop(&mut self) {
        if self.created && !self.written {
            // Best effort: the run's own error is what gets reported.
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
