// CAMBI (libvmaf 3.2.0's `cambi`, as src/feature/cambi reproduces it) on
// the device. Per picture (the distorted luma, and with full_ref the
// reference), all integer work, bit for bit the CPU's:
//
//   cambi_preprocess  resize to the scoring size (nearest-sample tables the
//                     host computes with the CPU's code), requantize to 10
//                     bits, the 2x2 anti-dithering average below 10 bits;
//                     in the same launch, the first sample above the bit
//                     depth's maximum (atomicMax on an inverted key).
//   cambi_spatial_mask  7x7 count of flat samples > threshold (a thread per
//                     column walking down, its vertical counts in bits).
//   cambi_prep        per scale: decimate (keep even samples) the image and
//                     the mask, then the separable 3-tap mode filter.
//   cambi_c_values    the banding contrast of every pixel from sliding
//                     histograms (below), and a histogram of the c-values'
//                     top float bits for the pooling. One launch covers
//                     every scale (1-D grid, the scales' blocks one after
//                     another, CLaunch), so the coarse scales' few blocks
//                     run beside scale 0's instead of one short grid each.
//   cambi_select_*    pooling: the sum of each scale's top-k c-values by a
//                     three-level radix select on the float bit patterns
//                     (c-values are >= 0, so bits order like values; 11 +
//                     10 + 10 bits), the values above the k-th one summed in
//                     double (per-thread grid-stride order, fixed block
//                     tree, per-block partials added in order): the same
//                     bits on every run. Each scale gets blocks in
//                     proportion to its size (ScaleSet::first, one 1-D
//                     grid), each thread reading 4 values per iteration
//                     with independent loads. The host divides by k and
//                     combines the scales with the CPU's functions.
//
// Working planes: like the CPU (plane.rs) the image and mask live in one
// buffer of the largest geometry, shrunk scale by scale. Where a scale is
// narrower or shorter than half the window, libvmaf's loops read samples
// beyond it that earlier steps (or frames) left there; the host then keeps
// canonical buffers, copies each scale back into them and launches the
// c-values scale by scale ("exact" mode). Otherwise every scale is
// filtered into its own planes and one launch scores all five.
//
// C-values design: a block owns TW adjacent columns and a run of rows
// of one scale; each column's histogram hist[value][column] over the window
// around its pixel (u16 counts, two values to a 32-bit word, in dynamic
// shared memory) is kept by K neighbouring lanes of one warp. The block
// walks libvmaf's row order (RowWalk: rows_lo/rows_hi, including pictures
// smaller than the window) in batches of BATCH steps:
//   1. the keys (histogram row or UNCOUNTED) of the batch's entering rows,
//      TW + 2 pad columns each, are loaded into a ring of 2 pad + 1 + BATCH
//      rows in shared memory, LOADS independent global loads per thread at
//      a time: each row is read from global memory once (a row leaves, and
//      its c-values are computed, while it is still in the ring);
//   2. the batch's (leaving, entering) key pairs are built from the ring,
//      with a bit per pair set where it differs from its left neighbour
//      (the start of a run of equal pairs; 32 to a word, by warp ballots);
//   3. per step, each of a column's K lanes takes a K-th of the 2 pad + 1
//      pairs of its window (adjacent ones), reads its runs off the start
//      bits (flat areas, equal keys or unmasked samples, cost a word per
//      32 pairs) and applies each run with shared-memory atomics (no lane
//      waits for its read-modify-writes; the column's lanes update it at
//      once). Between steps (a warp barrier) the lanes compute the pixel's
//      c-value from at most 2 num_diffs + 1 counts of its column, sharing
//      the contrast steps and meeting by shuffles. Pooling-bin increments
//      are kept as a per-thread run of one bin and added on change.
// Three barriers per batch. Cost per pixel and lane ~ a shared load and
// two atomics per run of changed pairs in its part of the window; the
// first row of a block builds its window from scratch (amortized over 4
// windows of rows). The histograms bound the blocks an SM holds (band * 2
// bytes a column; bt1886 defaults: band 564), so K lanes per column raise
// the warps an SM runs K-fold. Each entry point below says its shape; the
// results do not depend on it (integer counts; a c-value's maximum does
// not depend on order).

#include "common.cuh"
#include "float_common.cuh"

#define UNCOUNTED 0xFFFFu
// Threads of the other kernels.
#define MASK_COLS 128
#define MASK_ROWS 64
#define SELECT_THREADS 256
#define SCALES 5
// Radix select levels: bits 30..20, 19..10, 9..0 of the c-value.
#define BINS1 2048
#define BINS2 1024
#define BINS3 1024

__device__ __forceinline__ int imin(int a, int b) { return a < b ? a : b; }
__device__ __forceinline__ int imax(int a, int b) { return a > b ? a : b; }

// ---------------------------------------------------------------------------
// Preprocessing

struct Resize {
    const unsigned *cols; // out_w input columns
    const unsigned *rows; // out_h input rows
    unsigned left, right, round;
    int anti_dither;
    int identity; // output size = input size: cols[x] = x, rows[y] = y
};

