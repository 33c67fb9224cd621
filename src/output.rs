//! Writing outputs without losing what the user had: every file is written to a
//! temporary file in its directory and renamed into place.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Write `path` through `fill`, atomically (temporary file + rename); the directory is
/// created when missing and the file ends up readable like any other output (0644).
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut std::fs::File) -> Result<()>,
) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::file(path.display(), format!("cannot create directory: {e}")))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| Error::file(path.display(), format!("cannot create temporary file: {e}")))?;
    fill(tmp.as_file_mut())?;
    tmp.flush()
        .map_err(|e| Error::file(path.display(), format!("cannot write: {e}")))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(|e| Error::file(path.display(), format!("cannot set permissions: {e}")))?;
    }
    tmp.persist(path)
        .map_err(|e| Error::file(path.display(), format!("cannot write: {}", e.error)))?;
    Ok(())
}

/// Write text to `path` atomically.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    write_atomic_with(path, |f| {
        f.write_all(text.as_bytes())
            .map_err(|e| Error::file(path.display(), format!("cannot write: {e}")))
    })
}
