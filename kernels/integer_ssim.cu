// `ssim` (integer_ssim): Xiph's fixed-point SSIM of the luma plane,
// bit-identical to the CPU (src/feature/integer_ssim.rs).
//
// ssim_terms_*: one block per 32x8 tile of windows. The window's moments
// are exact integers (the 9-tap Gaussian cut at the picture border, C's
// wrapping `int` products), formed from zero-padded samples: a tap outside
// the picture adds 0, as if dropped. Each window's `w ssim` is taken in
// double through _rn operations in the CPU's order and stored per pixel.
//
// The CPU adds those terms into one running double in raster order; the
// kernels below reproduce that sum exactly (the sum of the weights is exact
// in any order and made on the host).

#include "common.cuh"

#define TILE_W 32
#define TILE_H 8
#define RADIUS 4
#define TAPS_N 9
#define THREADS (TILE_W * TILE_H)
#define IN_W (TILE_W + 2 * RADIUS)
#define IN_H (TILE_H + 2 * RADIUS)

__device__ __forceinline__ int ssim_tap(int k) {
    const int taps[TAPS_N] = {2, 9, 28, 55, 68, 55, 28, 9, 2};
    return taps[k];
}

// Sum of the taps of a window centred at `i` that fall inside 0..n.
__device__ __forceinline__ int inside_weight(int i, int n) {
    int w = 0;
    for (int k = 0; k < TAPS_N; k++) {
        int at = i + k - RADIUS;
        if (at >= 0 && at < n) w += ssim_tap(k);
    }
    return w;
}

// C's `int` product, wrapping (above 12 bits `t * a * a` exceeds 2^31).
__device__ __forceinline__ i64 wrap_mul(int a, int b) {
    return (i64)(int)((unsigned)a * (unsigned)b);
}

template <typename T>
__device__ void ssim_terms(const T *ref, unsigned ref_pitch, const T *dis, unsigned dis_pitch,
                           unsigned width, unsigned height, double c1_base, double c2_base,
                           double *terms) {
    __shared__ int s[IN_H][IN_W];
    __shared__ int d[IN_H][IN_W];
    // Horizontal sums of the five moments: mx, my, xx, xy, yy.
    __shared__ i64 h[5][IN_H][TILE_W];
    const int t = threadIdx.x;
    const int x0 = blockIdx.x * TILE_W, y0 = blockIdx.y * TILE_H;
    const int w = (int)width, hh = (int)height;
    for (int i = t; i < IN_H * IN_W; i += THREADS) {
        int r = i / IN_W, c = i % IN_W;
        int y = y0 + r - RADIUS, x = x0 + c - RADIUS;
        int a = 0, b = 0;
        if (y >= 0 && y < hh && x >= 0 && x < w) {
            a = ((const T *)((const char *)ref + (u64)y * ref_pitch))[x];
            b = ((const T *)((const char *)dis + (u64)y * dis_pitch))[x];
        }
        s[r][c] = a;
        d[r][c] = b;
    }
    __syncthreads();
    for (int i = t; i < IN_H * TILE_W; i += THREADS) {
        int r = i / TILE_W, c = i % TILE_W;
        i64 m[5] = {0, 0, 0, 0, 0};
        for (int k = 0; k < TAPS_N; k++) {
            int tap = ssim_tap(k), a = s[r][c + k], b = d[r][c + k];
            int ta = tap * a, tb = tap * b;
            m[0] += ta;
            m[1] += tb;
            m[2] += wrap_mul(ta, a);
            m[3] += wrap_mul(ta, b);
            m[4] += wrap_mul(tb, b);
        }
        for (int q = 0; q < 5; q++) h[q][r][c] = m[q];
    }
    __syncthreads();
    const int tx = t % TILE_W, ty = t / TILE_W;
    const int x = x0 + tx, y = y0 + ty;
    if (x >= w || y >= hh) return;
    i64 m[5] = {0, 0, 0, 0, 0};
    for (int k = 0; k < TAPS_N; k++) {
        i64 tap = ssim_tap(k);
        for (int q = 0; q < 5; q++) m[q] += tap * h[q][ty + k][tx];
    }
    double mx = __ll2double_rn(m[0]), my = __ll2double_rn(m[1]);
    double xx = __ll2double_rn(m[2]), xy = __ll2double_rn(m[3]), yy = __ll2double_rn(m[4]);
    double wt = __dmul_rn((double)inside_weight(x, w), (double)inside_weight(y, hh));
    // SsimOutputs::term, operation by operation.
    double c1 = __dmul_rn(__dmul_rn(c1_base, wt), wt);
    double c2 = __dmul_rn(__dmul_rn(c2_base, wt), wt);
    double mx2 = __dmul_rn(mx, mx), mxy = __dmul_rn(mx, my), my2 = __dmul_rn(my, my);
    double num = __dmul_rn(__dmul_rn(wt, __dadd_rn(__dmul_rn(2.0, mxy), c1)),
                           __dadd_rn(c2, __dmul_rn(2.0, __dsub_rn(__dmul_rn(xy, wt), mxy))));
    double var = __dadd_rn(
        __dsub_rn(__dadd_rn(__dsub_rn(__dmul_rn(xx, wt), mx2), __dmul_rn(yy, wt)), my2), c2);
    double den = __dmul_rn(__dadd_rn(__dadd_rn(mx2, my2), c1), var);
    terms[(u64)y * width + x] = __ddiv_rn(num, den);
}