// One output sample before anti-dithering: the nearest input sample (the
// one at the same place where nothing is resized: no tables to read),
// requantized to 10 bits.
template <typename T>
__device__ __forceinline__ unsigned resized(const T *src, unsigned pitch, const Resize &r, int x,
                                            int y) {
    const unsigned in_y = r.identity ? (unsigned)y : r.rows[y];
    const unsigned in_x = r.identity ? (unsigned)x : r.cols[x];
    const unsigned v = ((const T *)((const char *)src + (u64)in_y * pitch))[in_x];
    return (((v << r.left) + r.round) >> r.right) & 0xFFFFu;
}

// Grid over max(output, input) in 16x16 blocks: each thread writes its
// output sample (if inside the output) and checks its input sample (if
// inside the input and `max_sample` < 0xFFFF): the smallest (index, value)
// out of range wins, kept inverted so that 0 means none.
template <typename T>
__device__ __forceinline__ void preprocess(const T *src, unsigned pitch, int in_w, int in_h,
                                           Resize r, int w, int h, unsigned short *img,
                                           int stride, unsigned max_sample, u64 *out_of_range) {
    const int x = blockIdx.x * 16 + threadIdx.x % 16;
    const int y = blockIdx.y * 16 + threadIdx.x / 16;
    if (x < in_w && y < in_h && max_sample < 0xFFFFu) {
        const unsigned v = ((const T *)((const char *)src + (u64)y * pitch))[x];
        if (v > max_sample) {
            const u64 key = ((u64)y * (u64)in_w + (u64)x) << 16 | v;
            atomicMax(out_of_range, ~key);
        }
    }
    if (x >= w || y >= h) return;
    unsigned v = resized(src, pitch, r, x, y);
    if (r.anti_dither) {
        const bool right_in = x + 1 < w, down_in = y + 1 < h;
        if (right_in && down_in) {
            v = (v + resized(src, pitch, r, x + 1, y) + resized(src, pitch, r, x, y + 1) +
                 resized(src, pitch, r, x + 1, y + 1)) >>
                2;
        } else if (down_in) {
            v = (v + resized(src, pitch, r, x, y + 1)) >> 1;
        } else if (right_in) {
            v = (v + resized(src, pitch, r, x + 1, y)) >> 1;
        }
    }
    img[(u64)y * stride + x] = (unsigned short)v;
}

#define PREPROCESS_PARAMS(T)                                                                   \
    const T *src, unsigned pitch, int in_w, int in_h, Resize r, int w, int h,                 \
        unsigned short *img, int stride, unsigned max_sample, u64 *out_of_range

extern "C" __global__ void __launch_bounds__(256)
    cambi_preprocess_u8(PREPROCESS_PARAMS(unsigned char)) {
    preprocess(src, pitch, in_w, in_h, r, w, h, img, stride, max_sample, out_of_range);
}
extern "C" __global__ void __launch_bounds__(256)
    cambi_preprocess_u16(PREPROCESS_PARAMS(unsigned short)) {
    preprocess(src, pitch, in_w, in_h, r, w, h, img, stride, max_sample, out_of_range);
}

// ---------------------------------------------------------------------------
// Spatial mask (spatial_mask.rs): a sample is flat when it equals its right
// and lower neighbours (the last column and row count as equal there);
// mask = 1 where more than `threshold` of the 7x7 samples around it (inside
// the picture) are flat.
//
// Block: MASK_COLS threads, one per column from 3 left of its MASK_COLS - 6
// output columns to 3 right of them, walking down MASK_ROWS output rows
// (and 3 more each side). Each thread keeps its column's last seven flat
// flags as bits (the vertical count is a popcount); the horizontal count
// adds seven neighbouring columns' counts from shared memory, one barrier
// a row (two buffers by row parity). About 40 instructions a sample,
// against 300 for a shared tile per 32x8 outputs.

extern "C" __global__ void __launch_bounds__(MASK_COLS)
    cambi_spatial_mask(const unsigned short *img, int stride, int w, int h, unsigned threshold,
                       unsigned short *mask) {
    __shared__ unsigned char column_count[2][MASK_COLS];
    const int j = (int)threadIdx.x;
    const int x = (int)blockIdx.x * (MASK_COLS - 6) - 3 + j;
    const int y0 = (int)blockIdx.y * MASK_ROWS;
    const int y1 = imin(y0 + MASK_ROWS, h);
    const bool inside = x >= 0 && x < w;
    const bool last_column = x + 1 >= w;
    // Sample (x, y) and its right neighbour (itself in the last column: it
    // counts as equal); 0 outside the picture, where nothing is flat.
    auto load = [&](int y, unsigned &v, unsigned &right) {
        v = 0;
        right = 0;
        if (inside && y >= 0 && y < h) {
            const unsigned short *row = img + (u64)y * stride;
            v = row[x];
            right = last_column ? v : row[x + 1];
        }
    };
    unsigned v, right;
    load(y0 - 3, v, right);
    unsigned flags = 0; // bit k: row yy - k flat
    int parity = 0;
    for (int yy = y0 - 3; yy < y1 + 3; ++yy) {
        unsigned below, below_right;
        load(yy + 1, below, below_right);
        const bool flat =
            inside && yy >= 0 && yy < h && v == right && (yy + 1 >= h || v == below);
        flags = ((flags << 1) | (flat ? 1u : 0u)) & 0x7Fu;
        v = below;
        right = below_right;
        // Rows yy - 6 .. yy are row yy - 3's window (the same for every
        // thread of the block: the barrier below is reached by all).
        const int y = yy - 3;
        if (y < y0) continue;
        column_count[parity][j] = (unsigned char)__popc(flags);
        __syncthreads();
        if (j >= 3 && j < MASK_COLS - 3 && x < w) {
            unsigned count = 0;
#pragma unroll
            for (int k = -3; k <= 3; ++k) count += column_count[parity][j + k];
            mask[(u64)y * stride + x] = count > threshold ? 1 : 0;
        }
        parity ^= 1;
    }
}

