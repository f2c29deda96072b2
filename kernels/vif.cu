// Integer VIF (libvmaf 3.2.0's `vif`, as src/feature/vif reproduces it):
// one launch per scale does, for a tile of pixels, the separable moment
// filter (vertical, rounding shifts, horizontal), the per-pixel statistic
// with its fixed-point log2 lookups, the block's four integer sums (added
// to the frame's accumulators), and the decimation of the tile into the
// next scale's planes (the next scale's filter at even rows and columns).
//
// Edges: the tile is loaded with every row and column index mirrored about
// the edge sample (reflect-101). The filters are separable and
// column-independent, so filtering mirrored source columns gives exactly
// the mirrored filtered columns the CPU pads its rows with.
//
// Exactness: the integer widths, wrapping and rounding of the CPU code;
// the double arithmetic of the statistic goes through the _rn intrinsics
// so no multiply-add is fused (the CPU rounds every operation). Integer
// sums wider than 32 bits run as double multiply-adds where every term and
// partial sum is an integer below 2^53 (so exact): the FP64 pipe is
// otherwise idle, while 64-bit integer multiply-adds take four cycles of
// the pipe the 32-bit ones already keep busy (ncu, docs/performance.md).

#include "common.cuh"

#define THREADS 256
// Output pixels per block: even, so every decimated sample (at even
// coordinates) belongs to exactly one tile.
#define TILE_W 64
#define TILE_H 16

// The per-scale Gaussians in Q16 (src/feature/vif/tables.rs), by tap
// count, as immediates: once the loops are unrolled each switch folds to a
// constant operand (coefficients loaded from memory make the compiler
// widen them to 64-bit multiplies).
template <int TAPS> __device__ __forceinline__ unsigned coef(int k);
template <> __device__ __forceinline__ unsigned coef<17>(int k) {
    switch (k < 8 ? k : 16 - k) {
    case 0: return 489;
    case 1: return 935;
    case 2: return 1640;
    case 3: return 2640;
    case 4: return 3896;
    case 5: return 5274;
    case 6: return 6547;
    case 7: return 7455;
    default: return 7784;
    }
}
template <> __device__ __forceinline__ unsigned coef<9>(int k) {
    switch (k < 4 ? k : 8 - k) {
    case 0: return 1244;
    case 1: return 3663;
    case 2: return 7925;
    case 3: return 12590;
    default: return 14692;
    }
}
template <> __device__ __forceinline__ unsigned coef<5>(int k) {
    switch (k < 2 ? k : 4 - k) {
    case 0: return 3571;
    case 1: return 16004;
    default: return 26386;
    }
}
template <> __device__ __forceinline__ unsigned coef<3>(int k) { return k == 1 ? 43728 : 10904; }

// The model's noise variance 2.0 in Q16, and libvmaf's epsilon (Q16 of
// 1e-10) for the gain's denominator.
#define SIGMA_NSQ 131072
#define VIF_EPS (65536.0 * 1.0e-10)

