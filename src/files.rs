//! The user's files: reading inputs and writing outputs without ever losing one.
//!
//! - Every input is read through [`read`] (or [`read_head`]), which remembers what it
//!   read. A regular file is read as it is; a pipe (`/dev/stdin`, `<(...)`, a named
//!   FIFO) is read once, without waiting for a writer that never comes, and kept, so a
//!   reader that looks at a file twice (to tell its format, then to parse it) sees the
//!   same bytes; any other special file (a device, a socket) is refused.
//! - Every file or directory a command may read, whatever its flags, is named once
//!   before any work ([`protect_inputs`]): no output replaces one, with or without
//!   `--force`, read or not.
//! - Every output is written through [`write_atomic_with`]: into a temporary file in
//!   the target's directory, renamed into place. An output that is (or, through links,
//!   resolves to) an input is refused; so is an existing file this run did not write,
//!   unless the user allowed replacing ([`allow_replacing`], `--force`) or it is one an
//!   earlier run wrote and says so ([`note_replaceable`]: `reproduce`'s list); a
//!   symbolic link is written through to its target, never replaced; a directory is
//!   refused; a pipe or a device is written in place. A command's outputs are checked
//!   against each other before any work ([`check_distinct_outputs`]), and one with
//!   several writes them all before it puts any in place ([`write_pending`],
//!   [`Staging`]).
//! - Temporaries are removed on every way out (`temporary`): dropped, on an error,
//!   and when SIGINT, SIGTERM or SIGHUP ends the process
//!   ([`remove_temporaries_on_signals`]).

mod temporary;

pub use temporary::{
    remove_temporaries_on_signals, uninterrupted, wait_for_cleanup, Pending, Staging, Temporary,
};

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// A file by identity: device and inode, so that two paths of one file (links, `..`,
/// hard links) compare equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    fn of(meta: &std::fs::Metadata) -> FileId {
        FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }
}

/// What this process has read, and the temporaries it has open.
#[derive(Default)]
struct Registry {
    /// Every file read, by identity, with the path it was read under.
    inputs: Vec<(FileId, PathBuf)>,
    /// Directories named as inputs (their files are inputs too, read or not).
    input_dirs: Vec<PathBuf>,
    /// The bytes of each pipe read, by the path it was named with.
    pipes: HashMap<PathBuf, Vec<u8>>,
    /// Temporary files and directories to remove if the process is stopped.
    temporaries: Vec<PathBuf>,
    /// Existing files an output may replace: those this run wrote, and those an
    /// earlier run wrote and listed ([`note_replaceable`]); by identity and path (an
    /// inode is reused once its file is gone).
    replaceable: Vec<(FileId, PathBuf)>,
    /// Whether any existing file may be replaced ([`allow_replacing`]).
    replace_any: bool,
    /// Pipes given as outputs, opened when checked (a reader was there then): closing
    /// one before writing would end its reader's input.
    pipes_out: HashMap<PathBuf, std::fs::File>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn registry() -> MutexGuard<'static, Option<Registry>> {
    // A panic while holding the lock leaves the data consistent (plain pushes).
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

fn with_registry<T>(f: impl FnOnce(&mut Registry) -> T) -> T {
    f(registry().get_or_insert_with(Registry::default))
}

/// What kind of special file `t` is, in words; None for a regular file or directory.
fn special_kind(t: &std::fs::FileType) -> Option<&'static str> {
    if t.is_char_device() {
        Some("a character device")
    } else if t.is_block_device() {
        Some("a block device")
    } else if t.is_socket() {
        Some("a socket")
    } else if t.is_fifo() {
        Some("a pipe")
    } else {
        None
    }
}

fn invalid(message: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, message.into())
}