// ---------------------------------------------------------------------------
// Per scale: decimation and mode filter (plane.rs, filter_mode.rs).

// The value two of a, b, c share, else the smallest.
__device__ __forceinline__ unsigned short mode3(unsigned short a, unsigned short b,
                                                unsigned short c) {
    unsigned short smallest = a < b ? a : b;
    smallest = smallest < c ? smallest : c;
    const unsigned short pair = b == c ? b : smallest;
    return (a == b || a == c) ? a : pair;
}

// The scale's input sample (x, y): the previous scale's (2x, 2y) when
// decimating.
__device__ __forceinline__ unsigned short prep_in(const unsigned short *src, int stride, int x,
                                                  int y, int decimate) {
    return src[(u64)(y << decimate) * stride + (x << decimate)];
}

// The horizontally mode-filtered sample (x, y); the first and last columns
// are kept.
__device__ __forceinline__ unsigned short prep_h(const unsigned short *src, int stride, int x,
                                                 int y, int w, int decimate) {
    const unsigned short v = prep_in(src, stride, x, y, decimate);
    if (x == 0 || x == w - 1) return v;
    return mode3(prep_in(src, stride, x - 1, y, decimate), v,
                 prep_in(src, stride, x + 1, y, decimate));
}

// Writes the `w` x `h` scale into img_dst (and the decimated mask into
// msk_dst when decimating); the first and last rows keep their input.
extern "C" __global__ void __launch_bounds__(256)
    cambi_prep(const unsigned short *img_src, const unsigned short *msk_src, int stride, int w,
               int h, int decimate, unsigned short *img_dst, unsigned short *msk_dst) {
    const int x = blockIdx.x * 32 + threadIdx.x % 32;
    const int y = blockIdx.y * 8 + threadIdx.x / 32;
    if (x >= w || y >= h) return;
    unsigned short v;
    if (y == 0 || y == h - 1) {
        v = prep_in(img_src, stride, x, y, decimate);
    } else {
        v = mode3(prep_h(img_src, stride, x, y - 1, w, decimate),
                  prep_h(img_src, stride, x, y, w, decimate),
                  prep_h(img_src, stride, x, y + 1, w, decimate));
    }
    img_dst[(u64)y * stride + x] = v;
    if (decimate) msk_dst[(u64)y * stride + x] = prep_in(msk_src, stride, x, y, 1);
}

// ---------------------------------------------------------------------------
// C-values (c_values.rs).

// What the c-value of a sample depends on besides the counts.
struct Tables {
    const unsigned *active;   // per counted value: bit d set when step d + 1 counts
    const float *reciprocal;  // libvmaf's reciprocal_lut
    const int *weights;       // contrast weights of steps 1, 2, ...
    unsigned base;            // lowest counted value
    unsigned band;            // number of counted values
};

// The histogram row of a sample, or UNCOUNTED (unmasked or outside the band).
__device__ __forceinline__ unsigned sample_key(unsigned short v, unsigned short m,
                                               const Tables &t) {
    const unsigned row = (unsigned short)(v - (unsigned short)t.base);
    return (m != 0 && row < t.band) ? row : UNCOUNTED;
}

// The rows the histograms cover when row i's c-values are (last) computed
// by libvmaf's loops: [rows_lo, rows_hi] (c_values.rs `compute`; rows past
// the picture up to key_rows are what the buffer holds there).
__device__ __forceinline__ int rows_lo(int i, int pad) { return imax(0, i - pad); }
__device__ __forceinline__ int rows_hi(int i, int pad, int h, int key_rows) {
    return imin(key_rows - 1, imax(pad - 1, imin(i + pad, h - 1)));
}

// The histograms: u16 counts, two values of a column to a 32-bit word
// (values 2m and 2m + 1 of column c: word m * hist_stride + c, the odd
// value in the high half), updated by 32-bit atomics so that a thread never
// waits for its read-modify-writes and the K threads of a column may update
// it at once. With one thread per column a warp's lanes (consecutive
// columns) touch distinct banks; with several, the column's threads touch
// words of different values, so each value's row is one word longer than
// the block is wide, which spreads them over the banks.
template <int TW, int K> struct HistLayout {
    static constexpr unsigned stride = TW + (K > 1 ? 1 : 0);
    __device__ __forceinline__ static unsigned word(unsigned v, unsigned c) {
        return (v >> 1) * stride + c;
    }
    __device__ __forceinline__ static unsigned shift(unsigned v) { return (v & 1u) << 4; }
    // Words of `band` values.
    __device__ __forceinline__ static unsigned words(unsigned band) {
        return ((band + 1) >> 1) * stride;
    }
};

