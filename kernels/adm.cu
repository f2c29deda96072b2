// Integer ADM (libvmaf 3.2.0's integer_adm) as src/feature/adm/ computes
// it, bit for bit. One kernel per scale (adm_scale0_*, adm_scale{1,2,3}_*)
// does all of that scale's work for a tile of coefficients: the db2 DWT of
// both pictures (of the picture at scale 0, of the previous scale's
// approximation after), the approximation for the next scale, then over
// the scored region decoupling, contrast masking and the cube sums, summed
// per row; the last tile of a row rounds and shifts the row's sums like the
// CPU and adds them to the frame's totals. Every width, rounding and wrap
// follows the CPU code; the host finishes the integer totals with the CPU's
// own float functions.

#include "common.cuh"

typedef unsigned int u32;

// db2 analysis filters in Q15 and the low-pass sum (feature/adm/tables.rs).
__device__ __constant__ int DB2_LO[4] = {15826, 27411, 7345, -4240};
__device__ __constant__ int DB2_HI[4] = {-4240, -7345, 27411, -15826};
#define DB2_LO_SUM 46342

// Masking filters: 1/15 and 1/30 in Q17 (scale 0) and Q32 (scales 1-3).
#define ONE_BY_15 8738
#define ONE_BY_30 4369
#define I4_ONE_BY_15 286331153ll
#define I4_ONE_BY_30 143165577ll

// A tile is 32 coefficients wide; its blocks have 256 threads, each owning
// CPT consecutive coefficients of one tile row (the tile is 256 * CPT / 32
// rows high).
#define TILE_W 32
#define THREADS 256
// Blocks per SM the register allocation must allow.
#ifndef FINE_BLOCKS
#define FINE_BLOCKS 3
#endif
#ifndef COARSE_BLOCKS
#define COARSE_BLOCKS 3
#endif
// Per-row sums of a scale: ADM numerator (h, v, d), AIM numerator (h, v,
// d), reference energy (h, v, d).
#define SUMS 9

// libvmaf's mirrored tap position: -k for k < 0, 2n - k - 1 past the end.
__device__ inline int mirror(int k, int n) {
    if (k < 0) return -k;
    if (k >= n) return 2 * n - k - 1;
    return k;
}

// The masking neighbourhood's edges: -1 mirrors to 1, n repeats n - 1
// (positions further out, in tiles past the band, also read n - 1).
__device__ inline int neighbour_index(int k, int n) {
    if (k < 0) k = -k;
    return k >= n ? n - 1 : k;
}

// |x| wrapping like Rust's wrapping_abs (INT_MIN stays INT_MIN).
__device__ inline int wabs(int x) { return x < 0 ? (int)(0u - (u32)x) : x; }

// A 4-tap filter in a wrapping int32 accumulator (scale 0).
__device__ inline int filter32(const int *f, const int *s) {
    u32 acc = (u32)f[0] * (u32)s[0] + (u32)f[1] * (u32)s[1] + (u32)f[2] * (u32)s[2] +
              (u32)f[3] * (u32)s[3];
    return (int)acc;
}

// A 4-tap filter in int64 (scales 1-3).
__device__ inline i64 filter64(const int *f, const int *s) {
    return (i64)f[0] * s[0] + (i64)f[1] * s[1] + (i64)f[2] * s[2] + (i64)f[3] * s[3];
}

// `(uint32_t)pow(2, shift - 1)`: the rounding term of a shift.
__device__ inline i64 half(int shift) { return shift == 0 ? 0 : (i64)1 << (shift - 1); }

// ---------------------------------------------------------------------
// DWT sources. `run<N>(p, i, j0, ...)` computes the approximation and the
// h, v, d bands of picture p (0 reference, 1 distorted) at N consecutive
// positions j0.. of band row i, all inside the band; the vertical pass of
// each input column is shared by the outputs that read it.

// Scale 0: the luma planes. With `overrun`, the last column's
// approximation and v band use unmirrored taps that continue into the
// high-pass row, as libvmaf's AVX-512 code does (feature/adm/dwt.rs).
template <typename T>
struct Picture {
    typedef short A;
    const T *plane[2];
    u32 pitch[2];
    int w, h, bit_depth, bw;
    int overrun;

    // Vertical pass at column c of the four rows: 16-bit low and high
    // pass, the low pass centred on zero.
    __device__ void vertical(const T *const *rows, int c, int *lo, int *hi) const {
        int s[4] = {(int)rows[0][c], (int)rows[1][c], (int)rows[2][c], (int)rows[3][c]};
        int round = 1 << (bit_depth - 1);
        u32 l = (u32)filter32(DB2_LO, s) - (u32)(DB2_LO_SUM * round);
        *lo = (short)((int)(l + (u32)round) >> bit_depth);
        *hi = (short)((int)((u32)filter32(DB2_HI, s) + (u32)round) >> bit_depth);
    }