/// Whether `path` is a pipe (a named FIFO, `/dev/stdin` on a pipe, `<(...)`).
pub fn is_pipe(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// Whether `path` is a regular file: one that can be opened without waiting (a FIFO
/// may wait forever for a writer).
pub fn is_regular(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// The regular files under `dir`, recursively, sorted; `dir` is remembered as an input
/// directory. A special file (a FIFO, a device) is an error naming it: opening it
/// could wait forever. Links are followed, each directory visited once (a link loop
/// ends).
pub fn walk(dir: &Path) -> Result<Vec<PathBuf>> {
    note_input_dir(dir);
    let mut out = Vec::new();
    let mut seen = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let real = d.canonicalize().map_err(|e| Error::io(d.display(), e))?;
        if seen.contains(&real) {
            continue;
        }
        seen.push(real);
        let entries = std::fs::read_dir(&d).map_err(|e| Error::io(d.display(), e))?;
        for e in entries {
            let p = e.map_err(|e| Error::io(d.display(), e))?.path();
            let Ok(meta) = std::fs::metadata(&p) else {
                continue; // a dangling link: nothing to read
            };
            if meta.is_dir() {
                stack.push(p);
            } else if meta.is_file() {
                out.push(p);
            } else if let Some(kind) = special_kind(&meta.file_type()) {
                return Err(Error::file(
                    p.display(),
                    format!("is {kind} inside a data directory: a data directory holds files only; move it or name it on its own"),
                ));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Remember every path of `paths` that exists as an input (a directory: every file in
/// it): no output replaces one. A command names here, before any work, every file it
/// may read under any of its flags, so an input it happens not to read this time is
/// protected all the same.
pub fn protect_inputs(paths: &[PathBuf]) {
    for p in paths {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => note_input_dir(p),
            Ok(m) => note_input(&m, p),
            Err(_) => {}
        }
    }
}

/// Remember `dir` as an input directory: no output may replace a file inside it.
pub fn note_input_dir(dir: &Path) {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    with_registry(|r| {
        if !r.input_dirs.contains(&dir) {
            r.input_dirs.push(dir)
        }
    });
}

fn note_input(meta: &std::fs::Metadata, path: &Path) {
    let id = FileId::of(meta);
    with_registry(|r| {
        if !r.inputs.iter().any(|(i, p)| *i == id && p == path) {
            r.inputs.push((id, path.to_path_buf()));
        }
    });
}

/// Read a pipe to its end once: opened without waiting for a writer (a FIFO nobody
/// writes to reads as empty instead of blocking forever), then read blocking.
fn read_pipe(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut f = open_without_waiting(path, std::fs::OpenOptions::new().read(true))?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Open `path` with `options` without waiting for the other end of a pipe (opening a
/// FIFO blocks until a writer or reader comes), then block as usual for the reads or
/// writes. A pipe opened for writing that nobody reads fails at once (ENXIO).
fn open_without_waiting(
    path: &Path,
    options: &mut std::fs::OpenOptions,
) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    let f = options.custom_flags(libc::O_NONBLOCK).open(path)?;
    let fd = f.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function owns; only the status flags change.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
    Ok(f)
}

/// `target` (the pipe or device `path` leads to) opened for writing; a pipe nobody
/// reads is an error at once, not a wait.
fn open_pipe_for_writing(target: &Path, path: &Path) -> Result<std::fs::File> {
    open_without_waiting(target, std::fs::OpenOptions::new().write(true)).map_err(|e| {
        match e.raw_os_error() {
            Some(libc::ENXIO) => Error::refused(
                path.display(),
                "is a pipe nobody reads: start its reader first, or write a file",
            ),
            _ => Error::io_error(path.display(), "cannot write", e),
        }
    })
}

/// The whole content of an input file (see the module documentation).
pub fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        return Err(invalid("is a directory, not a file"));
    }
    if meta.file_type().is_fifo() {
        if let Some(bytes) = with_registry(|r| r.pipes.get(path).cloned()) {
            return Ok(bytes);
        }
        let bytes = read_pipe(path)?;
        note_input(&meta, path);
        with_registry(|r| r.pipes.insert(path.to_path_buf(), bytes.clone()));
        return Ok(bytes);
    }
    if let Some(kind) = special_kind(&meta.file_type()) {
        return Err(invalid(format!("is {kind}, not a file")));
    }
    note_input(&meta, path);
    std::fs::read(path)
}

/// An input file opened for reading: a regular file, opened (for readers that seek);
/// a pipe, refused (read it with [`read`]).
pub fn open(path: &Path) -> std::io::Result<std::fs::File> {
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        return Err(invalid("is a directory, not a file"));
    }
    if let Some(kind) = special_kind(&meta.file_type()) {
        return Err(invalid(format!("is {kind}, not a file")));
    }
    note_input(&meta, path);
    std::fs::File::open(path)
}

/// An input file as UTF-8 text.
pub fn read_to_string(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read(path)?).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
        )
    })
}