// Reflect-101 index into 0..n; indices further out (only tiles' unused
// margins reach them) are clamped so that loads stay inside the plane.
__device__ __forceinline__ int mirror(int i, int n) {
    if (i < 0) i = -i;
    if (i >= n) i = 2 * n - i - 2;
    return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

// (v + 2^(shift-1)) >> shift in the accumulator's width; shift 0 keeps v.
__device__ __forceinline__ unsigned round_shift(unsigned v, unsigned shift) {
    return shift == 0 ? v : (v + (1u << (shift - 1))) >> shift;
}

// (a * b + 2^31) >> 32 of 32-bit values.
__device__ __forceinline__ unsigned product_q32(unsigned a, unsigned b) {
    return (unsigned)(((u64)a * b + 0x80000000ull) >> 32);
}

// log2(v) * 2048 in libvmaf's fixed point, for 2^16 <= v < 2^52: the top
// 16 bits of v (truncated) looked up, plus 2048 per dropped bit. The table
// holds mantissas 32768..65535; other v (never summed) read some entry.
__device__ __forceinline__ int log2_q11(u64 v, const unsigned short *table) {
    int shift = 63 - __clzll((long long)v) - 15;
    unsigned mantissa = (unsigned)(v >> (shift & 63));
    return (int)__ldg(table + (mantissa & 0x7fff)) + 2048 * shift;
}
// The same for 2^16 <= v < 2^32, in 32-bit operations.
__device__ __forceinline__ int log2_q11(unsigned v, const unsigned short *table) {
    int shift = 31 - __clz((int)v) - 15;
    return (int)__ldg(table + ((v >> (shift & 31)) & 0x7fff)) + 2048 * shift;
}

// A thread's share of the four sums: at most 4 pixels (HPIX) per thread
// and scale, so the log sums fit 32 bits; the flat pixels' sigma2 sum
// (up to 2^31 a pixel) needs 64.
struct PixelSums {
    int num_log, den_log, flat_count;
    i64 flat_sigma2;
};

// The VIF statistic of one pixel into the four sums (stats.rs add_block).
__device__ __forceinline__ void add_pixel(unsigned mu1, unsigned mu2, unsigned xx, unsigned yy,
                                          unsigned xy, const unsigned short *table,
                                          double gain_limit, PixelSums &sums) {
    int sigma1_sq = (int)(xx - product_q32(mu1, mu1));
    int sigma2_sq = (int)(yy - product_q32(mu2, mu2));
    sigma2_sq = sigma2_sq < 0 ? 0 : sigma2_sq;
    int sigma12 = (int)(xy - product_q32(mu1, mu2));
    if (sigma1_sq < SIGMA_NSQ) {
        // A reference flatter than the noise: a count and a separate sum.
        sums.flat_sigma2 += sigma2_sq;
        sums.flat_count += 1;
        return;
    }
    // Below 2^32: sigma1_sq is a positive int here.
    const unsigned den_arg = (unsigned)SIGMA_NSQ + (unsigned)sigma1_sq;
    sums.den_log += log2_q11(den_arg, table) - 2048 * 17;
    if (sigma12 > 0 && sigma2_sq > 0) {
        double s1 = (double)sigma1_sq, s2 = (double)sigma2_sq, s12 = (double)sigma12;
        double g = __ddiv_rn(s12, __dadd_rn(s1, VIF_EPS));
        int sv_sq = __double2int_rz(__dsub_rn(s2, __dmul_rn(g, s12)));
        sv_sq = sv_sq < 0 ? 0 : sv_sq;
        g = g < gain_limit ? g : gain_limit;
        const unsigned noise = (unsigned)sv_sq + (unsigned)SIGMA_NSQ;
        u64 num_arg = (u64)__double2ll_rz(__dmul_rn(__dmul_rn(g, g), s1)) + noise;
        sums.num_log += log2_q11(num_arg, table) - log2_q11(noise, table);
    }
}

// The vertical second moments: 32-bit wrapping sums for 8-bit samples (the
// true sums fit); for wider samples double sums (products below 2^32 times
// weights below 2^16: every partial sum is an integer below 2^48, exact),
// on the FP64 pipe rather than as 64-bit integer multiply-adds, which take
// four cycles of the busiest pipe. `term` turns a product into the sums'
// type once per input row; `narrow` is the rounding shift back to 32 bits.
template <bool WIDE> struct SquareAcc;
template <> struct SquareAcc<false> {
    typedef unsigned T;
    static __device__ __forceinline__ unsigned term(unsigned ab) { return ab; }
    static __device__ __forceinline__ unsigned mad(unsigned c, unsigned ab, unsigned acc) {
        return acc + c * ab;
    }
    static __device__ __forceinline__ unsigned narrow(unsigned v, unsigned shift) {
        return round_shift(v, shift);
    }
};
template <> struct SquareAcc<true> {
    typedef double T;
    // (2^52 + v) - 2^52: exact, no conversion instruction.
    static __device__ __forceinline__ double term(unsigned ab) {
        return __dsub_rn(__hiloint2double(0x43300000, (int)ab), 0x1p52);
    }
    static __device__ __forceinline__ double mad(unsigned c, double ab, double acc) {
        return __fma_rn((double)c, ab, acc);
    }
    // (v + 2^(shift-1)) >> shift as floor(v * 2^-shift + 0.5): exact, the
    // result has at most 48 significant bits and is below 2^32.
    static __device__ __forceinline__ unsigned narrow(double v, unsigned shift) {
        return shift == 0 ? __double2uint_rz(v)
                          : __double2uint_rz(__fma_rn(v, __hiloint2double((1023 - (int)shift) << 20, 0), 0.5));
    }
};

// Rows of the vertical pass per thread and pixels of the horizontal pass
// per thread: neighbouring outputs share most of their taps, so each
// loaded value serves several outputs (shared memory bandwidth is what
// limits these passes).
#define VROWS 4
#define HPIX 4

__host__ __device__ constexpr int round_up4(int n) { return (n + 3) / 4 * 4; }

// The WIN words at `row` (16-byte aligned) into registers.
template <int WIN>
__device__ __forceinline__ void load_window(const unsigned *row, unsigned (&w)[WIN]) {
#pragma unroll
    for (int i = 0; i < WIN; i += 4) {
        const uint4 v = *(const uint4 *)(row + i);
        w[i] = v.x;
        w[i + 1] = v.y;
        w[i + 2] = v.z;
        w[i + 3] = v.w;
    }
}

// Horizontal pass of a mean: 32-bit wrapping sums (the true sums fit).
template <int TAPS, int WIN>
__device__ __forceinline__ void horizontal_means(const unsigned *row, unsigned (&out)[HPIX]) {
    unsigned w[WIN];
    load_window<WIN>(row, w);
#pragma unroll
    for (int p = 0; p < HPIX; p++) {
        unsigned sum = 0;
#pragma unroll
        for (int k = 0; k < TAPS; k++) sum += coef<TAPS>(k) * w[p + k];
        out[p] = sum;
    }
}

// Horizontal pass of a second moment, rounded back to 32 bits. The sums
// need up to 48 bits (32-bit values times Q16 weights): they run as double
// multiply-adds, exact since every term and partial sum is an integer
// below 2^53, on the FP64 pipe, which is otherwise idle (64-bit integer
// multiply-adds took four cycles of the busiest pipe). Words become
// doubles through the 2^52 bias: (2^52 + w) - 2^52 is exact.
template <int TAPS, int WIN>
__device__ __forceinline__ void horizontal_moments(const unsigned *row, unsigned (&out)[HPIX]) {
    unsigned w[WIN];
    load_window<WIN>(row, w);
    double d[WIN];
#pragma unroll
    for (int i = 0; i < WIN; i++) d[i] = __dsub_rn(__hiloint2double(0x43300000, (int)w[i]), 0x1p52);
#pragma unroll
    for (int p = 0; p < HPIX; p++) {
        double sum = 0.0;
#pragma unroll
        for (int k = 0; k < TAPS; k++) sum = __fma_rn((double)coef<TAPS>(k), d[p + k], sum);
        // (sum + 2^15) >> 16: sum * 2^-16 + 0.5 is exact (at most 48
        // significant bits), the truncation floors it.
        out[p] = __double2uint_rz(__fma_rn(sum, 0x1p-16, 0.5));
    }
}

// ---------------------------------------------------------------------
// The 8-bit scale-0 vertical pass on the tensor cores (sm_80 and later):
// the 17-tap filter of a 16-row tile is a 16 x 32 banded matrix F applied
// to the tile's 32 input rows, so each 8-column slice of the five moments
// is a few m16n8k32 u8 matrix products, exact in their 32-bit integer
// accumulators. F's Q16 weights (up to 13 bits) are split into bytes,
// F = 256 F_hi + F_lo; the 16-bit products a*a, b*b, a*b likewise:
//   sum F a    = 256 (F_hi a) + (F_lo a)
//   sum F a^2  = 65536 (F_hi q_hi) + 256 (F_hi q_lo + F_lo q_hi) + F_lo q_lo
// and the decimation's 9-tap filter at the even rows is a second matrix.
// Everything else (horizontal pass, statistic) is the scalar code's.
#if !defined(__HIP_PLATFORM_AMD__) && (defined(VIF_EMU_MMA) || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800))
#define VIF_MMA 1
#else
#define VIF_MMA 0
#endif

// D = A B + C for A 16 x 32 (u8, row-major fragments), B 32 x 8 (u8,
// column-major), C and D 16 x 8 (s32): the PTX fragment layouts.
__device__ __forceinline__ void mma_u8(int (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1,
                                       int c0, int c1, int c2, int c3) {
#if defined(VIF_EMU_MMA)
    emu_mma_u8(d, a, b0, b1, c0, c1, c2, c3);
#elif VIF_MMA
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%10,%11,%12,%13};\n"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(c0), "r"(c1),
                   "r"(c2), "r"(c3));
#else
    (void)a, (void)b0, (void)b1;
    d[0] = c0, d[1] = c1, d[2] = c2, d[3] = c3;
#endif
}