extern "C" __global__ void ssim_terms_u8(const unsigned char *ref, unsigned ref_pitch,
                                         const unsigned char *dis, unsigned dis_pitch,
                                         unsigned width, unsigned height, double c1_base,
                                         double c2_base, double *terms) {
    ssim_terms(ref, ref_pitch, dis, dis_pitch, width, height, c1_base, c2_base, terms);
}

extern "C" __global__ void ssim_terms_u16(const unsigned short *ref, unsigned ref_pitch,
                                          const unsigned short *dis, unsigned dis_pitch,
                                          unsigned width, unsigned height, double c1_base,
                                          double c2_base, double *terms) {
    ssim_terms(ref, ref_pitch, dis, dis_pitch, width, height, c1_base, c2_base, terms);
}

// The frame's sum: the CPU's running double sum in raster order, exactly
// but in parallel. Inside one binade [2^e, 2^(e+1)) the running sum S is
// N ulps (u = 2^(e-52), N in [2^52, 2^53)) and fl(S + t) adds t/u rounded
// to an integer, ties to even, so only N's parity matters: a chunk of
// terms is a map {parity of N -> ulps added}, with the lowest and highest
// partial count to check that the sum stays in the binade.
//   ssim_chunk_sums: each chunk's sum (a fixed tree), to predict e;
//   ssim_predict:    the prefix of those sums, each chunk's predicted e;
//   ssim_maps:       one thread per chunk builds its map for that e;
//   ssim_walk:       one thread walks the chunks with the exact sum,
//                    applying a map where the sum is in its binade and
//                    stays there, adding the chunk's terms one by one
//                    elsewhere (first chunks, binade crossings, wrong
//                    predictions). Predictions decide speed only.

#define CHUNK 512
#define SUM_THREADS 256
#define NO_BINADE (-100000)

// Per start parity: ulps added, lowest and highest partial count; `e` the
// binade it is for. 56 bytes (the host allocates that per chunk).
struct ChunkMap {
    i64 ulps[2], lo[2], hi[2];
    int e;
};
static_assert(sizeof(ChunkMap) == 56, "the host's MAP_BYTES");

// A chunk's terms summed in a fixed tree.
extern "C" __global__ void ssim_chunk_sums(const double *terms, u64 n, double *sums) {
    __shared__ double scratch[SUM_THREADS];
    const u64 base = (u64)blockIdx.x * CHUNK;
    double v = 0.0;
    for (unsigned i = threadIdx.x; i < CHUNK; i += SUM_THREADS)
        if (base + i < n) v = __dadd_rn(v, terms[base + i]);
    scratch[threadIdx.x] = v;
    __syncthreads();
    for (unsigned half = SUM_THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            scratch[threadIdx.x] = __dadd_rn(scratch[threadIdx.x], scratch[threadIdx.x + half]);
        __syncthreads();
    }
    if (threadIdx.x == 0) sums[blockIdx.x] = scratch[0];
}

// The binade of a positive normal double, or NO_BINADE.
__device__ __forceinline__ int binade(double v) {
    if (!(v > 0.0)) return NO_BINADE;
    int biased = (int)((u64)__double_as_longlong(v) >> 52) & 0x7ff;
    return biased == 0 || biased == 0x7ff ? NO_BINADE : biased - 1023;
}

