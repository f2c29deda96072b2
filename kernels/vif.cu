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

// One scale of one tile. `bits`: the sample width (the bit depth at scale
// 0, 16 for the decimated scales). DTAPS: the next scale's filter, 0 at
// the last scale. Sums: num_log, den_log, num_non_log, den_non_log.
template <typename T, int TAPS, int DTAPS, bool WIDE>
__device__ __forceinline__ void
vif_tile(const T *ref, unsigned ref_pitch, const T *dis, unsigned dis_pitch, int width,
         int height, unsigned bits, const unsigned short *log2_table, double gain_limit,
         u64 *sums, unsigned short *next_ref, unsigned short *next_dis, unsigned next_pitch) {
    constexpr int HALF = TAPS / 2;
    constexpr int IN_W = TILE_W + 2 * HALF;
    constexpr int IN_H = TILE_H + 2 * HALF;
    // Rows of the vertical results padded for 16-byte loads.
    constexpr int V_W = round_up4(IN_W);
    // The horizontal pass's window: HPIX pixels' taps, in 16-byte loads.
    constexpr int WIN = round_up4(TAPS + HPIX - 1);
    constexpr int DT = DTAPS > 0 ? DTAPS : 1;
    constexpr int DHALF = DTAPS / 2;
    constexpr int DEC_W = TILE_W + 2 * DHALF;
    constexpr int DEC_H = DTAPS > 0 ? TILE_H / 2 : 1;
    typedef typename SquareAcc<WIDE>::T Acc;
    static_assert(TILE_W % HPIX == 0 && TILE_H % VROWS == 0 && VROWS % 2 == 0, "tiling");
    static_assert(TILE_W - HPIX + WIN <= V_W, "the window stays inside the padded rows");

    __shared__ __align__(16) unsigned short in_ref[IN_H][IN_W];
    __shared__ __align__(16) unsigned short in_dis[IN_H][IN_W];
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
    if (WORDS_ALIGNED && interior) {
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
    for (int i = tid; i < (TILE_H / VROWS) * IN_W; i += THREADS) {
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
    const i64 thread_sums[4] = {acc.num_log, acc.den_log, acc.flat_sigma2, acc.flat_count};
    for (int q = 0; q < 4; q++) {
        u64 total = block_sum_u64((u64)thread_sums[q], s.reduce);
        if (tid == 0 && total != 0) atomicAdd(sums + q, total);
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
    vif_tile<unsigned char, 17, 9, false>(VIF_ARGS);
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