    __device__ static int hpass(const int *f, const int *s) {
        return (short)((int)((u32)filter32(f, s) + (1u << 15)) >> 16);
    }

    template <int N>
    __device__ void run(int p, int i, int j0, int *a, int *bh, int *bv, int *bd) const {
        const T *rows[4];
        #pragma unroll
        for (int t = 0; t < 4; t++) {
            u64 row = (u64)mirror(2 * i - 1 + t, h);
            rows[t] = (const T *)((const char *)plane[p] + row * pitch[p]);
        }
        int lo[2 * N + 2], hi[2 * N + 2];
        #pragma unroll
        for (int c = 0; c < 2 * N + 2; c++) {
            vertical(rows, mirror(2 * j0 - 1 + c, w), &lo[c], &hi[c]);
        }
        #pragma unroll
        for (int q = 0; q < N; q++) {
            a[q] = hpass(DB2_LO, lo + 2 * q);
            bv[q] = hpass(DB2_HI, lo + 2 * q);
            bh[q] = hpass(DB2_LO, hi + 2 * q);
            bd[q] = hpass(DB2_HI, hi + 2 * q);
        }
        int j = j0 + N - 1;
        if (overrun && j == bw - 1) {
            int s[4];
            #pragma unroll
            for (int t = 0; t < 4; t++) {
                int col = 2 * j - 1 + t, l, hh;
                if (col < w) {
                    vertical(rows, col, &l, &hh);
                    s[t] = l;
                } else {
                    vertical(rows, col - w, &l, &hh);
                    s[t] = hh;
                }
            }
            a[N - 1] = hpass(DB2_LO, s);
            bv[N - 1] = hpass(DB2_HI, s);
        }
    }
};

// Vertical pass of scales 1-3 at column c (rows: input row indices).
template <typename In>
__device__ inline int vertical_coarse(const In *src, int iw, const int *rows, int c,
                                      const int *f, i64 add, int shift) {
    int s[4];
    #pragma unroll
    for (int t = 0; t < 4; t++) s[t] = (int)src[(u64)rows[t] * iw + c];
    return (int)((filter64(f, s) + add) >> shift);
}

// Scales 1-3: both pictures' approximations of the previous scale (iw x ih
// each). With `overrun`, the last column uses unmirrored taps reading past
// each vertical-pass row into the next one of libvmaf's scratch
// (reference low, reference high, distorted low, distorted high, then what
// the previous scale left there: `stale`).
template <typename In, typename Prev>
struct Approx {
    typedef int A;
    const In *in;
    int iw, ih, bw;
    i64 vadd, hadd;
    int vshift, hshift;
    int overrun;
    // The previous scale, whose last vertical-pass row the scratch still
    // holds past this scale's rows; `prev` null: nothing was written there
    // (zeros).
    const Prev *prev;
    int prev_iw, prev_ih, prev_oh;
    i64 prev_add;
    int prev_shift;

    __device__ int stale(int k) const {
        if (!prev) return 0;
        u64 flat = 4 * (u64)iw + k;
        int b = (int)(flat / prev_iw), c = (int)(flat % prev_iw);
        int rows[4];
        #pragma unroll
        for (int t = 0; t < 4; t++) rows[t] = mirror(2 * (prev_oh - 1) - 1 + t, prev_ih);
        const Prev *src = prev + (u64)(b / 2) * prev_iw * prev_ih;
        return vertical_coarse(src, prev_iw, rows, c, b % 2 == 0 ? DB2_LO : DB2_HI, prev_add,
                               prev_shift);
    }

    __device__ int hpass(const int *f, const int *s) const {
        return (int)((filter64(f, s) + hadd) >> hshift);
    }