// 2^k as a double (k within the normal range).
__device__ __forceinline__ double pow2(int k) {
    return __longlong_as_double((i64)(k + 1023) << 52);
}

// Each chunk's predicted binade: that of the approximate sum before it,
// when the approximate sum after it is in the same one (one block).
extern "C" __global__ void ssim_predict(const double *sums, unsigned chunks, int *binades) {
    __shared__ double part[SUM_THREADS];
    const unsigned per = (chunks + SUM_THREADS - 1) / SUM_THREADS;
    const unsigned first = threadIdx.x * per;
    double own = 0.0;
    for (unsigned c = first; c < first + per && c < chunks; c++) own = __dadd_rn(own, sums[c]);
    part[threadIdx.x] = own;
    __syncthreads();
    if (threadIdx.x == 0) {
        double run = 0.0;
        for (unsigned i = 0; i < SUM_THREADS; i++) {
            double next = __dadd_rn(run, part[i]);
            part[i] = run;
            run = next;
        }
    }
    __syncthreads();
    double before = part[threadIdx.x];
    for (unsigned c = first; c < first + per && c < chunks; c++) {
        double after = __dadd_rn(before, sums[c]);
        int e = binade(before);
        binades[c] = e != NO_BINADE && e == binade(after) && e > -900 && e < 100 ? e : NO_BINADE;
        before = after;
    }
}

// One thread per chunk: its map for the predicted binade (NO_BINADE when
// there is none, or a term is too large for that binade's grid).
extern "C" __global__ void ssim_maps(const double *terms, u64 n, const int *binades,
                                     unsigned chunks, ChunkMap *maps) {
    const unsigned c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= chunks) return;
    ChunkMap m;
    m.e = binades[c];
    for (int p = 0; p < 2; p++) m.ulps[p] = m.lo[p] = m.hi[p] = 0;
    if (m.e != NO_BINADE) {
        const double scale = pow2(52 - m.e);
        const u64 base = (u64)c * CHUNK, end = base + CHUNK < n ? base + CHUNK : n;
        i64 q[2] = {0, 1};
        for (u64 i = base; i < end; i++) {
            // t / u exactly (a power-of-two scale; a tiny t's lost bits
            // cannot move it across half an ulp).
            double scaled = __dmul_rn(terms[i], scale);
            if (!(scaled > -4503599627370496.0 && scaled < 4503599627370496.0)) {
                m.e = NO_BINADE;
                break;
            }
            i64 k = __double2ll_rd(scaled);
            double f = __dsub_rn(scaled, __ll2double_rn(k));
            for (int p = 0; p < 2; p++) {
                i64 r = k + (f > 0.5 ? 1 : (f == 0.5 ? ((q[p] + k) & 1) : 0));
                m.ulps[p] += r;
                q[p] = (q[p] + r) & 1;
                if (m.ulps[p] < m.lo[p]) m.lo[p] = m.ulps[p];
                if (m.ulps[p] > m.hi[p]) m.hi[p] = m.ulps[p];
            }
        }
    }
    maps[c] = m;
}

// The running sum of all terms (one thread), into `*total`.
extern "C" __global__ void ssim_walk(const double *terms, u64 n, const ChunkMap *maps,
                                     unsigned chunks, double *total) {
    if (threadIdx.x != 0) return;
    const i64 low = (i64)1 << 52, high = (i64)1 << 53;
    double sum = 0.0;
    for (unsigned c = 0; c < chunks; c++) {
        const ChunkMap m = maps[c];
        if (m.e != NO_BINADE && binade(sum) == m.e) {
            const double u = pow2(m.e - 52);
            // N: the sum in ulps (exact: a power-of-two scale).
            const i64 big = __double2ll_rz(__dmul_rn(sum, pow2(52 - m.e)));
            const int p = (int)(big & 1);
            // Every partial sum strictly inside the binade: the grid is u.
            if (big + m.lo[p] > low && big + m.hi[p] < high) {
                sum = __dmul_rn(__ll2double_rn(big + m.ulps[p]), u);
                continue;
            }
        }
        const u64 base = (u64)c * CHUNK, end = base + CHUNK < n ? base + CHUNK : n;
        for (u64 i = base; i < end; i++) sum = __dadd_rn(sum, terms[i]);
    }
    *total = sum;
}