/// The first `n` bytes of an input file (all of them when shorter); a pipe is read
/// whole and kept, so the reader that follows sees it all.
pub fn read_head(path: &Path, n: usize) -> std::io::Result<Vec<u8>> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        let mut bytes = read(path)?;
        bytes.truncate(n);
        return Ok(bytes);
    }
    note_input(&meta, path);
    let mut buf = Vec::with_capacity(n.min(1 << 20));
    std::fs::File::open(path)?
        .take(n as u64)
        .read_to_end(&mut buf)?;
    Ok(buf)
}

/// Where writing `path` lands: `path` itself, or the file a symbolic link at `path`
/// points to (written through, never replaced).
fn write_target(path: &Path) -> Result<PathBuf> {
    let Ok(link) = std::fs::symlink_metadata(path) else {
        return Ok(path.to_path_buf());
    };
    if !link.file_type().is_symlink() {
        return Ok(path.to_path_buf());
    }
    path.canonicalize().map_err(|_| {
        Error::refused(
            path.display(),
            "a symbolic link to a file that does not exist: give the file itself",
        )
    })
}

/// `path` with `.` and `name/..` taken out, as the kernel resolves them once every
/// directory exists.
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if matches!(out.components().next_back(), Some(Component::Normal(_))) {
                    out.pop();
                } else {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// Let outputs replace existing files (the user's `--force`): inputs stay protected.
pub fn allow_replacing() {
    with_registry(|r| r.replace_any = true);
}

/// Let an output replace the file at `path`, one an earlier run of gpucast wrote (as
/// its own records say); nothing when there is no file.
pub fn note_replaceable(path: &Path) {
    if let (Ok(meta), Ok(canonical)) = (std::fs::metadata(path), path.canonicalize()) {
        with_registry(|r| r.replaceable.push((FileId::of(&meta), canonical)));
    }
}

/// Check that writing `path` destroys nothing this run reads or has read, nor a file
/// it did not write: not an input (by identity, through links), not a file inside an
/// input directory, not a directory, not an existing file unless this run wrote it or
/// may replace it ([`allow_replacing`], [`note_replaceable`]). `inputs` are the paths
/// the command was given to read, checked before any work; files read since are
/// checked too.
pub fn check_output(path: &Path, inputs: &[PathBuf]) -> Result<()> {
    for i in inputs {
        if i.is_dir() {
            note_input_dir(i);
        } else if let Ok(meta) = std::fs::metadata(i) {
            note_input(&meta, i);
        }
    }
    let target = write_target(path)?;
    // A path through directories not made yet ("new/../runs.csv") lands where its
    // `..` say once they are made.
    let Ok(meta) = std::fs::metadata(&target).or_else(|_| std::fs::metadata(lexical(&target)))
    else {
        return Ok(());
    };
    if meta.is_dir() {
        return Err(Error::refused(
            path.display(),
            "is a directory: give a file name to write",
        ));
    }
    let id = FileId::of(&meta);
    let canonical = target
        .canonicalize()
        .or_else(|_| lexical(&target).canonicalize())
        .unwrap_or_else(|_| target.clone());
    with_registry(|r| {
        // (an input removed since frees its inode for another file: still the same?)
        let still = |p: &Path| std::fs::metadata(p).is_ok_and(|m| FileId::of(&m) == id);
        if let Some((_, p)) = r.inputs.iter().find(|(i, p)| *i == id && still(p)) {
            let same = if p == path {
                String::new()
            } else {
                format!(" ({})", p.display())
            };
            return Err(Error::refused(
                path.display(),
                format!("is also an input{same}: writing it would destroy what is read; write elsewhere"),
            ));
        }
        if let Some(d) = r.input_dirs.iter().find(|d| canonical.starts_with(d)) {
            return Err(Error::refused(
                path.display(),
                format!(
                    "is a file inside the input directory {}: writing it could destroy an input; write elsewhere",
                    d.display()
                ),
            ));
        }
        let replaceable = r
            .replaceable
            .iter()
            .any(|(i, p)| *i == id && *p == canonical);
        if meta.is_file() && !r.replace_any && !replaceable {
            return Err(Error::refused(
                path.display(),
                format!(
                    "exists, and gpucast replaces no file it did not write: give a new name, or allow replacing it ({})",
                    crate::error::input_name(crate::error::Input::Replace)
                ),
            ));
        }
        Ok(())
    })?;
    // (a pipe is opened now, while its reader is known to be there, and kept open)
    if meta.file_type().is_fifo() && !with_registry(|r| r.pipes_out.contains_key(&target)) {
        let f = open_pipe_for_writing(&target, path)?;
        with_registry(|r| r.pipes_out.insert(target, f));
    }
    Ok(())
}

/// One output of a command, for [`check_distinct_outputs`].
pub struct Output<'a> {
    /// How the command names it (its flag), for messages.
    pub flag: &'a str,
    pub path: &'a Path,
    /// For a directory the command writes files into: whether a path inside it
    /// (relative to it) is one the command may write there. None for a file.
    pub writes: Option<&'a dyn Fn(&Path) -> bool>,
}