template <int TW, int K>
__device__ __forceinline__ unsigned hist_count(const unsigned *hist, unsigned v, unsigned c) {
    typedef HistLayout<TW, K> L;
    return (hist[L::word(v, c)] >> L::shift(v)) & 0xFFFFu;
}

extern __shared__ unsigned int cambi_shared[];

// Applies a run of `run` equal (leaving, entering) key pairs to column c's
// histogram. A count never goes below zero, whatever order the column's
// threads apply their pairs in (a step removes only samples its window
// holds), so no borrow crosses into the word's other half.
template <int TW, int K>
__device__ __forceinline__ void apply_pair(unsigned *hist, unsigned c, unsigned pair,
                                           unsigned run) {
    typedef HistLayout<TW, K> L;
    const unsigned out = pair & 0xFFFFu, in = pair >> 16;
    if (out == in) return;
    if (out != UNCOUNTED) atomicSub(&hist[L::word(out, c)], run << L::shift(out));
    if (in != UNCOUNTED) atomicAdd(&hist[L::word(in, c)], run << L::shift(in));
}

// r % ring for 0 <= r < 65536 by a multiply-high with magic = ceil(2^32 /
// ring) (exact while r * (magic * ring - 2^32) < 2^32, and magic * ring -
// 2^32 < ring <= 65536): a division's ~20 instructions are 3.
__device__ __forceinline__ int ring_slot(int r, int ring, unsigned magic) {
    return r - (int)__umulhi((unsigned)r, magic) * ring;
}

// libvmaf's row order as a walk: steps that move the histograms' rows by
// one (a leaving row, an entering row, or both) and the rows whose
// c-values are computed in between.
struct RowWalk {
    int lo, hi; // rows in the histograms (none while hi < lo)
    int i;      // next row to compute
};

#define WALK_DONE 0
#define WALK_STEP 1
#define WALK_ROW 2

__device__ __forceinline__ int walk_next(RowWalk &w, int pad, int h, int key_rows, int y1,
                                         int &out_r, int &in_r) {
    if (w.i >= y1) return WALK_DONE;
    const int want_lo = rows_lo(w.i, pad), want_hi = rows_hi(w.i, pad, h, key_rows);
    if (w.lo < want_lo || w.hi < want_hi) {
        out_r = (w.lo < want_lo && w.lo <= w.hi) ? w.lo : -1;
        in_r = w.hi < want_hi ? w.hi + 1 : -1;
        if (w.lo < want_lo) ++w.lo;
        if (w.hi < want_hi) ++w.hi;
        return WALK_STEP;
    }
    ++w.i;
    return WALK_ROW;
}

// Keys loaded per thread and round (issued together).
#define LOADS 8

// One scale of a c-values launch: its planes, outputs and blocks.
struct CScale {
    const unsigned short *img, *msk;
    float *c_values;
    unsigned *bins; // BINS1 pooling counts
    int w, h, key_cols, key_rows, rows_per_block;
    int col_blocks; // blocks across the scale
    int first;      // first block of the scale in the launch
    int unused;
};

struct CLaunch {
    CScale s[SCALES];
    int scales, stride, pad, ring; // ring: rows of keys kept (>= 2 pad + 1 + BATCH)
};