    template <int N>
    __device__ void run(int p, int i, int j0, int *a, int *bh, int *bv, int *bd) const {
        const In *src = in + (u64)iw * ih * p;
        int rows[4];
        #pragma unroll
        for (int t = 0; t < 4; t++) rows[t] = mirror(2 * i - 1 + t, ih);
        int lo[2 * N + 2], hi[2 * N + 2];
        #pragma unroll
        for (int c = 0; c < 2 * N + 2; c++) {
            int col = mirror(2 * j0 - 1 + c, iw);
            lo[c] = vertical_coarse(src, iw, rows, col, DB2_LO, vadd, vshift);
            hi[c] = vertical_coarse(src, iw, rows, col, DB2_HI, vadd, vshift);
        }
        int j = j0 + N - 1;
        if (overrun && j == bw - 1) {
            #pragma unroll
            for (int t = 0; t < 4; t++) {
                int col = 2 * j - 1 + t, c = 2 * (N - 1) + t;
                if (col < iw) {
                    lo[c] = vertical_coarse(src, iw, rows, col, DB2_LO, vadd, vshift);
                    hi[c] = vertical_coarse(src, iw, rows, col, DB2_HI, vadd, vshift);
                } else {
                    int k = col - iw;
                    lo[c] = vertical_coarse(src, iw, rows, k, DB2_HI, vadd, vshift);
                    hi[c] = p == 0 ? vertical_coarse(in + (u64)iw * ih, iw, rows, k, DB2_LO,
                                                     vadd, vshift)
                                   : stale(k);
                }
            }
        }
        #pragma unroll
        for (int q = 0; q < N; q++) {
            a[q] = hpass(DB2_LO, lo + 2 * q);
            bv[q] = hpass(DB2_HI, lo + 2 * q);
            bh[q] = hpass(DB2_LO, hi + 2 * q);
            bd[q] = hpass(DB2_HI, hi + 2 * q);
        }
    }
};

// ---------------------------------------------------------------------
// Decoupling (feature/adm/decouple.rs)

// True when the (h, v) vectors are within 1 degree: libvmaf rounds the
// exact dot product and squared norms to float, then compares in double.
__device__ inline bool within_1deg(double cos_sq, float dot_f, float o_mag_f, float t_mag_f) {
    double dot = (double)dot_f / 4096.0;
    double o_mag = (double)o_mag_f / 4096.0;
    double t_mag = (double)t_mag_f / 4096.0;
    return dot >= 0.0 && __dmul_rn(dot, dot) >= __dmul_rn(__dmul_rn(cos_sq, o_mag), t_mag);
}

// The enhancement gain limit on an aligned pair's restored coefficient;
// a fractional product rounded to nearest (even) where libvmaf's vector
// code decouples the column, truncated where its scalar code does.
__device__ inline int gain_limited(int rst, int t, int o, int k, bool aligned,
                                   double gain_limit, bool nearest) {
    if (!(aligned && k > 0 && o != 0)) return rst;
    double boosted = __dmul_rn((double)rst, gain_limit);
    double tf = (double)t;
    double limited = o > 0 ? fmin(boosted, tf) : fmax(boosted, tf);
    return nearest ? __double2int_rn(limited) : __double2int_rz(limited);
}

// Scale 0: t / o in Q15 through the exact reciprocal trunc(2^30 / |o|).
__device__ inline int restore_fine(int o, int t, bool aligned, double gain_limit,
                                   bool nearest) {
    int k;
    if (o == 0) {
        k = 32768;
    } else {
        i64 recip = (1 << 30) / (o < 0 ? -o : o);
        if (o < 0) recip = -recip;
        i64 q = (recip * t + 16384) >> 15;
        k = (int)(q < 0 ? 0 : (q > 32768 ? 32768 : q));
    }
    int rst = (short)((k * o + 16384) >> 15);
    return (short)gain_limited(rst, t, o, k, aligned, gain_limit, nearest);
}

// Scales 1-3: the divisor reduced to its 15 most significant bits.
__device__ inline int restore_coarse(int o, int t, bool aligned, double gain_limit,
                                     bool nearest) {
    i64 k;
    if (o == 0) {
        k = 32768;
    } else {
        u32 abs_o = o < 0 ? 0u - (u32)o : (u32)o;
        int shift = abs_o < 32768 ? 0 : 17 - __clz(abs_o);
        u32 divisor = (abs_o + ((1u << shift) >> 1)) >> shift;
        i64 recip = (i64)((1u << 30) / divisor);
        if (o < 0) recip = -recip;
        i64 q = (recip * t + ((i64)1 << (14 + shift))) >> (15 + shift);
        k = q < 0 ? 0 : (q > 32768 ? 32768 : q);
    }
    int rst = (int)((k * o + 16384) >> 15);
    return gain_limited(rst, t, o, (int)k, aligned, gain_limit, nearest);
}