// Columns of the tile in shared memory: the 32 input rows of a column as
// bytes, then 16 bytes of padding (a 48-byte stride puts the 32 lanes'
// 4-byte B-fragment loads in 32 different banks).
#define COL_STRIDE 48
// The A fragments' words by diagonal: entry d + 18 holds the bytes of
// taps d .. d+3 (F: the 17-tap filter, D: the 9-tap decimation filter).
#define DIAG_BIAS 18
#define DIAGS 48

// The filters' A-fragment words by diagonal (from the Q16 weights of
// coef<17> and coef<9>): entry d + DIAG_BIAS holds the low (or high) bytes
// of taps d .. d+3; rows F lo, F hi, D lo, D hi. Read through the L1 cache
// (each lane its own words). Unused where there is no MMA (AMD).
[[maybe_unused]] __device__ const unsigned VIF_DIAG[4][DIAGS] = {
    {0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0xe9000000u, 0xa7e90000u, 0x68a7e900u, 0x5068a7e9u, 0x385068a7u, 0x9a385068u, 0x939a3850u, 0x1f939a38u, 0x681f939au, 0x1f681f93u, 0x931f681fu, 0x9a931f68u, 0x389a931fu, 0x50389a93u, 0x6850389au, 0xa7685038u, 0xe9a76850u, 0x00e9a768u, 0x0000e9a7u, 0x000000e9u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u},
    {0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x01000000u, 0x03010000u, 0x06030100u, 0x0a060301u, 0x0f0a0603u, 0x140f0a06u, 0x19140f0au, 0x1d19140fu, 0x1e1d1914u, 0x1d1e1d19u, 0x191d1e1du, 0x14191d1eu, 0x0f14191du, 0x0a0f1419u, 0x060a0f14u, 0x03060a0fu, 0x0103060au, 0x00010306u, 0x00000103u, 0x00000001u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u},
    {0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0xdc000000u, 0x4fdc0000u, 0xf54fdc00u, 0x2ef54fdcu, 0x642ef54fu, 0x2e642ef5u, 0xf52e642eu, 0x4ff52e64u, 0xdc4ff52eu, 0x00dc4ff5u, 0x0000dc4fu, 0x000000dcu, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u},
    {0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x04000000u, 0x0e040000u, 0x1e0e0400u, 0x311e0e04u, 0x39311e0eu, 0x3139311eu, 0x1e313931u, 0x0e1e3139u, 0x040e1e31u, 0x00040e1eu, 0x0000040eu, 0x00000004u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u}};