// Grid: the scales' blocks one after another (1-D), TW * K threads each:
// K neighbouring lanes per column (column t / K, part t % K). A block owns
// TW columns and rows_per_block rows of one scale. Dynamic shared memory:
// HistLayout::words(band) histogram words, ring * (TW + 2 pad) u16 keys
// (rounded up to words), BATCH * (TW + 2 pad) staged pairs, BATCH *
// (ceil((TW + 2 pad) / 32) + 1) words of their run starts, 2 BATCH step
// rows, 2 BATCH + 2 events of the batch's walk and 8 words of its plan,
// BINS1 pooling counts (SHARED_BINS). Entry points below, one per block
// shape.
template <int TW, int K, int BATCH, bool SHARED_BINS>
__device__ __forceinline__ void c_values(const CLaunch &launch, const Tables &tables) {
    static_assert(K == 1 || K == 2 || K == 4, "1, 2 or 4 threads per column");
    constexpr int NT = TW * K;
    typedef HistLayout<TW, K> L;
    int si = 0;
    while (si + 1 < launch.scales && (int)blockIdx.x >= launch.s[si + 1].first) ++si;
    const CScale &sc = launch.s[si];
    const unsigned short *__restrict__ img = sc.img;
    const unsigned short *__restrict__ msk = sc.msk;
    const int stride = launch.stride, pad = launch.pad, ring = launch.ring;
    const int w = sc.w, h = sc.h, key_cols = sc.key_cols, key_rows = sc.key_rows;
    const int block = (int)blockIdx.x - sc.first;
    unsigned *hist = cambi_shared;
    const unsigned hist_words = L::words(tables.band);
    const int staged = TW + 2 * pad;
    unsigned short *keys = (unsigned short *)(cambi_shared + hist_words);
    unsigned *pairs = cambi_shared + hist_words + (ring * staged + 1) / 2;
    // Per staged step, bit j set where pair j starts a run (differs from
    // pair j - 1), one word past the staged columns' words.
    const int run_words = (staged + 31) / 32 + 1;
    unsigned *run_starts = pairs + BATCH * staged;
    // The batch's steps: (leaving, entering) rows, -1 for none.
    int *step_rows = (int *)(run_starts + BATCH * run_words);
    // The batch's walk: EVENTS rows and steps at most (BATCH steps and the
    // row after each, where the window slides by one; more rows than that
    // between steps only near small pictures' edges, which then take more
    // batches).
    constexpr int EVENTS = 2 * BATCH + 2, PLAN = 8;
    int *events = step_rows + 2 * BATCH;
    // The batch's plan: steps, events, entering rows, the walk after it.
    int *plan = events + EVENTS;
    // The pooling counts: the block's own in shared memory, added to the
    // scale's at the end, or the scale's.
    unsigned *bins = SHARED_BINS ? (unsigned *)(plan + PLAN) : sc.bins;
    const unsigned magic = 0xFFFFFFFFu / (unsigned)ring + 1u;
    const unsigned t = threadIdx.x;
    // This thread's column (in the block) and part of the column's window.
    const unsigned col = t / K, part = t % K;
    const int x0 = (block % sc.col_blocks) * TW;
    const int x = x0 + (int)col;
    const int y0 = (block / sc.col_blocks) * sc.rows_per_block;
    const int y1 = imin(y0 + sc.rows_per_block, h);
    // The ring loads' (row, staged column) of key index t, and how far NT
    // indices move them: divisions once per block.
    const int load_r0 = (int)t / staged, load_c0 = (int)t % staged;
    const int load_dr = NT / staged, load_dc = NT % staged;

    for (unsigned i = t; i < hist_words; i += NT) cambi_shared[i] = 0;
    if (SHARED_BINS)
        for (unsigned i = t; i < BINS1; i += NT) bins[i] = 0;

    // This thread's pooling counts as a run of one bin (a column's
    // consecutive c-values mostly share their top bits): one atomic
    // per change of bin instead of one per value.
    unsigned run_bin = 0, run_count = 0;

    RowWalk walk;
    walk.lo = rows_lo(y0, pad);
    walk.hi = walk.lo - 1;
    walk.i = y0;
    while (walk.i < y1) {
        // The next BATCH steps and the rows between them, walked once, by
        // one thread: the steps' rows, the entering rows' range and the
        // batch's events in order (a row's index, or -1 for the next
        // step), at most EVENTS; the counts and the walk after them to
        // every thread through shared memory.
        if (t == 0) {
            RowWalk ahead = walk;
            int n = 0, n_events = 0, first_in = walk.hi + 1, last_in = walk.hi;
            for (;;) {
                const RowWalk before = ahead;
                int out_r = -1, in_r = -1;
                const int e = walk_next(ahead, pad, h, key_rows, y1, out_r, in_r);
                if (e == WALK_DONE) break;
                if (n_events == EVENTS || (e == WALK_STEP && n == BATCH)) {
                    ahead = before;
                    break;
                }
                if (e == WALK_ROW) {
                    events[n_events] = ahead.i - 1;
                    ++n_events;
                    continue;
                }
                if (in_r >= 0) last_in = in_r;
                step_rows[2 * n] = out_r;
                step_rows[2 * n + 1] = in_r;
                events[n_events] = -1;
                ++n;
                ++n_events;
            }
            plan[0] = n;
            plan[1] = n_events;
            plan[2] = first_in;
            plan[3] = last_in;
            plan[4] = ahead.lo;
            plan[5] = ahead.hi;
            plan[6] = ahead.i;
        }
        __syncthreads();
        const int n = plan[0], n_events = plan[1], first_in = plan[2], last_in = plan[3];
        // Keys of the entering rows into the ring (row r at slot r % ring),
        // LOADS independent loads per thread at a time. Rows in the ring:
        // the histograms' (at most 2 pad + 1) and these (at most BATCH).
        const int load_total = (last_in - first_in + 1) * staged;
        int load_r = load_r0, load_c = load_c0;
        for (int base = 0; base < load_total; base += LOADS * NT) {
            unsigned k[LOADS];
            int slot[LOADS];
#pragma unroll
            for (int q = 0; q < LOADS; ++q) {
                const int idx = base + q * NT + (int)t;
                const int r = first_in + load_r, c = x0 - pad + load_c;
                k[q] = UNCOUNTED;
                slot[q] = -1;
                if (idx < load_total) {
                    slot[q] = ring_slot(r, ring, magic) * staged + load_c;
                    if (c >= 0 && c < key_cols) {
                        const u64 at = (u64)r * stride + c;
                        k[q] = sample_key(img[at], msk[at], tables);
                    }
                }
                load_r += load_dr;
                load_c += load_dc;
                if (load_c >= staged) {
                    load_c -= staged;
                    ++load_r;
                }
            }
#pragma unroll
            for (int q = 0; q < LOADS; ++q) {
                if (slot[q] >= 0) keys[slot[q]] = (unsigned short)k[q];
            }
        }
        __syncthreads();
        // The batch's (leaving, entering) pairs from the ring.
        {
            for (int b = 0; b < n; ++b) {
                const int out_r = step_rows[2 * b], in_r = step_rows[2 * b + 1];
                const unsigned short *ko =
                    keys + (out_r >= 0 ? ring_slot(out_r, ring, magic) : 0) * staged;
                const unsigned short *ki =
                    keys + (in_r >= 0 ? ring_slot(in_r, ring, magic) : 0) * staged;
                unsigned *p = pairs + b * staged;
                unsigned *starts = run_starts + b * run_words;
                // Every lane of each 32-lane group takes part (the group's
                // bits meet by a ballot): the bound is the block's.
                for (int j0 = 0; j0 < staged; j0 += NT) {
                    const int j = j0 + (int)t;
                    unsigned start = 1u; // past the staged columns: masked off
                    if (j < staged) {
                        const unsigned o = out_r >= 0 ? ko[j] : UNCOUNTED;
                        const unsigned in = in_r >= 0 ? ki[j] : UNCOUNTED;
                        const unsigned pair = o | (in << 16);
                        p[j] = pair;
                        if (j > 0) {
                            const unsigned o1 = out_r >= 0 ? ko[j - 1] : UNCOUNTED;
                            const unsigned in1 = in_r >= 0 ? ki[j - 1] : UNCOUNTED;
                            start = pair != (o1 | (in1 << 16)) ? 1u : 0u;
                        }
                    }
                    const unsigned word = lane_bits(start);
                    if ((t & 31u) == 0 && (j >> 5) < run_words) starts[j >> 5] = word;
                }
            }
        }
        __syncthreads();
        // The batch's events in order: apply each step to this thread's
        // column, compute the rows in between.
        int b = 0;
        for (int q = 0; q < n_events; ++q) {
            const int event = events[q];
            if (event < 0) {
                // This thread's part of its column's window: the staged
                // columns [s0, e0), a K-th of col .. col + 2 pad (a part
                // past a small window, 2 pad + 1 < K, has none). Its runs
                // of equal pairs are read off the run starts, 32 columns
                // a word: a pair is loaded, and applied, once per run.
                const unsigned *p = pairs + b * staged;
                const unsigned *starts = run_starts + b * run_words;
                const int span = (2 * pad + K) / K;
                const int s0 = (int)col + (int)part * span;
                const int e0 = imin((int)col + 2 * pad + 1, s0 + span);
                if (s0 < e0) {
                    int run_at = s0;
                    unsigned pair = p[s0];
                    for (int pos = s0 + 1; pos < e0; pos += 32) {
                        const int word = pos >> 5;
                        const u64 both = ((u64)starts[word + 1] << 32) | starts[word];
                        unsigned m = (unsigned)(both >> (pos & 31));
                        if (e0 - pos < 32) m &= (1u << (e0 - pos)) - 1u;
                        while (m != 0) {
                            const int at = pos + __ffs(m) - 1;
                            m &= m - 1u;
                            apply_pair<TW, K>(hist, col, pair, (unsigned)(at - run_at));
                            run_at = at;
                            pair = p[at];
                        }
                    }
                    apply_pair<TW, K>(hist, col, pair, (unsigned)(e0 - run_at));
                }
                // The column's counts are read next by its K lanes.
                if (K > 1) lane_sync();
                ++b;
                continue;
            }
            // Row `event`: its keys are in the ring (it lies in the
            // histograms' rows). The column's K lanes share the contrast
            // steps d (the k-th active one goes to part k % K) and meet by
            // shuffles: every lane of the warp takes part.
            const int i = event;
            const unsigned key =
                x < w ? keys[ring_slot(i, ring, magic) * staged + (int)col + pad] : UNCOUNTED;
            float c_value = 0.0f;
            if (key != UNCOUNTED) {
                const unsigned p0 = hist_count<TW, K>(hist, key, col);
                unsigned steps = tables.active[key];
                unsigned nth = 0;
                while (steps != 0) {
                    const unsigned d = __ffs(steps) - 1;
                    steps &= steps - 1;
                    if (nth++ % K != part) continue;
                    const unsigned up = key + d + 1;
                    const unsigned above = up < tables.band ? hist_count<TW, K>(hist, up, col) : 0u;
                    const unsigned below =
                        key > d ? hist_count<TW, K>(hist, key - d - 1, col) : 0u;
                    const unsigned p = above > below ? above : below;
                    const unsigned product = (unsigned)tables.weights[d] * p0 * p;
                    const float value =
                        __fmul_rn(__int2float_rn((int)product), tables.reciprocal[p + p0]);
                    if (value > c_value) c_value = value;
                }
            }
            if (K > 1) {
                // The largest of the parts' (c-values are >= 0, never NaN).
#pragma unroll
                for (int m = K / 2; m > 0; m /= 2) {
                    const float other = lane_xor(c_value, m, K);
                    if (other > c_value) c_value = other;
                }
                // The next step may change counts this row read.
                lane_sync();
            }
            if (x < w && part == 0) {
                sc.c_values[(u64)i * w + x] = c_value;
                if (c_value != 0.0f) {
                    const unsigned bin = __float_as_uint(c_value) >> 20;
                    if (bin != run_bin) {
                        if (run_count != 0) atomicAdd(&bins[run_bin], run_count);
                        run_bin = bin;
                        run_count = 0;
                    }
                    ++run_count;
                }
            }
        }
        walk.lo = plan[4];
        walk.hi = plan[5];
        walk.i = plan[6];
        __syncthreads();
    }
    if (run_count != 0) atomicAdd(&bins[run_bin], run_count);
    if (SHARED_BINS) {
        __syncthreads();
        for (unsigned i = t; i < BINS1; i += NT) {
            if (bins[i] != 0) atomicAdd(&sc.bins[i], bins[i]);
        }
    }
}