// Restored (r) and additive (a) parts of the three orientations.
__device__ inline void decouple_fine(const int *o, const int *t, double cos_sq,
                                     double gain_limit, bool nearest, int *r, int *a) {
    int oh = o[0], ov = o[1], th = t[0], tv = t[1];
    // Products of 16-bit values are exact in int32, their sums in double.
    double dot = (double)(oh * th) + (double)(ov * tv);
    double o_mag = (double)(oh * oh) + (double)(ov * ov);
    double t_mag = (double)(th * th) + (double)(tv * tv);
    bool aligned = within_1deg(cos_sq, (float)dot, (float)o_mag, (float)t_mag);
    #pragma unroll
    for (int k = 0; k < 3; k++) {
        r[k] = restore_fine(o[k], t[k], aligned, gain_limit, nearest);
        a[k] = (short)(t[k] - r[k]);
    }
}

__device__ inline void decouple_coarse(const int *o, const int *t, double cos_sq,
                                       double gain_limit, bool nearest, int *r, int *a) {
    u64 o0 = (u64)(i64)o[0], o1 = (u64)(i64)o[1], t0 = (u64)(i64)t[0], t1 = (u64)(i64)t[1];
    i64 dot = (i64)(o0 * t0 + o1 * t1);
    i64 o_mag = (i64)(o0 * o0 + o1 * o1);
    i64 t_mag = (i64)(t0 * t0 + t1 * t1);
    bool aligned = within_1deg(cos_sq, (float)dot, (float)o_mag, (float)t_mag);
    #pragma unroll
    for (int k = 0; k < 3; k++) {
        r[k] = restore_coarse(o[k], t[k], aligned, gain_limit, nearest);
        a[k] = (int)((u32)t[k] - (u32)r[k]);
    }
}

// ---------------------------------------------------------------------
// Contrast masking (feature/adm/cm.rs) and reference energy (den.rs)

struct Weights {
    i64 rfactor[3];
    int cube_shift[3];
    int den_square_shift, den_cube_shift;
};

// Scale 0 fixed point: Q21 (h, v) and Q23 (d) weights.
struct Fine {
    __device__ static int weighted(const Weights &w, int c, int theta) {
        const int shift[3] = {15, 15, 17};
        const int round[3] = {16384, 16384, 65535};
        return (short)(((int)w.rfactor[theta] * c + round[theta]) >> shift[theta]);
    }
    __device__ static int neighbour_mask(int x) {
        return (short)((ONE_BY_30 * wabs(x) + 2048) >> 12);
    }
    __device__ static int centre_mask(int x) { return (short)((ONE_BY_15 * wabs(x) + 2048) >> 12); }
    __device__ static int contrast(const Weights &w, int c, int theta) {
        return c * (int)w.rfactor[theta];
    }
    __device__ static i64 cube_above(const Weights &w, int x, int threshold, int theta) {
        const int threshold_shift[3] = {10, 10, 12};
        const int square_shift[3] = {29, 29, 30};
        int d = (int)((u32)wabs(x) - ((u32)threshold << threshold_shift[theta]));
        i64 v = d < 0 ? 0 : d;
        int sq = square_shift[theta];
        i64 v_sq = (i64)(int)((v * v + ((i64)1 << (sq - 1))) >> sq);
        int shift = w.cube_shift[theta];
        return (v_sq * v + half(shift)) >> shift;
    }
    __device__ static u64 energy(const Weights &, int c) {
        u64 a = (u64)(c < 0 ? -c : c);
        return a * a * a;
    }
    __device__ static void decouple(const int *o, const int *t, double cos_sq,
                                    double gain_limit, bool nearest, int *r, int *a) {
        decouple_fine(o, t, cos_sq, gain_limit, nearest, r, a);
    }
};

// Scales 1-3 fixed point: Q32 weights; the 1/15 and 1/30 filters round
// with a wrapped -2^31 (Netflix/vmaf#955).
struct Coarse {
    __device__ static int weighted(const Weights &w, int c, int theta) {
        return (int)((i64)((u64)w.rfactor[theta] * (u64)(i64)c + (1ull << 27)) >> 28);
    }
    __device__ static int neighbour_mask(int x) {
        return (int)((I4_ONE_BY_30 * (i64)wabs(x) + (i64)(-2147483647 - 1)) >> 32);
    }
    __device__ static int centre_mask(int x) {
        return (int)((I4_ONE_BY_15 * (i64)wabs(x) + (i64)(-2147483647 - 1)) >> 32);
    }
    __device__ static int contrast(const Weights &w, int c, int theta) {
        return weighted(w, c, theta);
    }
    __device__ static i64 cube_above(const Weights &w, int x, int threshold, int) {
        int d = (int)((u32)wabs(x) - (u32)threshold);
        i64 v = d < 0 ? 0 : d;
        i64 v_sq = (i64)(int)((v * v + (1ll << 29)) >> 30);
        int shift = w.cube_shift[0];
        return (v_sq * v + half(shift)) >> shift;
    }
    __device__ static u64 energy(const Weights &w, int c) {
        u64 a = (u64)(c < 0 ? 0u - (u32)c : (u32)c);
        int sq = w.den_square_shift, cube = w.den_cube_shift;
        return ((((a * a + (1ull << sq)) >> sq) * a) + (u64)half(cube)) >> cube;
    }
    __device__ static void decouple(const int *o, const int *t, double cos_sq,
                                    double gain_limit, bool nearest, int *r, int *a) {
        decouple_coarse(o, t, cos_sq, gain_limit, nearest, r, a);
    }
};


