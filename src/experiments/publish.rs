//! `reproduce --out`: the manifest of what `reproduce` wrote there, and moving a run's
//! files into place.
//!
//! The manifest ([`MANIFEST`]) is gpucast's own: a regular file (a link, a directory,
//! a pipe there is an error before any work) listing each file `reproduce` wrote in
//! `--out` by its SHA-256 and its path relative to `--out`. A later run replaces a
//! file only when the manifest lists it and its content still has that hash, so a file
//! the user wrote or edited since, a line added by hand, a line of an older gpucast
//! without a hash, and a link are the user's. Every entry is a plain path inside
//! `--out` (no `..`, not absolute, not through a link). The manifest is written last,
//! in one step (a rename of a finished temporary; when there was none, a link that
//! refuses to replace one that appeared meanwhile).

use crate::error::{Error, Position, Result};
use crate::files::{self, Staging, Temporary};
use std::path::{Component, Path, PathBuf};

/// The file in an output directory that lists what `reproduce` wrote there.
pub const MANIFEST: &str = ".gpucast-reproduce";

/// The manifest's first line.
const HEADER: &str =
    "# gpucast reproduce: the files it wrote here (SHA-256, path); it replaces only these, unchanged";

/// The most a manifest may hold (a list of a few hundred lines is a few tens of KB).
const MAX_BYTES: u64 = 16 << 20;

/// A line of the manifest.
struct Entry {
    /// The content's SHA-256 (lower-case hex); None on a line of an older gpucast.
    hash: Option<String>,
    path: PathBuf,
}

/// An output directory's manifest as read.
pub(super) struct Manifest {
    entries: Vec<Entry>,
    /// Whether there was one.
    existed: bool,
}

/// SHA-256 of `bytes` in lower-case hex.
fn sha256(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What a directory entry that is not a regular file is, in words.
fn kind_of(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a pipe"
    } else {
        "a special file"
    }
}

/// The first component of `rel` below `out` that is a symbolic link, if any (`rel`
/// itself included).
fn link_on_the_way(out: &Path, rel: &Path) -> Option<PathBuf> {
    let mut at = PathBuf::new();
    for c in rel.components() {
        at.push(c);
        match std::fs::symlink_metadata(out.join(&at)) {
            Ok(m) if m.file_type().is_symlink() => return Some(at),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
}

/// Whether `rel` is a path `reproduce` may write inside `--out`: relative, of plain
/// names only, not the manifest nor a temporary.
fn plain_inside(rel: &Path) -> bool {
    let first = rel.components().next();
    rel.components().all(|c| matches!(c, Component::Normal(_)))
        && first.is_some()
        && rel != Path::new(MANIFEST)
        && !rel.to_string_lossy().starts_with(".gpucast-tmp-")
}

/// Read and check `out`'s manifest: none (no `out` or no manifest), or a regular file
/// of plain entries inside `out`, none through a link.
pub(super) fn read_manifest(out: &Path) -> Result<Manifest> {
    let path = out.join(MANIFEST);
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Manifest {
                entries: Vec::new(),
                existed: false,
            })
        }
        Err(e) => return Err(Error::io_error(path.display(), "cannot read", e)),
    };
    let not_ours = |kind: &str| {
        Error::refused(
            path.display(),
            format!("is {kind}, not the list gpucast reproduce keeps of its files: remove it, or give another --out"),
        )
    };
    if !meta.is_file() {
        return Err(not_ours(kind_of(&meta.file_type())));
    }
    if meta.len() > MAX_BYTES {
        return Err(not_ours("larger than any list gpucast reproduce writes"));
    }
    let text = read_no_follow(&path).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => not_ours("a symbolic link"),
        _ => Error::io_error(path.display(), "cannot read", e),
    })?;
    let text = String::from_utf8(text).map_err(|e| {
        Error::parse_file(
            path.display(),
            format!(
                "not text (byte {}): not the list gpucast reproduce keeps of its files; remove it, or give another --out",
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: String| {
            Error::parse(
                path.display(),
                Position::Line(i + 1),
                None,
                format!("{why}: the manifest lists only files gpucast reproduce wrote inside --out; remove the line"),
            )
        };
        let (hash, name) = match line.split_once("  ") {
            Some((h, p)) if h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()) => {
                (Some(h.to_ascii_lowercase()), p)
            }
            _ => (None, line),
        };
        let rel = PathBuf::from(name);
        if !plain_inside(&rel) {
            return Err(bad(format!(
                "'{name}' is not a file reproduce writes inside --out (a path outside it, with '..', absolute, or its own)"
            )));
        }
        if let Some(link) = link_on_the_way(out, &rel) {
            return Err(bad(if link == rel {
                format!("'{name}' is a symbolic link (reproduce never writes through a link)")
            } else {
                format!(
                    "'{name}' leads through the symbolic link '{}' (reproduce never writes through a link)",
                    link.display()
                )
            }));
        }
        entries.push(Entry { hash, path: rel });
    }
    Ok(Manifest {
        entries,
        existed: true,
    })
}

/// The bytes of the regular file `path`, opened without following a link at it and
/// without waiting (a pipe put there meanwhile is not a regular file: refused).
fn read_no_follow(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Why the existing `dest` (at `rel` in `out`) is not one `reproduce` may replace, or
/// None when the manifest lists it with the hash of its content.
fn not_replaceable(out: &Path, rel: &Path, manifest: &Manifest) -> Result<Option<String>> {
    let dest = out.join(rel);
    if let Some(link) = link_on_the_way(out, rel) {
        return Ok(Some(format!(
            "leads through the symbolic link {} (reproduce never writes through a link)",
            out.join(link).display()
        )));
    }
    let meta = match std::fs::symlink_metadata(&dest) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io_error(dest.display(), "cannot read", e)),
    };
    if !meta.is_file() {
        return Ok(Some(format!(
            "is {}, not a file gpucast reproduce wrote",
            kind_of(&meta.file_type())
        )));
    }
    let Some(entry) = manifest.entries.iter().find(|e| e.path == rel) else {
        return Ok(Some("was not written by gpucast reproduce".into()));
    };
    let Some(hash) = &entry.hash else {
        return Ok(Some(
            "is listed by an older gpucast without its content, so it cannot be told from a file of yours (check it, then remove it)"
                .into(),
        ));
    };
    let now =
        read_no_follow(&dest).map_err(|e| Error::io_error(dest.display(), "cannot read", e))?;
    if sha256(&now) != *hash {
        return Ok(Some(
            "was changed since gpucast reproduce wrote it (or its line in the manifest was)".into(),
        ));
    }
    Ok(None)
}

