//! What the targets share: a private scratch folder for files that the
//! readers open by path.

use std::path::PathBuf;

/// `name` in this process's scratch folder (made on first use).
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vmafx-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir.join(name)
}