// ---------------------------------------------------------------------
// One scale

// Scoring parameters of a scale, and where its sums go.
struct Scoring {
    int score;  // 0: DWT (approximation) only
    int top, bottom, left, right;  // the scored region
    Weights w;
    double gain_limit, cos_sq;
    // Columns before it: libvmaf's vector decoupling (its rounding of a
    // fractional gain limit's products); from it: its scalar code.
    int nearest_end;
    u64 *row_sums;  // SUMS per region row, zero between frames
    u32 *row_tiles;  // tiles done per region row, zero between frames
    u64 *totals;     // SUMS, cleared before the frame
    int row_shift, den_row_shift;
    int tiles_per_row;  // tiles covering a region row
};

// values[k], k < N, without dynamic indexing (which would go to local
// memory).
template <int N, typename V>
__device__ inline V pick(const V *values, int k) {
    V v = values[0];
    #pragma unroll
    for (int m = 1; m < N; m++) v = k == m ? values[m] : v;
    return v;
}

// DWT of both pictures at the thread's N positions of band row i from j0;
// positions past the band read its last column (the masking
// neighbourhood's repeat). Needs bw >= N (the host picks N = 1 for
// narrower bands).
template <int N, class Src>
__device__ void dwt_pair(const Src &src, int bw, int i, int j0, int a[2][N], int o[N][3],
                         int t[N][3]) {
    // The run from j0, or, past the band, the run ending at its last
    // column, which holds every position needed.
    int start = j0 + N <= bw ? j0 : bw - N;
    int ra[2][N], rh[2][N], rv[2][N], rd[2][N];
    #pragma unroll
    for (int p = 0; p < 2; p++) src.template run<N>(p, i, start, ra[p], rh[p], rv[p], rd[p]);
    #pragma unroll
    for (int q = 0; q < N; q++) {
        int k = neighbour_index(j0 + q, bw) - start;
        a[0][q] = pick<N>(ra[0], k);
        a[1][q] = pick<N>(ra[1], k);
        o[q][0] = pick<N>(rh[0], k), o[q][1] = pick<N>(rv[0], k), o[q][2] = pick<N>(rd[0], k);
        t[q][0] = pick<N>(rh[1], k), t[q][1] = pick<N>(rv[1], k), t[q][2] = pick<N>(rd[1], k);
    }
}

// A tile row's sums, TPR consecutive lanes of one warp (lane tx of the
// row): they meet by shuffles (integer: any order gives the same bits),
// the row's lanes add them to the frame's row sums, and the last tile of
// a region row rounds and shifts the row's sums like the CPU and adds
// them to the frame's totals. Every lane of the warp must call.
template <int TPR>
__device__ void add_row_sums(u64 (&sums)[SUMS], bool row_scored, int i, int tx,
                             const Scoring &s) {
    #pragma unroll
    for (int k = 0; k < SUMS; k++) {
        #pragma unroll
        for (int m = TPR / 2; m > 0; m /= 2) sums[k] += lane_xor(sums[k], m, TPR);
    }
    u64 *row = s.row_sums + (row_scored ? (u64)(i - s.top) * SUMS : 0);
    if (row_scored) {
        for (int k = tx; k < SUMS; k += TPR) atomicAdd(row + k, pick<SUMS>(sums, k));
    }
    // The row's adds are visible before its tile count rises.
    __threadfence();
    lane_sync();
    u32 last = 0;
    if (tx == 0 && row_scored) {
        last = atomicAdd(s.row_tiles + (i - s.top), 1u) == (u32)s.tiles_per_row - 1;
    }
    last = lane_get(last, 0, TPR);
    if (last) {
        // The row is complete: take its sums (resetting them for the next
        // frame), round and shift them per row like the CPU, add them up.
        for (int k = tx; k < SUMS; k += TPR) {
            u64 v = atomicExch(row + k, 0ull);
            if (k < 6) {
                v = (u64)((i64)(v + (u64)half(s.row_shift)) >> s.row_shift);
            } else {
                v = (v + (u64)half(s.den_row_shift)) >> s.den_row_shift;
            }
            atomicAdd(s.totals + k, v);
        }
        if (tx == 0) atomicExch(s.row_tiles + (i - s.top), 0u);
    }
}