/// Move the staged `files` into `out`, each by a rename, and list them in its
/// [`MANIFEST`], written last. Every other file in `out` is left alone; a file the
/// run would replace that an earlier `reproduce` did not write as it is now stops it
/// before anything moves.
pub(super) fn publish(staging: &Staging, out: &Path, files: &[PathBuf]) -> Result<()> {
    let mut names = std::collections::HashSet::new();
    if let Some(twice) = files.iter().find(|f| !names.insert(*f)) {
        return Err(Error::refused(
            staging.destination(twice).display(),
            "two outputs of this run have this name (an experiment's name and another's outputs): rename one",
        ));
    }
    let manifest = read_manifest(out)?;
    let rel: Vec<PathBuf> = files
        .iter()
        .map(|f| {
            staging
                .destination(f)
                .strip_prefix(out)
                .map(Path::to_path_buf)
                .unwrap_or_else(|_| f.clone())
        })
        .collect();
    let mut refused = Vec::new();
    for r in &rel {
        if let Some(why) = not_replaceable(out, r, &manifest)? {
            refused.push((r, why));
        }
    }
    if let Some((first, why)) = refused.first() {
        let more = match refused.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        return Err(Error::refused(
            out.join(first).display(),
            format!("exists and {why}{more}: move it, or give another --out"),
        ));
    }
    // (a file an earlier run wrote may be replaced, unless this run reads it)
    for r in &rel {
        let dest = out.join(r);
        if std::fs::symlink_metadata(&dest).is_ok() {
            files::note_replaceable(&dest);
            files::check_output(&dest, &[])?;
        }
    }
    let manifest_path = out.join(MANIFEST);
    files::note_replaceable(&manifest_path);
    files::check_output(&manifest_path, &[])?;
    let text = manifest_text(out, &rel, files, &manifest)?;
    let (tmp, mut f) = Temporary::file_in(out, "")
        .map_err(|e| Error::io_error(out.display(), "cannot create a temporary file", e))?;
    {
        use std::io::Write;
        use std::os::unix::fs::PermissionsExt;
        let write_err = |e| Error::io_error(manifest_path.display(), "cannot write", e);
        f.write_all(text.as_bytes()).map_err(write_err)?;
        f.set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(write_err)?;
    }
    files::uninterrupted(|| {
        for (staged, r) in files.iter().zip(&rel) {
            let dest = out.join(r);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| Error::io_error(parent.display(), "cannot create", e))?;
            }
            std::fs::rename(staged, &dest)
                .map_err(|e| Error::io_error(dest.display(), "cannot write", e))?;
        }
        put_manifest(tmp.path(), &manifest_path, manifest.existed)
    })
}

