//! A frame's bytes moved in pieces on several threads: a host picture
//! pair copied into pinned staging memory, a frame read from a file.
//!
//! One core copies or reads from the page cache at 5-10 GB/s; a 2160p
//! pair is 25 MB, which the device scores in under half a millisecond.
//! The threads are started once, for the process (ADR 0040): starting
//! six threads for a frame took about 200 microseconds on a 2-core
//! machine, a good part of a 2160p frame's time on the device.

use std::sync::OnceLock;

/// Bytes of one piece: pieces are what a thread takes at a time.
pub(crate) const PIECE: usize = 1 << 20;

/// Runs `work` on every piece and returns its results in the pieces'
/// order. With `bytes` (what the pieces move, all together) below two
/// pieces' worth the pieces run on the calling thread, one after another:
/// waking a thread costs more than it saves. Otherwise they run on the
/// shared threads and the calling thread, which returns when all are done.
pub(crate) fn for_each_piece<T: Send, R: Send>(
    pieces: Vec<T>,
    bytes: usize,
    work: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    if bytes < 2 * PIECE || pieces.len() < 2 {
        return pieces.into_iter().map(work).collect();
    }
    let mut results: Vec<Option<R>> = pieces.iter().map(|_| None).collect();
    let work = &work;
    threads().in_place_scope(|scope| {
        let mut jobs = results.iter_mut().zip(pieces);
        let (first, first_piece) = jobs.next().expect("two pieces or more");
        for (result, piece) in jobs {
            scope.spawn(move |_| *result = Some(work(piece)));
        }
        // The caller takes a piece too rather than only wait.
        *first = Some(work(first_piece));
    });
    results
        .into_iter()
        .map(|r| r.expect("every piece ran"))
        .collect()
}

/// The shared threads: the cores this process may run on, at most 8
/// (beyond that the memory bus, not the cores, sets the rate). Started
/// at their first use; on Linux the count reads cgroup files.
fn threads() -> &'static rayon_core::ThreadPool {
    static THREADS: OnceLock<rayon_core::ThreadPool> = OnceLock::new();
    THREADS.get_or_init(|| {
        let n = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8);
        rayon_core::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("vmafx-bytes-{i}"))
            .build()
            .expect("starting the byte-copying threads")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_piece_runs_once_and_results_keep_their_order() {
        for bytes in [0, 2 * PIECE] {
            let pieces: Vec<usize> = (0..37).collect();
            let out = for_each_piece(pieces, bytes, |i| i * 3);
            assert_eq!(
                out,
                (0..37).map(|i| i * 3).collect::<Vec<_>>(),
                "bytes {bytes}"
            );
        }
    }

    #[test]
    fn pieces_write_their_own_slices() {
        let mut dst = vec![0u8; 3 * PIECE + 5];
        let src: Vec<u8> = (0..dst.len()).map(|i| (i * 7 % 251) as u8).collect();
        let pieces: Vec<_> = dst.chunks_mut(PIECE).zip(src.chunks(PIECE)).collect();
        for_each_piece(pieces, src.len(), |(d, s)| d.copy_from_slice(s));
        assert_eq!(dst, src);
    }
}