// One tile of a bw x bh band per block: the DWT of both pictures (the
// approximation goes to `approx`, both pictures, when not null), then,
// where the tile meets the scored region, decoupling and masking over the
// tile and its one-coefficient border, the masked cube sums and reference
// energy per row, and the rows' totals once their last tile is in.
template <class Src, class K, int CPT>
__device__ void scale_tile(const Src &src, int bw, int bh, typename Src::A *approx,
                           const Scoring &s) {
    const int TPR = TILE_W / CPT;        // threads per tile row
    const int ROWS = THREADS / TPR;      // tile rows
    const int RING = 2 * (TILE_W + 2) + 2 * ROWS;
    __shared__ int mask_num[ROWS + 2][TILE_W + 2];
    __shared__ int mask_aim[ROWS + 2][TILE_W + 2];

    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * TPR + tx;
    int r0 = blockIdx.y * ROWS, c0 = blockIdx.x * TILE_W;
    int i = r0 + ty, j0 = c0 + tx * CPT;
    int im = neighbour_index(i, bh);
    int a[2][CPT], o[CPT][3], t[CPT][3];
    dwt_pair<CPT>(src, bw, im, j0, a, o, t);
    if (approx && i < bh) {
        u64 n = (u64)bw * bh;
        #pragma unroll
        for (int q = 0; q < CPT; q++) {
            if (j0 + q < bw) {
                approx[(u64)i * bw + j0 + q] = a[0][q];
                approx[n + (u64)i * bw + j0 + q] = a[1][q];
            }
        }
    }
    bool scoring = s.score && r0 < s.bottom && r0 + ROWS > s.top && c0 < s.right &&
                   c0 + TILE_W > s.left;
    if (!scoring) return;  // the same for the whole block

    bool row_scored = i >= s.top && i < s.bottom;
    u64 sums[SUMS];
    #pragma unroll
    for (int k = 0; k < SUMS; k++) sums[k] = 0;
    int r[CPT][3], ad[CPT][3];
    #pragma unroll
    for (int q = 0; q < CPT; q++) {
        K::decouple(o[q], t[q], s.cos_sq, s.gain_limit,
                    neighbour_index(j0 + q, bw) < s.nearest_end, r[q], ad[q]);
        int mn = 0, ma = 0;
        #pragma unroll
        for (int k = 0; k < 3; k++) {
            mn += K::neighbour_mask(K::weighted(s.w, ad[q][k], k));
            ma += K::neighbour_mask(K::weighted(s.w, r[q][k], k));
        }
        mask_num[ty + 1][tx * CPT + q + 1] = mn;
        mask_aim[ty + 1][tx * CPT + q + 1] = ma;
        int j = j0 + q;
        if (row_scored && j >= s.left && j < s.right) {
            #pragma unroll
            for (int k = 0; k < 3; k++) sums[6 + k] += K::energy(s.w, o[q][k]);
        }
    }
    // The border ring: rows -1 and ROWS, columns -1 and TILE_W.
    for (int idx = tid; idx < RING; idx += THREADS) {
        int y, x;
        if (idx < TILE_W + 2) {
            y = -1, x = idx - 1;
        } else if (idx < 2 * (TILE_W + 2)) {
            y = ROWS, x = idx - (TILE_W + 2) - 1;
        } else if (idx < 2 * (TILE_W + 2) + ROWS) {
            y = idx - 2 * (TILE_W + 2), x = -1;
        } else {
            y = idx - 2 * (TILE_W + 2) - ROWS, x = TILE_W;
        }
        int ra[2][1], ro[1][3], rt[1][3], rr[3], raa[3];
        int column = neighbour_index(c0 + x, bw);
        dwt_pair<1>(src, bw, neighbour_index(r0 + y, bh), column, ra, ro, rt);
        K::decouple(ro[0], rt[0], s.cos_sq, s.gain_limit, column < s.nearest_end, rr, raa);
        int mn = 0, ma = 0;
        #pragma unroll
        for (int k = 0; k < 3; k++) {
            mn += K::neighbour_mask(K::weighted(s.w, raa[k], k));
            ma += K::neighbour_mask(K::weighted(s.w, rr[k], k));
        }
        mask_num[y + 1][x + 1] = mn;
        mask_aim[y + 1][x + 1] = ma;
    }
    __syncthreads();

#pragma unroll

    for (int q = 0; q < CPT; q++) {
        int j = j0 + q, x = tx * CPT + q;
        if (!(row_scored && j >= s.left && j < s.right)) continue;
        int box_num = -mask_num[ty + 1][x + 1], box_aim = -mask_aim[ty + 1][x + 1];
        #pragma unroll
        for (int dy = 0; dy < 3; dy++) {
            #pragma unroll
            for (int dx = 0; dx < 3; dx++) {
                box_num += mask_num[ty + dy][x + dx];
                box_aim += mask_aim[ty + dy][x + dx];
            }
        }
        int thr_num = box_num, thr_aim = box_aim;
        #pragma unroll
        for (int k = 0; k < 3; k++) {
            thr_num += K::centre_mask(K::weighted(s.w, ad[q][k], k));
            thr_aim += K::centre_mask(K::weighted(s.w, r[q][k], k));
        }
        #pragma unroll
        for (int k = 0; k < 3; k++) {
            sums[k] += (u64)K::cube_above(s.w, K::contrast(s.w, r[q][k], k), thr_num, k);
            sums[3 + k] += (u64)K::cube_above(s.w, K::contrast(s.w, ad[q][k], k), thr_aim, k);
        }
    }

    add_row_sums<TPR>(sums, row_scored, i, tx, s);
}