/// The new manifest: each file of this run with the hash of what it wrote, and each
/// file an earlier run listed that is still there as it wrote it.
fn manifest_text(
    out: &Path,
    rel: &[PathBuf],
    staged: &[PathBuf],
    old: &Manifest,
) -> Result<String> {
    let mut lines: Vec<(PathBuf, String)> = Vec::new();
    for (r, s) in rel.iter().zip(staged) {
        let bytes = std::fs::read(s).map_err(|e| Error::io_error(s.display(), "cannot read", e))?;
        lines.push((r.clone(), sha256(&bytes)));
    }
    for e in &old.entries {
        if rel.contains(&e.path) {
            continue;
        }
        if e.hash.is_some() && not_replaceable(out, &e.path, old)?.is_none() {
            let dest = out.join(&e.path);
            if dest.is_file() {
                lines.push((e.path.clone(), e.hash.clone().unwrap_or_default()));
            }
        }
    }
    lines.sort();
    lines.dedup_by(|a, b| a.0 == b.0);
    let mut text = format!("{HEADER}\n");
    for (p, h) in lines {
        text += &format!("{h}  {}\n", p.display());
    }
    Ok(text)
}

/// Put the finished manifest `tmp` in place at `path`: over the one there (still a
/// regular file), or, when there was none, where none has appeared meanwhile.
fn put_manifest(tmp: &Path, path: &Path, existed: bool) -> Result<()> {
    if existed {
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_file() => {}
            _ => {
                return Err(Error::refused(
                    path.display(),
                    "was replaced while gpucast reproduce ran: the run's files are in place, its list is not; check the directory",
                ))
            }
        }
        std::fs::rename(tmp, path).map_err(|e| Error::io_error(path.display(), "cannot write", e))
    } else {
        std::fs::hard_link(tmp, path).map_err(|e| {
            Error::io_error(
                path.display(),
                "cannot write (one appeared while gpucast reproduce ran)",
                e,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn manifest_entries_are_plain_paths_inside_out() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        let h = sha256(b"x");
        for (line, fragment) in [
            (
                format!("{h}  ../x.md"),
                "'../x.md' is not a file reproduce writes",
            ),
            (format!("{h}  /etc/passwd"), "'/etc/passwd' is not a file"),
            (format!("{h}  a/./b"), ""),
            (format!("{h}  {MANIFEST}"), "is not a file reproduce writes"),
            ("a/../../x".to_string(), "'a/../../x' is not a file"),
        ] {
            write(&out.join(MANIFEST), &format!("{HEADER}\n{line}\n"));
            match read_manifest(out) {
                Err(e) => {
                    let e = e.to_string();
                    assert!(e.contains(":2: ") && e.contains(fragment), "{line}: {e}")
                }
                // (`a/./b` is `a/b` to the path parser: a plain path)
                Ok(m) => assert!(fragment.is_empty() && m.entries.len() == 1, "{line}"),
            }
        }
        std::os::unix::fs::symlink("/tmp", out.join("l")).unwrap();
        write(&out.join(MANIFEST), &format!("{h}  l/x.md\n"));
        let e = read_manifest(out).err().unwrap().to_string();
        assert!(e.contains("leads through the symbolic link 'l'"), "{e}");
    }

    #[test]
    fn a_manifest_that_is_not_a_regular_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        std::fs::write(dir.path().join("elsewhere"), "mine").unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), out.join(MANIFEST)).unwrap();
        let e = read_manifest(out).err().unwrap().to_string();
        assert!(e.contains("is a symbolic link, not the list"), "{e}");
        std::fs::remove_file(out.join(MANIFEST)).unwrap();
        std::fs::create_dir(out.join(MANIFEST)).unwrap();
        let e = read_manifest(out).err().unwrap().to_string();
        assert!(e.contains("is a directory, not the list"), "{e}");
    }

    #[test]
    fn only_an_unchanged_listed_file_may_be_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        write(&out.join("a.md"), "ours\n");
        write(&out.join("b.md"), "edited\n");
        write(&out.join("c.md"), "old\n");
        write(&out.join("d.md"), "mine\n");
        write(
            &out.join(MANIFEST),
            &format!(
                "{HEADER}\n{}  a.md\n{}  b.md\nc.md\n",
                sha256(b"ours\n"),
                sha256(b"as written\n")
            ),
        );
        let m = read_manifest(out).unwrap();
        let why = |r: &str| not_replaceable(out, Path::new(r), &m).unwrap();
        assert_eq!(why("a.md"), None);
        assert!(why("b.md").unwrap().contains("was changed since"));
        assert!(why("c.md").unwrap().contains("older gpucast"));
        assert!(why("d.md").unwrap().contains("was not written by"));
        assert_eq!(why("new.md"), None);
    }
}