// CUDA: 32 columns, 4 threads each, 16 steps a batch, pooling counts
// straight to global memory: ~48 KB a block at the defaults, four blocks
// an SM (the shared pooling counts, 8 KB, would cost one).
extern "C" __global__ void __launch_bounds__(128) cambi_c_values(CLaunch launch, Tables tables) {
    c_values<32, 4, 16, false>(launch, tables);
}

// AMD: 32 columns, 2 threads each (one 64-wide wave), 8 steps a batch,
// within a block's 64 KiB.
extern "C" __global__ void __launch_bounds__(64)
    cambi_c_values_wave64(CLaunch launch, Tables tables) {
    c_values<32, 2, 8, true>(launch, tables);
}

// ---------------------------------------------------------------------------
// Pooling: the sum of each scale's k largest c-values.

// Where each scale's c-values are and how many the pooling takes.
struct ScaleSet {
    unsigned offset[SCALES];    // first c-value of the scale
    unsigned count[SCALES];     // w * h
    unsigned k[SCALES];         // values pooled, >= 1
    unsigned first[SCALES + 1]; // the scale's select blocks: first[s] .. first[s + 1]
};

// The scale of select block `b` (1-D grid over every scale's blocks).
__device__ __forceinline__ int select_scale(const ScaleSet &set, unsigned b) {
    int s = 0;
    while (s + 1 < SCALES && b >= set.first[s + 1]) ++s;
    return s;
}