// Byte `sel` picks of four words (one byte of each) into one word.
__device__ __forceinline__ unsigned gather_bytes(unsigned x0, unsigned x1, unsigned x2, unsigned x3,
                                                 unsigned sel) {
    return __byte_perm(__byte_perm(x0, x1, sel), __byte_perm(x2, x3, sel), 0x5410);
}

// One 8-column slice (columns n0 .. n0+7 of the tile's input) of the
// vertical pass for the lanes of one warp: the five moments of the 16 rows
// into `mu1`..`xy` (row-major, pitch V_W) and the decimation's 8 rows into
// `dec_a`/`dec_b` (decimated column = column - dec_off).
template <int V_W, int DEC_W>
__device__ __forceinline__ void
vertical_mma_slice(const unsigned char (*col_a)[COL_STRIDE], const unsigned char (*col_b)[COL_STRIDE],
                   int n0, const unsigned (&f_lo)[4], const unsigned (&f_hi)[4],
                   const unsigned (&d_lo)[4], const unsigned (&d_hi)[4], unsigned *mu1, unsigned *mu2,
                   unsigned *xx, unsigned *yy, unsigned *xy, unsigned *dec_a, unsigned *dec_b,
                   int dec_off) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    // B fragments: rows 4t..4t+3 and 16+4t..16+4t+3 of column n0 + g.
    const unsigned a0 = *(const unsigned *)&col_a[n0 + g][4 * t];
    const unsigned a1 = *(const unsigned *)&col_a[n0 + g][16 + 4 * t];
    const unsigned b0 = *(const unsigned *)&col_b[n0 + g][4 * t];
    const unsigned b1 = *(const unsigned *)&col_b[n0 + g][16 + 4 * t];
    // The products' low and high bytes as B fragments.
    unsigned aa[2][2], bb[2][2], ab[2][2]; // [reg][lo, hi]
#pragma unroll
    for (int r = 0; r < 2; r++) {
        const unsigned wa = r ? a1 : a0, wb = r ? b1 : b0;
        unsigned pa[4], pb[4], pab[4];
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const unsigned x = (wa >> (8 * e)) & 0xff, y = (wb >> (8 * e)) & 0xff;
            pa[e] = x * x;
            pb[e] = y * y;
            pab[e] = x * y;
        }
        aa[r][0] = gather_bytes(pa[0], pa[1], pa[2], pa[3], 0x0040);
        aa[r][1] = gather_bytes(pa[0], pa[1], pa[2], pa[3], 0x0051);
        bb[r][0] = gather_bytes(pb[0], pb[1], pb[2], pb[3], 0x0040);
        bb[r][1] = gather_bytes(pb[0], pb[1], pb[2], pb[3], 0x0051);
        ab[r][0] = gather_bytes(pab[0], pab[1], pab[2], pab[3], 0x0040);
        ab[r][1] = gather_bytes(pab[0], pab[1], pab[2], pab[3], 0x0051);
    }
    // D fragment: rows g, g + 8; columns 2t, 2t + 1.
    const int col = n0 + 2 * t;
    int hi[4], lo[4], mid[4];
    auto store = [&](unsigned *plane, unsigned v0, unsigned v1, unsigned v2, unsigned v3) {
        *(uint2 *)&plane[g * V_W + col] = make_uint2(v0, v1);
        *(uint2 *)&plane[(g + 8) * V_W + col] = make_uint2(v2, v3);
    };
    // Means: the rounding constant 2^7 rides in the low product's
    // accumulator, so (256 hi + lo + 128) >> 8 = hi + (lo' >> 8).
    mma_u8(hi, f_hi, a0, a1, 0, 0, 0, 0);
    mma_u8(lo, f_lo, a0, a1, 128, 128, 128, 128);
    store(mu1, hi[0] + (lo[0] >> 8), hi[1] + (lo[1] >> 8), hi[2] + (lo[2] >> 8), hi[3] + (lo[3] >> 8));
    mma_u8(hi, f_hi, b0, b1, 0, 0, 0, 0);
    mma_u8(lo, f_lo, b0, b1, 128, 128, 128, 128);
    store(mu2, hi[0] + (lo[0] >> 8), hi[1] + (lo[1] >> 8), hi[2] + (lo[2] >> 8), hi[3] + (lo[3] >> 8));
    // Second moments (no rounding shift at 8 bits): true values below
    // 2^32, so wrapping 32-bit arithmetic gives them exactly.
    auto second = [&](unsigned *plane, const unsigned (&q)[2][2]) {
        mma_u8(hi, f_hi, q[0][1], q[1][1], 0, 0, 0, 0);
        mma_u8(mid, f_hi, q[0][0], q[1][0], 0, 0, 0, 0);
        mma_u8(mid, f_lo, q[0][1], q[1][1], mid[0], mid[1], mid[2], mid[3]);
        mma_u8(lo, f_lo, q[0][0], q[1][0], 0, 0, 0, 0);
        unsigned v[4];
#pragma unroll
        for (int i = 0; i < 4; i++) v[i] = ((unsigned)hi[i] << 16) + ((unsigned)mid[i] << 8) + (unsigned)lo[i];
        store(plane, v[0], v[1], v[2], v[3]);
    };
    second(xx, aa);
    second(yy, bb);
    second(xy, ab);
    // Decimation rows 0..7 (rows g; the matrix's rows 8..15 are zero).
    // (The products run on every lane: mma is warp-wide.)
    const int dc = col - dec_off;
    const bool dec_here = dc >= 0 && dc + 1 < DEC_W;
    mma_u8(hi, d_hi, a0, a1, 0, 0, 0, 0);
    mma_u8(lo, d_lo, a0, a1, 128, 128, 128, 128);
    if (dec_here) *(uint2 *)&dec_a[g * DEC_W + dc] = make_uint2(hi[0] + (lo[0] >> 8), hi[1] + (lo[1] >> 8));
    mma_u8(hi, d_hi, b0, b1, 0, 0, 0, 0);
    mma_u8(lo, d_lo, b0, b1, 128, 128, 128, 128);
    if (dec_here) *(uint2 *)&dec_b[g * DEC_W + dc] = make_uint2(hi[0] + (lo[0] >> 8), hi[1] + (lo[1] >> 8));
}