// Small bands (one coefficient per thread): a 32 x 8 block covers a
// 30 x 6 tile and its one-coefficient border, a position per thread, so
// the border's masks come in the same pass as the tile's (scale_tile
// computes them in a second pass). These kernels are latency-bound: a
// pass fewer shortens each block's chain. A tile row is one warp.
#define HALO_W 30
#define HALO_H 6
template <class Src, class K>
__device__ void scale_tile_halo(const Src &src, int bw, int bh, typename Src::A *approx,
                                const Scoring &s) {
    __shared__ int mask_num[HALO_H + 2][HALO_W + 2];
    __shared__ int mask_aim[HALO_H + 2][HALO_W + 2];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int r0 = blockIdx.y * HALO_H, c0 = blockIdx.x * HALO_W;
    const int i = r0 + ty - 1, j = c0 + tx - 1;
    const bool inner_row = ty >= 1 && ty <= HALO_H;
    const bool inner = inner_row && tx >= 1 && tx <= HALO_W;
    int a[2][1], o[1][3], t[1][3];
    dwt_pair<1>(src, bw, neighbour_index(i, bh), neighbour_index(j, bw), a, o, t);
    if (approx && inner && i < bh && j < bw) {
        u64 n = (u64)bw * bh;
        approx[(u64)i * bw + j] = a[0][0];
        approx[n + (u64)i * bw + j] = a[1][0];
    }
    bool scoring = s.score && r0 < s.bottom && r0 + HALO_H > s.top && c0 < s.right &&
                   c0 + HALO_W > s.left;
    if (!scoring) return;  // the same for the whole block

    int r[3], ad[3];
    K::decouple(o[0], t[0], s.cos_sq, s.gain_limit, neighbour_index(j, bw) < s.nearest_end, r,
                ad);
    int mn = 0, ma = 0;
    #pragma unroll
    for (int k = 0; k < 3; k++) {
        mn += K::neighbour_mask(K::weighted(s.w, ad[k], k));
        ma += K::neighbour_mask(K::weighted(s.w, r[k], k));
    }
    mask_num[ty][tx] = mn;
    mask_aim[ty][tx] = ma;
    const bool row_scored = inner_row && i >= s.top && i < s.bottom;
    const bool counted = inner && row_scored && j >= s.left && j < s.right;
    u64 sums[SUMS];
    #pragma unroll
    for (int k = 0; k < SUMS; k++) sums[k] = 0;
    if (counted) {
        #pragma unroll
        for (int k = 0; k < 3; k++) sums[6 + k] += K::energy(s.w, o[0][k]);
    }
    __syncthreads();

    if (counted) {
        int box_num = -mask_num[ty][tx], box_aim = -mask_aim[ty][tx];
        #pragma unroll
        for (int dy = -1; dy <= 1; dy++) {
            #pragma unroll
            for (int dx = -1; dx <= 1; dx++) {
                box_num += mask_num[ty + dy][tx + dx];
                box_aim += mask_aim[ty + dy][tx + dx];
            }
        }
        int thr_num = box_num, thr_aim = box_aim;
        #pragma unroll
        for (int k = 0; k < 3; k++) {
            thr_num += K::centre_mask(K::weighted(s.w, ad[k], k));
            thr_aim += K::centre_mask(K::weighted(s.w, r[k], k));
        }
        #pragma unroll
        for (int k = 0; k < 3; k++) {
            sums[k] += (u64)K::cube_above(s.w, K::contrast(s.w, r[k], k), thr_num, k);
            sums[3 + k] += (u64)K::cube_above(s.w, K::contrast(s.w, ad[k], k), thr_aim, k);
        }
    }
    add_row_sums<32>(sums, row_scored, i, tx, s);
}