// Values per thread and iteration of the select scans (independent loads).
#define SELECT_UNROLL 4

// Finds, among `n` bins of `counts` (in shared memory), the bin holding the
// `k`-th largest value counting from the top bin: writes the bin (-1 when
// the bins hold fewer than k values) and k less the values in higher bins.
// Every thread must call; SELECT_THREADS threads.
__device__ void find_bin(const unsigned *counts, int n, unsigned k, unsigned *seg, int *bin,
                         unsigned *rest) {
    const int t = threadIdx.x;
    const int per = n / SELECT_THREADS;
    unsigned s = 0;
    for (int i = 0; i < per; ++i) s += counts[t * per + i];
    seg[t] = s;
    __syncthreads();
    if (t == 0) {
        unsigned acc = 0;
        int found = -1;
        unsigned left = k;
        for (int g = SELECT_THREADS - 1; g >= 0 && found < 0; --g) {
            if (acc + seg[g] >= k) {
                for (int i = per - 1; i >= 0; --i) {
                    const unsigned c = counts[g * per + i];
                    if (acc + c >= k) {
                        found = g * per + i;
                        left = k - acc;
                        break;
                    }
                    acc += c;
                }
            } else {
                acc += seg[g];
            }
        }
        *bin = found;
        *rest = left;
    }
    __syncthreads();
}

struct Selection {
    int b1, b2;
    unsigned k2, k3;
};

// Levels 1 and 2 of scale s's selection (level 2 only when `level2`).
__device__ void select_levels(const unsigned *bins1, const unsigned *bins2, unsigned k,
                              bool level2, Selection *sel) {
    __shared__ unsigned counts[BINS1];
    __shared__ unsigned seg[SELECT_THREADS];
    __shared__ int bin;
    __shared__ unsigned rest;
    for (int i = threadIdx.x; i < BINS1; i += SELECT_THREADS) counts[i] = bins1[i];
    __syncthreads();
    find_bin(counts, BINS1, k, seg, &bin, &rest);
    Selection s;
    s.b1 = bin;
    s.k2 = rest;
    s.b2 = -1;
    s.k3 = 0;
    if (level2 && s.b1 >= 0) {
        for (int i = threadIdx.x; i < BINS2; i += SELECT_THREADS) counts[i] = bins2[i];
        __syncthreads();
        find_bin(counts, BINS2, s.k2, seg, &bin, &rest);
        s.b2 = bin;
        s.k3 = rest;
    }
    *sel = s;
}