// One scale of one tile. `bits`: the sample width (the bit depth at scale
// 0, 16 for the decimated scales). DTAPS: the next scale's filter, 0 at
// the last scale. Sums: num_log, den_log, num_non_log, den_non_log.
template <typename T, int TAPS, int DTAPS, bool WIDE, bool MMA = false>
__device__ __forceinline__ void
vif_tile(const T *ref, unsigned ref_pitch, const T *dis, unsigned dis_pitch, int width,
         int height, unsigned bits, const unsigned short *log2_table, double gain_limit,
         u64 *sums, unsigned short *next_ref, unsigned short *next_dis, unsigned next_pitch) {
    constexpr int HALF = TAPS / 2;
    constexpr int IN_W = TILE_W + 2 * HALF;
    constexpr int IN_H = TILE_H + 2 * HALF;
    // Rows of the vertical results padded for 16-byte loads (and, with
    // MMA, to a pitch of 24 banks mod 32: the fragments' 8-byte stores of
    // rows g = 0..3 then fall in different banks).
    constexpr int V_W = MMA ? 88 : round_up4(IN_W);
    static_assert(!MMA || (sizeof(T) == 1 && TAPS == 17 && DTAPS == 9 && TILE_H == 16 &&
                           IN_H == 32 && IN_W % 8 == 0 && V_W >= IN_W),
                  "the tensor-core pass is the 8-bit scale 0 of 64 x 16 tiles");
    // The horizontal pass's window: HPIX pixels' taps, in 16-byte loads.
    constexpr int WIN = round_up4(TAPS + HPIX - 1);
    constexpr int DT = DTAPS > 0 ? DTAPS : 1;
    constexpr int DHALF = DTAPS / 2;
    constexpr int DEC_W = TILE_W + 2 * DHALF;
    constexpr int DEC_H = DTAPS > 0 ? TILE_H / 2 : 1;
    typedef typename SquareAcc<WIDE>::T Acc;
    static_assert(TILE_W % HPIX == 0 && TILE_H % VROWS == 0 && VROWS % 2 == 0, "tiling");
    static_assert(TILE_W - HPIX + WIN <= V_W, "the window stays inside the padded rows");

    // The input tile: rows of 16-bit samples, or (MMA) columns of bytes.
    __shared__ __align__(16) unsigned short in_ref[MMA ? 1 : IN_H][MMA ? 1 : IN_W];
    __shared__ __align__(16) unsigned short in_dis[MMA ? 1 : IN_H][MMA ? 1 : IN_W];
    __shared__ __align__(16) unsigned char col_ref[MMA ? IN_W : 1][COL_STRIDE];
    __shared__ __align__(16) unsigned char col_dis[MMA ? IN_W : 1][COL_STRIDE];
    // The vertical pass's moments; the block reduction reuses the space.
    __shared__ __align__(16) union {
        struct {
            unsigned mu1[TILE_H][V_W];
            unsigned mu2[TILE_H][V_W];
            unsigned xx[TILE_H][V_W];
            unsigned yy[TILE_H][V_W];
            unsigned xy[TILE_H][V_W];
        } v;
        u64 reduce[THREADS];
    } s;
    __shared__ unsigned dec_ref[DEC_H][DEC_W];
    __shared__ unsigned dec_dis[DEC_H][DEC_W];

    const int tid = threadIdx.x;
    const int x0 = blockIdx.x * TILE_W, y0 = blockIdx.y * TILE_H;

    // The tile and its margins: tiles clear of the edges in 32-bit words
    // where the rows' alignment allows it, the others sample by sample,
    // mirrored at the picture's edges.
    constexpr bool WORDS_ALIGNED = (HALF * (int)sizeof(T)) % 4 == 0;
    const bool interior = x0 >= HALF && y0 >= HALF && x0 + TILE_W + HALF <= width &&
                          y0 + TILE_H + HALF <= height &&
                          ((ref_pitch | dis_pitch | (unsigned)(u64)ref | (unsigned)(u64)dis) & 3) == 0;
    if constexpr (MMA) {
        if (interior) {
            // 4 x 4 sample blocks: four rows' words in, four columns' words
            // out (a byte transpose).
            constexpr int WORDS = IN_W / 4;
            const u64 first = (u64)(x0 - HALF);
            const char *ref_rows = (const char *)ref + (u64)(y0 - HALF) * ref_pitch + first;
            const char *dis_rows = (const char *)dis + (u64)(y0 - HALF) * dis_pitch + first;
            for (int i = tid; i < (IN_H / 4) * WORDS; i += THREADS) {
                const int r = i / WORDS * 4, w = i % WORDS;
#pragma unroll
                for (int p = 0; p < 2; p++) {
                    const char *rows = p ? dis_rows : ref_rows;
                    const unsigned pitch = p ? dis_pitch : ref_pitch;
                    unsigned char (*cols)[COL_STRIDE] = p ? col_dis : col_ref;
                    unsigned x[4];
#pragma unroll
                    for (int k = 0; k < 4; k++) x[k] = *(const unsigned *)(rows + (u64)(r + k) * pitch + 4 * w);
                    const unsigned t0 = __byte_perm(x[0], x[1], 0x5140), t1 = __byte_perm(x[2], x[3], 0x5140);
                    const unsigned t2 = __byte_perm(x[0], x[1], 0x7362), t3 = __byte_perm(x[2], x[3], 0x7362);
                    *(unsigned *)&cols[4 * w][r] = __byte_perm(t0, t1, 0x5410);
                    *(unsigned *)&cols[4 * w + 1][r] = __byte_perm(t0, t1, 0x7632);
                    *(unsigned *)&cols[4 * w + 2][r] = __byte_perm(t2, t3, 0x5410);
                    *(unsigned *)&cols[4 * w + 3][r] = __byte_perm(t2, t3, 0x7632);
                }
            }
        } else {
            for (int i = tid; i < IN_H * IN_W; i += THREADS) {
                int r = i / IN_W, c = i % IN_W;
                int y = mirror(y0 - HALF + r, height), x = mirror(x0 - HALF + c, width);
                col_ref[c][r] = ((const T *)((const char *)ref + (u64)y * ref_pitch))[x];
                col_dis[c][r] = ((const T *)((const char *)dis + (u64)y * dis_pitch))[x];
            }
        }
    } else if (WORDS_ALIGNED && interior) {
        constexpr int WORDS = IN_W * (int)sizeof(T) / 4;
        const u64 first = (u64)(x0 - HALF) * sizeof(T);
        const char *ref_rows = (const char *)ref + (u64)(y0 - HALF) * ref_pitch + first;
        const char *dis_rows = (const char *)dis + (u64)(y0 - HALF) * dis_pitch + first;
        for (int i = tid; i < IN_H * WORDS; i += THREADS) {
            const int r = i / WORDS, w = i % WORDS;
            const unsigned a = *(const unsigned *)(ref_rows + (u64)r * ref_pitch + 4 * w);
            const unsigned b = *(const unsigned *)(dis_rows + (u64)r * dis_pitch + 4 * w);
            unsigned *ra = (unsigned *)in_ref[r], *rb = (unsigned *)in_dis[r];
            if (sizeof(T) == 1) {
                // Four 8-bit samples into two pairs of 16-bit ones.
                ra[2 * w] = (a & 0xff) | ((a & 0xff00) << 8);
                ra[2 * w + 1] = ((a >> 16) & 0xff) | ((a >> 8) & 0xff0000);
                rb[2 * w] = (b & 0xff) | ((b & 0xff00) << 8);
                rb[2 * w + 1] = ((b >> 16) & 0xff) | ((b >> 8) & 0xff0000);
            } else {
                ra[w] = a;
                rb[w] = b;
            }
        }
    } else {
        for (int i = tid; i < IN_H * IN_W; i += THREADS) {
            int r = i / IN_W, c = i % IN_W;
            int y = mirror(y0 - HALF + r, height), x = mirror(x0 - HALF + c, width);
            in_ref[r][c] = ((const T *)((const char *)ref + (u64)y * ref_pitch))[x];
            in_dis[r][c] = ((const T *)((const char *)dis + (u64)y * dis_pitch))[x];
        }
    }
    __syncthreads();

    // Vertical pass, VROWS rows of a column per item: means back to 16
    // bits, second moments to 32 bits. The decimation's vertical pass (the
    // next filter at the even rows) reads the same input rows: done here
    // too, for decimated column dc = c - HALF + DHALF (picture column
    // x0 - DHALF + dc).
    const unsigned square_shift = 2 * (bits - 8);
    if constexpr (MMA) {
        // Warp-wide: a warp per 8-column slice.
        const int lane = tid & 31, g = lane >> 2, t = lane & 3;
        // A fragments: reg 0 row g cols 4t.., reg 1 row g+8 cols 4t..,
        // reg 2 row g cols 16+4t.., reg 3 row g+8 cols 16+4t.. . F's row r
        // holds tap j - r at column j; D's row m (m < 8) tap j - 2m - 4.
        unsigned f_lo[4], f_hi[4], d_lo[4], d_hi[4];
#pragma unroll
        for (int q = 0; q < 4; q++) {
            const int row = g + 8 * (q & 1), j0 = 4 * t + 16 * (q >> 1);
            f_lo[q] = __ldg(&VIF_DIAG[0][j0 - row + DIAG_BIAS]);
            f_hi[q] = __ldg(&VIF_DIAG[1][j0 - row + DIAG_BIAS]);
            const int dd = j0 - 2 * row - (HALF - DHALF) + DIAG_BIAS;
            d_lo[q] = row < 8 ? __ldg(&VIF_DIAG[2][dd]) : 0;
            d_hi[q] = row < 8 ? __ldg(&VIF_DIAG[3][dd]) : 0;
        }
        for (int n0 = (tid >> 5) * 8; n0 < IN_W; n0 += (THREADS / 32) * 8) {
            vertical_mma_slice<V_W, DEC_W>(col_ref, col_dis, n0, f_lo, f_hi, d_lo, d_hi, &s.v.mu1[0][0],
                                           &s.v.mu2[0][0], &s.v.xx[0][0], &s.v.yy[0][0],
                                           &s.v.xy[0][0], &dec_ref[0][0], &dec_dis[0][0],
                                           HALF - DHALF);
        }
    }
    for (int i = tid; !MMA && i < (TILE_H / VROWS) * IN_W; i += THREADS) {
        const int r0 = i / IN_W * VROWS, c = i % IN_W;
        unsigned mu1[VROWS], mu2[VROWS], da[VROWS / 2], db[VROWS / 2];
        Acc xx[VROWS], yy[VROWS], xy[VROWS];
#pragma unroll
        for (int q = 0; q < VROWS; q++) {
            mu1[q] = mu2[q] = 0;
            xx[q] = yy[q] = xy[q] = 0;
        }
#pragma unroll
        for (int m = 0; m < VROWS / 2; m++) da[m] = db[m] = 0;
#pragma unroll
        for (int j = 0; j < TAPS + VROWS - 1; j++) {
            const unsigned a = in_ref[r0 + j][c], b = in_dis[r0 + j][c];
            const Acc aa = SquareAcc<WIDE>::term(a * a), bb = SquareAcc<WIDE>::term(b * b),
                      ab = SquareAcc<WIDE>::term(a * b);
#pragma unroll
            for (int q = 0; q < VROWS; q++) {
                const int k = j - q;
                if (k < 0 || k >= TAPS) continue;
                const unsigned f = coef<TAPS>(k);
                mu1[q] += f * a;
                mu2[q] += f * b;
                xx[q] = SquareAcc<WIDE>::mad(f, aa, xx[q]);
                yy[q] = SquareAcc<WIDE>::mad(f, bb, yy[q]);
                xy[q] = SquareAcc<WIDE>::mad(f, ab, xy[q]);
            }
            if (DTAPS > 0) {
#pragma unroll
                for (int m = 0; m < VROWS / 2; m++) {
                    const int k = j - (2 * m + HALF - DHALF);
                    if (k < 0 || k >= DT) continue;
                    const unsigned f = coef<(DTAPS > 0 ? DTAPS : 3)>(k);
                    da[m] += f * a;
                    db[m] += f * b;
                }
            }
        }
#pragma unroll
        for (int q = 0; q < VROWS; q++) {
            s.v.mu1[r0 + q][c] = round_shift(mu1[q], bits);
            s.v.mu2[r0 + q][c] = round_shift(mu2[q], bits);
            s.v.xx[r0 + q][c] = SquareAcc<WIDE>::narrow(xx[q], square_shift);
            s.v.yy[r0 + q][c] = SquareAcc<WIDE>::narrow(yy[q], square_shift);
            s.v.xy[r0 + q][c] = SquareAcc<WIDE>::narrow(xy[q], square_shift);
        }
        const int dc = c - HALF + DHALF;
        if (DTAPS > 0 && dc >= 0 && dc < DEC_W) {
#pragma unroll
            for (int m = 0; m < VROWS / 2; m++) {
                dec_ref[r0 / 2 + m][dc] = round_shift(da[m], bits);
                dec_dis[r0 / 2 + m][dc] = round_shift(db[m], bits);
            }
        }
    }
    __syncthreads();

    // Horizontal pass and the statistic, HPIX pixels of a row per item.
    static_assert(TILE_H * (TILE_W / HPIX) <= THREADS, "one item per thread: PixelSums' bounds");
    PixelSums acc = {0, 0, 0, 0};
    for (int i = tid; i < TILE_H * (TILE_W / HPIX); i += THREADS) {
        const int r = i / (TILE_W / HPIX), c0 = i % (TILE_W / HPIX) * HPIX;
        if (y0 + r >= height || x0 + c0 >= width) continue;
        unsigned mu1[HPIX], mu2[HPIX], xx[HPIX], yy[HPIX], xy[HPIX];
        horizontal_means<TAPS, WIN>(&s.v.mu1[r][c0], mu1);
        horizontal_means<TAPS, WIN>(&s.v.mu2[r][c0], mu2);
        horizontal_moments<TAPS, WIN>(&s.v.xx[r][c0], xx);
        horizontal_moments<TAPS, WIN>(&s.v.yy[r][c0], yy);
        horizontal_moments<TAPS, WIN>(&s.v.xy[r][c0], xy);
#pragma unroll
        for (int p = 0; p < HPIX; p++) {
            if (x0 + c0 + p < width) {
                add_pixel(mu1[p], mu2[p], xx[p], yy[p], xy[p], log2_table, gain_limit, acc);
            }
        }
    }
    // Horizontal pass of the decimation, at even columns.
    if (DTAPS > 0) {
        const int out_w = width / 2, out_h = height / 2;
        for (int i = tid; i < (TILE_H / 2) * (TILE_W / 2); i += THREADS) {
            const int r = i / (TILE_W / 2), c = i % (TILE_W / 2);
            const int oy = y0 / 2 + r, ox = x0 / 2 + c;
            if (oy >= out_h || ox >= out_w) continue;
            unsigned a = 0, b = 0;
#pragma unroll
            for (int k = 0; k < DT; k++) {
                const unsigned f = coef<(DTAPS > 0 ? DTAPS : 3)>(k);
                a += f * dec_ref[r][2 * c + k];
                b += f * dec_dis[r][2 * c + k];
            }
            next_ref[(u64)oy * next_pitch + ox] = (unsigned short)round_shift(a, 16);
            next_dis[(u64)oy * next_pitch + ox] = (unsigned short)round_shift(b, 16);
        }
    }
    __syncthreads();

    // The block's sums into the frame's (two's complement: wrapping 64-bit
    // adds give the exact signed total).
    u64 totals[4] = {(u64)acc.num_log, (u64)acc.den_log, (u64)acc.flat_sigma2,
                     (u64)acc.flat_count};
    block_sums_u64<THREADS, 4>(totals, s.reduce);
    if (tid < 4) {
        const u64 total = tid == 0 ? totals[0] : tid == 1 ? totals[1] : tid == 2 ? totals[2] : totals[3];
        if (total != 0) atomicAdd(sums + tid, total);
    }
}