#define SCORING_PARAMS                                                                    \
    int score, int top, int bottom, int left, int right, i64 rf0, i64 rf1, i64 rf2, int cs0, \
        int cs1, int cs2, int den_square_shift, int den_cube_shift, double gain_limit,        \
        double cos_sq, int nearest_end, u64 *row_sums, u32 *row_tiles, u64 *totals,           \
        int row_shift, int den_row_shift, int tiles_per_row

#define SCORING_INIT                                                                        \
    Scoring s = {score, top, bottom, left, right,                                           \
                 {{rf0, rf1, rf2}, {cs0, cs1, cs2}, den_square_shift, den_cube_shift},      \
                 gain_limit, cos_sq, nearest_end, row_sums, row_tiles, totals, row_shift,   \
                 den_row_shift, tiles_per_row};

// Scale 0 from the luma planes; CPT 4 (32 x 32 tiles) for large bands, 1
// (30 x 6 tiles with their border in 32 x 8 blocks) for small ones.
#define SCALE0(name, T, CPT)                                                                \
    extern "C" __global__ void __launch_bounds__(THREADS, FINE_BLOCKS)                      \
        name(const T *ref, u32 ref_pitch, const T *dis, u32 dis_pitch, int w, int h,        \
             int bit_depth, int bw, int bh, int overrun, short *approx, SCORING_PARAMS) {   \
        Picture<T> src = {{ref, dis}, {ref_pitch, dis_pitch}, w, h, bit_depth, bw, overrun}; \
        SCORING_INIT                                                                        \
        if constexpr (CPT == 1) {                                                           \
            scale_tile_halo<Picture<T>, Fine>(src, bw, bh, approx, s);                      \
        } else {                                                                            \
            scale_tile<Picture<T>, Fine, CPT>(src, bw, bh, approx, s);                      \
        }                                                                                   \
    }

SCALE0(adm_scale0_u8_t4, unsigned char, 4)
SCALE0(adm_scale0_u8_t1, unsigned char, 1)
SCALE0(adm_scale0_u16_t4, unsigned short, 4)
SCALE0(adm_scale0_u16_t1, unsigned short, 1)

// Scales 1-3 from the previous approximation: scale 1 reads the 16-bit
// scale-0 approximation (nothing precedes it in libvmaf's scratch); scale 2
// reads scale 1's, with scale 1's input before it; scale 3 likewise.
#define SCALE_COARSE(name, In, Prev, CPT)                                                   \
    extern "C" __global__ void __launch_bounds__(THREADS, COARSE_BLOCKS)                    \
        name(const In *in, int iw, int ih, int bw, int bh, i64 vadd, int vshift, i64 hadd,  \
             int hshift, int overrun, const Prev *prev, int prev_iw, int prev_ih,           \
             int prev_oh, i64 prev_add, int prev_shift, int *approx, SCORING_PARAMS) {      \
        Approx<In, Prev> src = {in,      iw,      ih,      bw,       vadd,                  \
                                hadd,    vshift,  hshift,  overrun,  prev,                  \
                                prev_iw, prev_ih, prev_oh, prev_add, prev_shift};           \
        SCORING_INIT                                                                        \
        if constexpr (CPT == 1) {                                                           \
            scale_tile_halo<Approx<In, Prev>, Coarse>(src, bw, bh, approx, s);              \
        } else {                                                                            \
            scale_tile<Approx<In, Prev>, Coarse, CPT>(src, bw, bh, approx, s);              \
        }                                                                                   \
    }

SCALE_COARSE(adm_scale1_t4, short, short, 4)
SCALE_COARSE(adm_scale1_t1, short, short, 1)
SCALE_COARSE(adm_scale2_t4, int, short, 4)
SCALE_COARSE(adm_scale2_t1, int, short, 1)
SCALE_COARSE(adm_scale3_t4, int, int, 4)
SCALE_COARSE(adm_scale3_t1, int, int, 1)
