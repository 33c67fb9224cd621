//! Temporary files and directories, removed on every way out: when dropped (a
//! finished write, an error, a panic) and when SIGINT, SIGTERM or SIGHUP stops the
//! process.
//!
//! Each temporary is registered before it is created, and creating one, removing one
//! and moving finished files into place ([`uninterrupted`]) hold one lock that the
//! signal's cleanup takes and never gives back: the cleanup sees every temporary that
//! exists, nothing creates another while it removes them, and a move into place is
//! either done or not begun when the process ends.

use super::with_registry;
use crate::error::{Error, Result};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Held while temporaries are created or removed and while finished files move into
/// place; the signal's cleanup takes it for good.
static GATE: Mutex<()> = Mutex::new(());

thread_local! {
    /// Whether this thread holds [`GATE`] (a section inside another runs as part of it).
    static IN_GATE: Cell<bool> = const { Cell::new(false) };
}

/// Run `f` where a stopping signal cannot cut in: the signal's cleanup waits until it
/// ends (then removes the temporaries and ends the process). Keep `f` short and free
/// of waits on other processes (a pipe's reader): only local file operations.
pub fn uninterrupted<T>(f: impl FnOnce() -> T) -> T {
    if IN_GATE.with(Cell::get) {
        return f();
    }
    let _held = GATE.lock().unwrap_or_else(|e| e.into_inner());
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            IN_GATE.with(|g| g.set(false));
        }
    }
    IN_GATE.with(|g| g.set(true));
    let _leave = Leave;
    f()
}

/// Wait for a signal's cleanup under way, if any (it ends the process): called before
/// the process exits on its own, so an exit cannot cut the cleanup short.
pub fn wait_for_cleanup() {
    uninterrupted(|| ());
}

/// A fresh random suffix for a temporary's name.
fn random_suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // (RandomState is seeded from the OS once per process, then stepped per instance)
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u32(std::process::id());
    format!("{:016x}", h.finish())
}

/// Remove `path`, a file or a directory with its content; nothing when it is gone.
fn remove(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            // (a second pass: a file a writer had open may have landed meanwhile)
            if std::fs::remove_dir_all(path).is_err() {
                let _ = std::fs::remove_dir_all(path);
            }
        }
        Ok(_) => {
            let _ = std::fs::remove_file(path);
        }
        Err(_) => {}
    }
}

fn unregister(path: &Path) {
    with_registry(|r| {
        if let Some(i) = r.temporaries.iter().rposition(|p| p == path) {
            r.temporaries.remove(i);
        }
    });
}

/// A temporary file or directory (`.gpucast-tmp-...`), registered for removal on
/// SIGINT/SIGTERM/SIGHUP before it is created, and removed when dropped: a file renamed
/// into place meanwhile is no longer there to remove.
pub struct Temporary {
    path: PathBuf,
}

impl Temporary {
    /// A new empty directory `.gpucast-tmp-{prefix}RANDOM` inside `dir` (made, with its
    /// parents, when missing).
    pub fn dir_in(dir: &Path, prefix: &str) -> std::io::Result<Temporary> {
        Temporary::create(dir, prefix, |p| std::fs::create_dir(p))
    }

    /// A new empty file `.gpucast-tmp-{prefix}RANDOM` inside `dir` (made, with its
    /// parents, when missing), readable by its owner only until it is finished, and
    /// the file open for writing.
    pub fn file_in(dir: &Path, prefix: &str) -> std::io::Result<(Temporary, std::fs::File)> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = None;
        let t = Temporary::create(dir, prefix, |p| {
            file = Some(
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(p)?,
            );
            Ok(())
        })?;
        match file {
            Some(f) => Ok((t, f)),
            None => Err(std::io::Error::other("the temporary file was not opened")),
        }
    }

    /// Register a fresh name inside `dir`, then `make` it; both before a signal's
    /// cleanup can look (see the module documentation). A name taken meanwhile is
    /// drawn again.
    fn create(
        dir: &Path,
        prefix: &str,
        mut make: impl FnMut(&Path) -> std::io::Result<()>,
    ) -> std::io::Result<Temporary> {
        uninterrupted(|| {
            std::fs::create_dir_all(dir)?;
            for _ in 0..64 {
                let path = dir.join(format!(".gpucast-tmp-{prefix}{}", random_suffix()));
                with_registry(|r| r.temporaries.push(path.clone()));
                match make(&path) {
                    Ok(()) => return Ok(Temporary { path }),
                    Err(e) => {
                        unregister(&path);
                        if e.kind() != std::io::ErrorKind::AlreadyExists {
                            return Err(e);
                        }
                    }
                }
            }
            Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "no free name for a temporary",
            ))
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        uninterrupted(|| {
            remove(&self.path);
            unregister(&self.path);
        });
    }
}

