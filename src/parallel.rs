//! Running independent pieces of work on several threads: LOGO's folds
//! ([`crate::evaluation::evaluate`]) and chunks of a prediction table
//! ([`crate::predict::predict_table`]). Results come back in input order, so outputs
//! do not depend on the thread count. Scoped std threads over an atomic work index,
//! not a thread-pool crate: the pieces are few and coarse (folds, chunks of
//! thousands of rows), and this is all they need.

/// Threads the parallel stages use; 0 (the default) is one per available core.
static THREADS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Set the threads the parallel stages use (`--threads`); 0 is one per available core.
pub fn set_threads(n: usize) {
    THREADS.store(n, std::sync::atomic::Ordering::Relaxed);
}

/// The threads the parallel stages use.
pub fn threads() -> usize {
    match THREADS.load(std::sync::atomic::Ordering::Relaxed) {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// `f` of each item on up to `threads` scoped threads, each taking the next item as
/// it finishes one (folds differ in size); results in item order.
pub fn map<T: Sync, R: Send>(items: &[T], threads: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        mine.push((i, f(item)));
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_keeps_item_order_and_calls_once_per_item() {
        let items: Vec<usize> = (0..50).collect();
        for threads in [0, 1, 3, 64] {
            let calls = std::sync::atomic::AtomicUsize::new(0);
            let out = map(&items, threads, |i| {
                calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                // uneven items, so threads finish out of order
                std::thread::sleep(std::time::Duration::from_micros((*i as u64 % 3) * 300));
                i * 2
            });
            assert_eq!(out, (0..50).map(|i| i * 2).collect::<Vec<_>>(), "{threads}");
            assert_eq!(calls.into_inner(), 50, "{threads}");
        }
        assert!(map(&[] as &[usize], 4, |i| *i).is_empty());
    }
}