/// Where writing `path` lands, absolute: a link at `path` followed to its target, the
/// deepest existing directory resolved, the rest taken as written (`..` lexically).
fn landing(path: &Path) -> PathBuf {
    let target = write_target(path).unwrap_or_else(|_| path.to_path_buf());
    let absolute = if target.is_absolute() {
        target
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("/"))
            .join(target)
    };
    let mut base = lexical(&absolute);
    let mut rest = Vec::new();
    while std::fs::symlink_metadata(&base).is_err() {
        match (base.file_name(), base.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                base = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut out = base.canonicalize().unwrap_or(base);
    out.extend(rest.iter().rev());
    out
}

/// Check, before any work, that no two outputs of one command land on one file: two
/// files that are one (by name, through `..` or links), a file where a directory output
/// is or above it, or a file inside a directory output under a name written there.
/// The second of each pair is named.
pub fn check_distinct_outputs(outputs: &[Output]) -> Result<()> {
    let landed: Vec<PathBuf> = outputs.iter().map(|o| landing(o.path)).collect();
    for (j, b) in outputs.iter().enumerate() {
        for (i, a) in outputs[..j].iter().enumerate() {
            let (la, lb) = (&landed[i], &landed[j]);
            let clash = if la == lb {
                Some((b, format!("{} names it too", a.flag)))
            } else {
                // (an output inside a file output, or a file inside a directory output
                // under a name written there: the inner one is named)
                [(a, la, b, lb), (b, lb, a, la)]
                    .into_iter()
                    .find_map(|(d, ld, f, lf)| {
                        let inside = lf.strip_prefix(ld).ok()?;
                        match (d.writes, f.writes) {
                            (Some(writes), None) if writes(inside) => Some((
                                f,
                                format!(
                                    "{} writes a file of this name into {}",
                                    d.flag,
                                    d.path.display()
                                ),
                            )),
                            (None, _) => Some((
                                f,
                                format!(
                                    "inside {}, which {} writes as a file",
                                    d.path.display(),
                                    d.flag
                                ),
                            )),
                            _ => None,
                        }
                    })
            };
            if let Some((named, why)) = clash {
                return Err(Error::refused(
                    named.path.display(),
                    format!(
                        "{} of this command: {why}; give each output its own place",
                        named.flag
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Remember that this run wrote `target`: writing it again replaces nothing of the
/// user's.
fn note_written(target: &Path) {
    note_replaceable(target);
}

/// Write `path` through `fill`, atomically (temporary file + rename) after
/// [`check_output`]; the directory is created when missing and the file ends up
/// readable like any other output (0644). A link is written through to its target;
/// a pipe or device is written in place (nothing to replace).
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut std::fs::File) -> Result<()>,
) -> Result<()> {
    write_pending(path, fill)?.commit()
}

/// Write `path` through `fill` as [`write_atomic_with`] does, but leave the finished
/// temporary beside it until [`Pending::commit`] renames it into place: a command
/// writes all its outputs before it puts any of them in place. A pipe or device is
/// written now (nothing to rename).
pub fn write_pending(
    path: &Path,
    fill: impl FnOnce(&mut std::fs::File) -> Result<()>,
) -> Result<Pending> {
    check_output(path, &[])?;
    let target = write_target(path)?;
    if std::fs::metadata(&target).is_ok_and(|m| special_kind(&m.file_type()).is_some()) {
        let mut f = match with_registry(|r| r.pipes_out.remove(&target)) {
            Some(f) => f,
            None => open_pipe_for_writing(&target, path)?,
        };
        fill(&mut f)?;
        return Ok(Pending::in_place(path));
    }
    let (tmp, mut file) = temporary_beside(path, &target)?;
    fill(&mut file)?;
    file.flush()
        .map_err(|e| Error::io_error(path.display(), "cannot write", e))?;
    readable(&file, path)?;
    Ok(Pending::staged(tmp, target, path))
}

/// [`write_pending`] of `text`.
pub fn write_pending_text(path: &Path, text: &str) -> Result<Pending> {
    write_pending(path, |f| {
        f.write_all(text.as_bytes())
            .map_err(|e| Error::io_error(path.display(), "cannot write", e))
    })
}

/// A temporary file in `target`'s directory (created if missing), to be renamed onto
/// `target`; errors name `path`, the file the user named.
fn temporary_beside(path: &Path, target: &Path) -> Result<(Temporary, std::fs::File)> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Temporary::file_in(dir, "").map_err(|e| {
        let doing = if dir.is_dir() {
            "cannot create a temporary file"
        } else {
            "cannot create directory"
        };
        Error::io_error(path.display(), doing, e)
    })
}

/// Gives a finished temporary file an ordinary file's permissions (it is made private
/// to its owner).
fn readable(file: &std::fs::File, path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(0o644))
        .map_err(|e| Error::io_error(path.display(), "cannot set permissions", e))
}

/// Write text to `path` atomically.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    write_pending_text(path, text)?.commit()
}

/// Check before any work that `path` can be written as a new file: nothing (not even
/// a dangling link) is there, and it is no input ([`check_output`]).
pub fn check_new_output(path: &Path, inputs: &[PathBuf]) -> Result<()> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(Error::refused(
            path.display(),
            "exists: this output is never written over an existing file; give a new name",
        ));
    }
    check_output(path, inputs)
}

/// Write `text` to `path` as a new file, atomically (temporary file + a link that
/// refuses to replace): an existing file is never touched.
pub fn write_new(path: &Path, text: &str) -> Result<()> {
    check_new_output(path, &[])?;
    let (tmp, mut file) = temporary_beside(path, path)?;
    let write_err = |e: std::io::Error| Error::io_error(path.display(), "cannot write", e);
    file.write_all(text.as_bytes()).map_err(write_err)?;
    file.flush().map_err(write_err)?;
    readable(&file, path)?;
    uninterrupted(|| {
        std::fs::hard_link(tmp.path(), path).map_err(|e| {
            Error::io_error(
                path.display(),
                "cannot write (it may have appeared meanwhile)",
                e,
            )
        })
    })?;
    note_written(path);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_is_never_an_output() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("runs.csv");
        std::fs::write(&input, "x\n").unwrap();
        assert_eq!(read(&input).unwrap(), b"x\n");
        let link = dir.path().join("link.csv");
        std::os::unix::fs::symlink(&input, &link).unwrap();
        for p in [&input, &link, &dir.path().join("sub/../runs.csv")] {
            let e = write_atomic(p, "y").unwrap_err().to_string();
            assert!(e.contains("is also an input"), "{e}");
        }
        assert_eq!(std::fs::read(&input).unwrap(), b"x\n");
    }

    #[test]
    fn a_link_is_written_through_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.csv");
        std::fs::write(&target, "old").unwrap();
        let link = dir.path().join("link.csv");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        // (the user's file behind the link is replaced only when allowed)
        let e = write_atomic(&link, "new").unwrap_err().to_string();
        assert!(
            e.contains("link.csv: exists, and gpucast replaces no file it did not write"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
        note_replaceable(&target);
        write_atomic(&link, "new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        let dangling = dir.path().join("dangling.csv");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        let e = write_atomic(&dangling, "x").unwrap_err().to_string();
        assert!(e.contains("does not exist"), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    #[test]
    fn write_new_never_replaces_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.json");
        write_new(&path, "first").unwrap();
        let e = write_new(&path, "second").unwrap_err().to_string();
        assert!(e.contains("exists"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "first");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn write_atomic_replaces_only_a_file_this_run_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.svg");
        write_atomic(&path, "old").unwrap();
        write_atomic(&path, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let users = dir.path().join("b.svg");
        std::fs::write(&users, "mine").unwrap();
        let e = write_atomic(&users, "new").unwrap_err().to_string();
        assert!(e.contains("b.svg: exists, and gpucast replaces no file it did not write: give a new name, or allow replacing it (files::allow_replacing)"), "{e}");
        assert_eq!(std::fs::read_to_string(&users).unwrap(), "mine");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