/// Remove every registered temporary when the process is told to stop (SIGINT,
/// SIGTERM, SIGHUP; a second signal during the cleanup changes nothing), then exit with
/// 128 + the signal's number, as a shell reports it. SIGXFSZ (a file-size limit) is
/// ignored, so a write past the limit fails with EFBIG and takes the error path that
/// removes its temporaries, instead of killing the process where it stands.
pub fn remove_temporaries_on_signals() -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    // SAFETY: setting a signal's disposition to "ignore" installs no handler code.
    let ignored = unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    if ignored == libc::SIG_ERR {
        return Err(Error::io_error(
            "",
            "cannot ignore SIGXFSZ",
            std::io::Error::last_os_error(),
        ));
    }
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .map_err(|e| Error::io_error("", "cannot install signal handlers", e))?;
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            // (held until the process ends: nothing is created or moved after this)
            let _gate = GATE.lock().unwrap_or_else(|e| e.into_inner());
            let temporaries = with_registry(|r| std::mem::take(&mut r.temporaries));
            for p in temporaries.iter().rev() {
                remove(p);
            }
            std::process::exit(128 + sig);
        }
    });
    Ok(())
}

/// A directory of files written first under a hidden temporary directory inside
/// `dest`, then moved into `dest` together ([`Staging::publish`]); whatever is not
/// published is removed with it.
pub struct Staging {
    dir: Temporary,
    dest: PathBuf,
}

impl Staging {
    /// A staging directory inside `dest` (made when missing): one file system with it,
    /// so each file moves into place by a rename.
    pub fn new(dest: &Path, prefix: &str) -> Result<Staging> {
        let dir = Temporary::dir_in(dest, prefix)
            .map_err(|e| Error::io_error(dest.display(), "cannot create a directory", e))?;
        Ok(Staging {
            dir,
            dest: dest.to_path_buf(),
        })
    }

    /// Where to write the files.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Where a staged file lands: its place relative to the staging directory, in
    /// `dest`.
    pub fn destination(&self, staged: &Path) -> PathBuf {
        self.dest
            .join(staged.strip_prefix(self.dir.path()).unwrap_or(staged))
    }

    /// Move the staged `files` into `dest`, each by a rename, after checking every one
    /// of them ([`super::check_output`]): a file it may not replace stops it before
    /// anything moves. Returns where they landed.
    pub fn publish(&self, files: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let dests: Vec<PathBuf> = files.iter().map(|f| self.destination(f)).collect();
        for d in &dests {
            super::check_output(d, &[])?;
        }
        uninterrupted(|| {
            for (staged, dest) in files.iter().zip(&dests) {
                std::fs::rename(staged, dest)
                    .map_err(|e| Error::io_error(dest.display(), "cannot write", e))?;
                super::note_written(dest);
            }
            Ok(dests)
        })
    }
}

/// An output written to a temporary beside it, renamed into place by
/// [`Pending::commit`]: a command with several outputs writes them all before it puts
/// any of them in place.
pub struct Pending {
    /// The temporary and where it goes; None for a pipe or device, written in place.
    staged: Option<(Temporary, PathBuf)>,
    path: PathBuf,
}

impl Pending {
    /// A written pipe or device (nothing to rename).
    pub(super) fn in_place(path: &Path) -> Pending {
        Pending {
            staged: None,
            path: path.to_path_buf(),
        }
    }

    /// A finished temporary to rename onto `target`.
    pub(super) fn staged(tmp: Temporary, target: PathBuf, path: &Path) -> Pending {
        Pending {
            staged: Some((tmp, target)),
            path: path.to_path_buf(),
        }
    }

    /// Put the output in place (a rename over `target`).
    pub fn commit(self) -> Result<()> {
        let Some((tmp, target)) = &self.staged else {
            return Ok(());
        };
        uninterrupted(|| {
            std::fs::rename(tmp.path(), target)
                .map_err(|e| Error::io_error(self.path.display(), "cannot write", e))?;
            super::note_written(target);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_temporary_is_registered_while_it_exists_and_removed_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let registered = |p: &Path| with_registry(|r| r.temporaries.iter().any(|t| t == p));
        let t = Temporary::dir_in(&dir.path().join("new/sub"), "x-").unwrap();
        let path = t.path().to_path_buf();
        assert!(path.is_dir() && registered(&path));
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with(".gpucast-tmp-x-"), "{name}");
        std::fs::write(path.join("f"), "x").unwrap();
        drop(t);
        assert!(!path.exists() && !registered(&path));
        let (t, f) = Temporary::file_in(dir.path(), "").unwrap();
        let path = t.path().to_path_buf();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(f.metadata().unwrap().permissions().mode() & 0o777, 0o600);
        drop(t);
        assert!(!path.exists() && !registered(&path));
        // (only the directories made for it stay)
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        assert_eq!(
            std::fs::read_dir(dir.path().join("new/sub"))
                .unwrap()
                .count(),
            0
        );
    }

    #[test]
    fn a_staging_directory_publishes_only_what_it_may_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mine.svg"), "mine").unwrap();
        let s = Staging::new(dir.path(), "s-").unwrap();
        let a = s.path().join("a.svg");
        let mine = s.path().join("mine.svg");
        std::fs::write(&a, "a").unwrap();
        std::fs::write(&mine, "new").unwrap();
        let e = s.publish(&[a.clone(), mine]).unwrap_err().to_string();
        assert!(e.contains("mine.svg: exists"), "{e}");
        assert!(!dir.path().join("a.svg").exists(), "moved before the check");
        assert_eq!(s.publish(&[a]).unwrap(), [dir.path().join("a.svg")]);
        let staged = s.path().to_path_buf();
        drop(s);
        assert!(!staged.exists());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.svg")).unwrap(),
            "a"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("mine.svg")).unwrap(),
            "mine"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