#define VIF_PARAMS(T)                                                                        \
    const T *ref, unsigned ref_pitch, const T *dis, unsigned dis_pitch, int width,            \
        int height, unsigned bits, const unsigned short *log2_table, double gain_limit,       \
        u64 *sums, unsigned short *next_ref, unsigned short *next_dis, unsigned next_pitch
#define VIF_ARGS                                                                             \
    ref, ref_pitch, dis, dis_pitch, width, height, bits, log2_table, gain_limit, sums,        \
        next_ref, next_dis, next_pitch

extern "C" __global__ void __launch_bounds__(THREADS) vif_scale0_u8(VIF_PARAMS(unsigned char)) {
    vif_tile<unsigned char, 17, 9, false, VIF_MMA>(VIF_ARGS);
}
extern "C" __global__ void __launch_bounds__(THREADS) vif_scale0_u16(VIF_PARAMS(unsigned short)) {
    vif_tile<unsigned short, 17, 9, true>(VIF_ARGS);
}
extern "C" __global__ void __launch_bounds__(THREADS) vif_scale1(VIF_PARAMS(unsigned short)) {
    vif_tile<unsigned short, 9, 5, true>(VIF_ARGS);
}
extern "C" __global__ void __launch_bounds__(THREADS) vif_scale2(VIF_PARAMS(unsigned short)) {
    vif_tile<unsigned short, 5, 3, true>(VIF_ARGS);
}
extern "C" __global__ void __launch_bounds__(THREADS) vif_scale3(VIF_PARAMS(unsigned short)) {
    vif_tile<unsigned short, 3, 0, true>(VIF_ARGS);
}