// Level 2 counts: bits 19..10 of the values in level-1 bin b1. Grid: every
// scale's blocks (ScaleSet::first).
extern "C" __global__ void __launch_bounds__(SELECT_THREADS)
    cambi_select_level2(const float *c_values, ScaleSet set, const unsigned *bins1,
                        unsigned *bins2) {
    __shared__ unsigned local[BINS2];
    const int s = select_scale(set, blockIdx.x);
    const unsigned block = blockIdx.x - set.first[s], blocks = set.first[s + 1] - set.first[s];
    Selection sel;
    select_levels(bins1 + s * BINS1, 0, set.k[s], false, &sel);
    if (sel.b1 < 0) return;
    for (int i = threadIdx.x; i < BINS2; i += SELECT_THREADS) local[i] = 0;
    __syncthreads();
    const unsigned *v = (const unsigned *)(c_values + set.offset[s]);
    const unsigned n = set.count[s], step = blocks * SELECT_THREADS;
    for (unsigned i0 = block * SELECT_THREADS + threadIdx.x; i0 < n; i0 += SELECT_UNROLL * step) {
        unsigned bits[SELECT_UNROLL];
#pragma unroll
        for (int q = 0; q < SELECT_UNROLL; ++q) {
            const unsigned i = i0 + q * step;
            bits[q] = i < n ? v[i] : 0u;
        }
#pragma unroll
        for (int q = 0; q < SELECT_UNROLL; ++q) {
            if ((int)(bits[q] >> 20) == sel.b1 && bits[q] != 0)
                atomicAdd(&local[(bits[q] >> 10) & 1023u], 1u);
        }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < BINS2; i += SELECT_THREADS) {
        if (local[i] != 0) atomicAdd(&bins2[s * BINS2 + i], local[i]);
    }
}

// Level 3 counts (bits 9..0 of the values in level-2 bin b2 of bin b1) and
// the double sum of every value above them; one partial per block (each
// thread adds its values in index order, then the block's fixed tree).
extern "C" __global__ void __launch_bounds__(SELECT_THREADS)
    cambi_select_level3(const float *c_values, ScaleSet set, const unsigned *bins1,
                        const unsigned *bins2, unsigned *bins3, double *partials) {
    __shared__ unsigned local[BINS3];
    __shared__ double scratch[SELECT_THREADS];
    const int s = select_scale(set, blockIdx.x);
    const unsigned block = blockIdx.x - set.first[s], blocks = set.first[s + 1] - set.first[s];
    Selection sel;
    select_levels(bins1 + s * BINS1, bins2 + s * BINS2, set.k[s], true, &sel);
    for (int i = threadIdx.x; i < BINS3; i += SELECT_THREADS) local[i] = 0;
    __syncthreads();
    const unsigned *v = (const unsigned *)(c_values + set.offset[s]);
    const unsigned n = set.count[s], step = blocks * SELECT_THREADS;
    double sum = 0.0;
    for (unsigned i0 = block * SELECT_THREADS + threadIdx.x; i0 < n; i0 += SELECT_UNROLL * step) {
        unsigned bits[SELECT_UNROLL];
#pragma unroll
        for (int q = 0; q < SELECT_UNROLL; ++q) {
            const unsigned i = i0 + q * step;
            bits[q] = i < n ? v[i] : 0u;
        }
#pragma unroll
        for (int q = 0; q < SELECT_UNROLL; ++q) {
            if (bits[q] == 0) continue;
            const int b1 = (int)(bits[q] >> 20), b2 = (int)((bits[q] >> 10) & 1023u);
            if (b1 > sel.b1 || (b1 == sel.b1 && b2 > sel.b2)) {
                sum += (double)__uint_as_float(bits[q]);
            } else if (b1 == sel.b1 && b2 == sel.b2) {
                atomicAdd(&local[bits[q] & 1023u], 1u);
            }
        }
    }
    const double total = block_sum_f64(sum, scratch);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
    for (int i = threadIdx.x; i < BINS3; i += SELECT_THREADS) {
        if (local[i] != 0) atomicAdd(&bins3[s * BINS3 + i], local[i]);
    }
}

// Per scale (one block each): the partials in order, plus the level-3 bins
// above the k-th value and the k-th value itself as often as it is taken.
extern "C" __global__ void __launch_bounds__(SELECT_THREADS)
    cambi_select_finish(ScaleSet set, const unsigned *bins1, const unsigned *bins2,
                        const unsigned *bins3, const double *partials, double *out) {
    __shared__ double scratch[SELECT_THREADS];
    __shared__ unsigned counts[BINS3];
    __shared__ unsigned seg[SELECT_THREADS];
    __shared__ int bin;
    __shared__ unsigned rest;
    const int s = blockIdx.x;
    Selection sel;
    select_levels(bins1 + s * BINS1, bins2 + s * BINS2, set.k[s], true, &sel);
    double sum = 0.0;
    for (unsigned i = set.first[s] + threadIdx.x; i < set.first[s + 1]; i += SELECT_THREADS)
        sum += partials[i];
    double total = block_sum_f64(sum, scratch);
    if (sel.b1 >= 0) {
        for (int i = threadIdx.x; i < BINS3; i += SELECT_THREADS) counts[i] = bins3[s * BINS3 + i];
        __syncthreads();
        find_bin(counts, BINS3, sel.k3, seg, &bin, &rest);
        if (threadIdx.x == 0) {
            const unsigned high = (unsigned)sel.b1 << 20 | (unsigned)sel.b2 << 10;
            // Counts and values are exact in double (< 2^24 each).
            for (int i = BINS3 - 1; i > bin; --i) {
                if (counts[i] != 0)
                    total += (double)counts[i] * (double)__uint_as_float(high | (unsigned)i);
            }
            total += (double)rest * (double)__uint_as_float(high | (unsigned)bin);
        }
    }
    if (threadIdx.x == 0) out[s] = total;
}
