// Float SSIM and MS-SSIM (libvmaf 3.2.0's `float_ssim` and `float_ms_ssim`,
// as src/feature/common/iqa_ssim.rs and iqa_filter.rs reproduce IQA, and
// VMAFx's `integer_ms_ssim`, which differs from `float_ms_ssim` in its
// halving only):
//
// - float_ssim_stats_*: for a tile of SSIM's "valid" window positions, the
//   11x11 Gaussian moments (horizontal pass over the tile's input rows,
//   then the vertical pass, each an f64 sum of f32 products rounded to
//   f32, as IQA's `_iqa_convolve`), the per-position luminance, contrast
//   and structure terms, and the block's sums of l*c*s, l, c and s (one
//   double partial each).
// - float_ssim_decimate_*: IQA's `_iqa_decimate`, one output sample per
//   thread: a square kernel at every `factor`-th position, samples outside
//   the picture mirrored (KBND_SYMMETRIC), an f64 sum of f32 products.
//   float_ssim's box pre-filter and each level of float_ms_ssim's pyramid.
// - float_ssim_decimate_97_*: integer_ms_ssim's halving (VMAFx's
//   `decimate_97`, src/feature/integer_ms_ssim.rs): the separable 9/7
//   low-pass at even columns, then at even rows, in float with fused
//   multiply-adds, the edge sample repeated at borders; a block per tile
//   of outputs, the horizontal pass through shared memory.
//
// The _u8/_u16 variants read the shared planes and convert each sample as
// picture_copy does (offset 0); the _f32 ones read decimated planes.
//
// Exactness: every float operation in the CPU's order, none fused but
// the 9/7 halving's, which are fused where the CPU fuses (`__fmaf_rn` for
// each `mul_add`), so per-position values and pyramid samples are
// bit-identical to the CPU's; the CPU adds the terms in double row after
// row, here in double per block (fixed order, see float_common.cuh), so
// the means differ by double rounding only.

#include "common.cuh"
#include "float_common.cuh"

#define THREADS 256
// Window positions per block.
#define TILE_W 32
#define TILE_H 16
// SSIM's window.
#define WIN 11
#define IN_W (TILE_W + WIN - 1)
#define IN_H (TILE_H + WIN - 1)
// float_ssim_decimate_*'s block: DEC_W x (THREADS / DEC_W) outputs.
#define DEC_W 32
// Largest non-uniform decimation kernel (float_ms_ssim's 9x9).
#define MAX_TAPS 81

__device__ __forceinline__ double d_add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double d_mul(double a, double b) { return __dmul_rn(a, b); }

// The 1-D Gaussian of SSIM's window (GAUSSIAN_11).
__device__ __forceinline__ float gaussian_tap(int i) {
    const float g[WIN] = {0.001028f, 0.007599f, 0.036001f, 0.109361f, 0.213006f, 0.266012f,
                          0.213006f, 0.109361f, 0.036001f, 0.007599f, 0.001028f};
    return g[i];
}

// SSIM's stabilising constants as the host computes them (f32).
struct SsimConstants {
    float c1, c2, c3;
};

// A decimation kernel, row-major `n x n`; a box filter's taps are all
// equal, so `uniform` kernels pass only k[0] (any size).
struct DecimateTaps {
    float k[MAX_TAPS];
};

// A sample as picture_copy makes it (offset 0); decimated planes are float.
template <typename T> struct Sample {
    static __device__ __forceinline__ float value(T s, float scale) {
        return to_float(s, scale, 0.0f);
    }
};
template <> struct Sample<float> {
    static __device__ __forceinline__ float value(float s, float) { return s; }
};

template <typename T>
__device__ __forceinline__ const T *row_of(const T *plane, unsigned pitch_bytes, int y) {
    return (const T *)((const char *)plane + (u64)y * pitch_bytes);
}

// C's MAX(0.0, x), NaN kept.
__device__ __forceinline__ float non_negative(float x) { return 0.0f > x ? 0.0f : x; }

// The SSIM terms of one window position from its five moments (iqa_ssim.rs
// `ssim`): l and c in double over float denominators, s in float.
__device__ __forceinline__ void ssim_terms(float mu1, float mu2, float sq1, float sq2,
                                           float both, SsimConstants k, double &l, double &c,
                                           double &s) {
    const float var1 = non_negative(fsub(sq1, fmul(mu1, mu1)));
    const float var2 = non_negative(fsub(sq2, fmul(mu2, mu2)));
    float cov = fsub(both, fmul(mu1, mu2));
    const float sigma12 = __fsqrt_rn(fmul(var1, var2));
    l = __ddiv_rn(d_add(d_mul(d_mul(2.0, (double)mu1), (double)mu2), (double)k.c1),
                  (double)fadd(fadd(fmul(mu1, mu1), fmul(mu2, mu2)), k.c1));
    c = __ddiv_rn(d_add(d_mul(2.0, (double)sigma12), (double)k.c2),
                  (double)fadd(fadd(var1, var2), k.c2));
    if (cov < 0.0f && sigma12 <= 0.0f) cov = 0.0f;
    s = (double)__fdiv_rn(fadd(cov, k.c3), fadd(sigma12, k.c3));
}

// One tile of window positions of a `width x height` picture pair (at
// least WIN x WIN). partials: the l*c*s sums, then l, c and s, `stride`
// slots apart.
template <typename T>
__device__ __forceinline__ void ssim_tile(const T *ref, unsigned ref_pitch, const T *dis,
                                          unsigned dis_pitch, int width, int height,
                                          float scale, SsimConstants k, double *partials,
                                          unsigned stride) {
    __shared__ float in_ref[IN_H][IN_W];
    __shared__ float in_dis[IN_H][IN_W];
    // Horizontal pass: mu1, mu2, ref^2, dis^2, ref*dis.
    __shared__ float hz[5][IN_H][TILE_W];
    __shared__ double scratch[THREADS];

    const int tid = threadIdx.x;
    const int x0 = blockIdx.x * TILE_W, y0 = blockIdx.y * TILE_H;
    const int out_w = width - WIN + 1, out_h = height - WIN + 1;

    // Past the picture (a partial tile's unused margin) the edge sample is
    // loaded, only to stay in bounds.
    for (int i = tid; i < IN_H * IN_W; i += THREADS) {
        const int r = i / IN_W, c = i % IN_W;
        const int y = min(y0 + r, height - 1), x = min(x0 + c, width - 1);
        in_ref[r][c] = Sample<T>::value(row_of(ref, ref_pitch, y)[x], scale);
        in_dis[r][c] = Sample<T>::value(row_of(dis, dis_pitch, y)[x], scale);
    }
    __syncthreads();

    // Horizontal pass (Convolver::convolve_valid's first loop): products
    // rounded to float, then times the tap, summed in double, tap order.
    for (int i = tid; i < IN_H * TILE_W; i += THREADS) {
        const int r = i / TILE_W, c = i % TILE_W;
        double m1 = 0.0, m2 = 0.0, s1 = 0.0, s2 = 0.0, x12 = 0.0;
#pragma unroll
        for (int u = 0; u < WIN; u++) {
            const float f = gaussian_tap(u);
            const float a = in_ref[r][c + u], b = in_dis[r][c + u];
            m1 = d_add(m1, (double)fmul(a, f));
            m2 = d_add(m2, (double)fmul(b, f));
            s1 = d_add(s1, (double)fmul(fmul(a, a), f));
            s2 = d_add(s2, (double)fmul(fmul(b, b), f));
            x12 = d_add(x12, (double)fmul(fmul(a, b), f));
        }
        hz[0][r][c] = __double2float_rn(m1);
        hz[1][r][c] = __double2float_rn(m2);
        hz[2][r][c] = __double2float_rn(s1);
        hz[3][r][c] = __double2float_rn(s2);
        hz[4][r][c] = __double2float_rn(x12);
    }
    __syncthreads();

    // Vertical pass and the terms, one window position per item.
    double ssim_sum = 0.0, l_sum = 0.0, c_sum = 0.0, s_sum = 0.0;
    for (int i = tid; i < TILE_H * TILE_W; i += THREADS) {
        const int r = i / TILE_W, c = i % TILE_W;
        if (y0 + r >= out_h || x0 + c >= out_w) continue;
        float m[5];
#pragma unroll
        for (int q = 0; q < 5; q++) {
            double acc = 0.0;
#pragma unroll
            for (int v = 0; v < WIN; v++) acc = d_add(acc, (double)fmul(hz[q][r + v][c], gaussian_tap(v)));
            m[q] = __double2float_rn(acc);
        }
        double l, cs, s;
        ssim_terms(m[0], m[1], m[2], m[3], m[4], k, l, cs, s);
        ssim_sum = d_add(ssim_sum, d_mul(d_mul(l, cs), s));
        l_sum = d_add(l_sum, l);
        c_sum = d_add(c_sum, cs);
        s_sum = d_add(s_sum, s);
    }

    const double totals[4] = {block_sum_f64(ssim_sum, scratch), block_sum_f64(l_sum, scratch),
                              block_sum_f64(c_sum, scratch), block_sum_f64(s_sum, scratch)};
    if (tid == 0) {
#pragma unroll
        for (int q = 0; q < 4; q++) partials[q * stride + block_index()] = totals[q];
    }
}

// KBND_SYMMETRIC (-1 -> 0, n -> n - 1), clamped for pictures smaller than
// the kernel's reach (iqa_filter.rs `mirror`).
__device__ __forceinline__ int mirror_symmetric(int i, int n) {
    const int m = i < 0 ? -1 - i : (i >= n ? 2 * n - 1 - i : i);
    return m < 0 ? 0 : (m >= n ? n - 1 : m);
}

// One output sample of both pictures (Decimator::decimate): the kernel's
// first tap `n / 2` before the centre, taps row by row.
template <typename T>
__device__ __forceinline__ void decimate(const T *ref, unsigned ref_pitch, const T *dis,
                                         unsigned dis_pitch, int width, int height, float scale,
                                         int factor, int n, int uniform, const DecimateTaps &taps,
                                         float *out_ref, float *out_dis, unsigned out_pitch,
                                         int out_w, int out_h) {
    const int x = blockIdx.x * DEC_W + threadIdx.x % DEC_W;
    const int y = blockIdx.y * (THREADS / DEC_W) + threadIdx.x / DEC_W;
    if (x >= out_w || y >= out_h) return;
    const int before = n / 2;
    double a = 0.0, b = 0.0;
    for (int v = 0; v < n; v++) {
        const int sy = mirror_symmetric(y * factor + v - before, height);
        const T *rr = row_of(ref, ref_pitch, sy);
        const T *dr = row_of(dis, dis_pitch, sy);
        for (int u = 0; u < n; u++) {
            const int sx = mirror_symmetric(x * factor + u - before, width);
            const float f = uniform ? taps.k[0] : taps.k[v * n + u];
            a = d_add(a, (double)fmul(Sample<T>::value(rr[sx], scale), f));
            b = d_add(b, (double)fmul(Sample<T>::value(dr[sx], scale), f));
        }
    }
    out_ref[(u64)y * out_pitch + x] = __double2float_rn(a);
    out_dis[(u64)y * out_pitch + x] = __double2float_rn(b);
}

#define STATS_PARAMS(T)                                                                      \
    const T *ref, unsigned ref_pitch, const T *dis, unsigned dis_pitch, int width, int height, \
        float scale, SsimConstants k, double *partials, unsigned stride
#define STATS_ARGS ref, ref_pitch, dis, dis_pitch, width, height, scale, k, partials, stride

extern "C" __global__ void __launch_bounds__(THREADS) float_ssim_stats_u8(STATS_PARAMS(unsigned char)) {
    ssim_tile<unsigned char>(STATS_ARGS);
}
extern "C" __global__ void __launch_bounds__(THREADS) float_ssim_stats_u16(STATS_PARAMS(unsigned short)) {
    ssim_tile<unsigned short>(STATS_ARGS);
}
extern "C" __global__ void __launch_bounds__(THREADS) float_ssim_stats_f32(STATS_PARAMS(float)) {
    ssim_tile<float>(STATS_ARGS);
}

#define DECIMATE_PARAMS(T)                                                                   \
    const T *ref, unsigned ref_pitch, const T *dis, unsigned dis_pitch, int width, int height, \
        float scale, int factor, int n, int uniform, DecimateTaps taps, float *out_ref,        \
        float *out_dis, unsigned out_pitch, int out_w, int out_h
#define DECIMATE_ARGS                                                                        \
    ref, ref_pitch, dis, dis_pitch, width, height, scale, factor, n, uniform, taps, out_ref,   \
        out_dis, out_pitch, out_w, out_h

extern "C" __global__ void __launch_bounds__(THREADS)
    float_ssim_decimate_u8(DECIMATE_PARAMS(unsigned char)) {
    decimate<unsigned char>(DECIMATE_ARGS);
}
extern "C" __global__ void __launch_bounds__(THREADS)
    float_ssim_decimate_u16(DECIMATE_PARAMS(unsigned short)) {
    decimate<unsigned short>(DECIMATE_ARGS);
}
extern "C" __global__ void __launch_bounds__(THREADS)
    float_ssim_decimate_f32(DECIMATE_PARAMS(float)) {
    decimate<float>(DECIMATE_ARGS);
}

// integer_ms_ssim's 9/7 low-pass (LOW_PASS_97, passed by the host).
#define TAPS_97 9
// float_ssim_decimate_97_*'s block: DEC_W x DEC_H outputs, from the
// horizontal pass of DEC_IN_H input rows.
#define DEC_H (THREADS / DEC_W)
#define DEC_IN_H (2 * (DEC_H - 1) + TAPS_97)

struct Taps97 {
    float k[TAPS_97];
};

// One DEC_W x DEC_H tile of the halved pair (decimate_97): the horizontal
// pass at the tile's even columns over the input rows its outputs read
// (into shared memory), then the vertical pass at even rows. Each pass
// starts from 0 and adds tap 0 to 8 as `fma(sample, tap, acc)`, single
// rounding, as the CPU's `mul_add`. Rows and columns mirror with the edge
// sample repeated (mirror_symmetric is the CPU's `mirror` there); the
// tile's margin past the output is filtered from clamped samples and
// never written.
template <typename T>
__device__ __forceinline__ void decimate_97(const T *ref, unsigned ref_pitch, const T *dis,
                                            unsigned dis_pitch, int width, int height,
                                            float scale, const Taps97 &taps, float *out_ref,
                                            float *out_dis, unsigned out_pitch, int out_w,
                                            int out_h) {
    __shared__ float hz_ref[DEC_IN_H][DEC_W];
    __shared__ float hz_dis[DEC_IN_H][DEC_W];
    const int tid = threadIdx.x;
    const int x0 = blockIdx.x * DEC_W, y0 = blockIdx.y * DEC_H;
    const int before = TAPS_97 / 2;

    // Shared row r is input row 2 * y0 - before + r, column c output
    // column x0 + c.
    for (int i = tid; i < DEC_IN_H * DEC_W; i += THREADS) {
        const int r = i / DEC_W, c = i % DEC_W;
        const int sy = mirror_symmetric(2 * y0 - before + r, height);
        const T *rr = row_of(ref, ref_pitch, sy);
        const T *dr = row_of(dis, dis_pitch, sy);
        const int x = 2 * (x0 + c) - before;
        float a = 0.0f, b = 0.0f;
#pragma unroll
        for (int k = 0; k < TAPS_97; k++) {
            const int sx = mirror_symmetric(x + k, width);
            a = __fmaf_rn(Sample<T>::value(rr[sx], scale), taps.k[k], a);
            b = __fmaf_rn(Sample<T>::value(dr[sx], scale), taps.k[k], b);
        }
        hz_ref[r][c] = a;
        hz_dis[r][c] = b;
    }
    __syncthreads();

    // Output (x0 + c, y0 + r) reads shared rows 2 * r to 2 * r + 8.
    const int r = tid / DEC_W, c = tid % DEC_W;
    const int x = x0 + c, y = y0 + r;
    if (x >= out_w || y >= out_h) return;
    float a = 0.0f, b = 0.0f;
#pragma unroll
    for (int k = 0; k < TAPS_97; k++) {
        a = __fmaf_rn(hz_ref[2 * r + k][c], taps.k[k], a);
        b = __fmaf_rn(hz_dis[2 * r + k][c], taps.k[k], b);
    }
    out_ref[(u64)y * out_pitch + x] = a;
    out_dis[(u64)y * out_pitch + x] = b;
}

#define DECIMATE_97_PARAMS(T)                                                                \
    const T *ref, unsigned ref_pitch, const T *dis, unsigned dis_pitch, int width, int height, \
        float scale, Taps97 taps, float *out_ref, float *out_dis, unsigned out_pitch,          \
        int out_w, int out_h
#define DECIMATE_97_ARGS                                                                     \
    ref, ref_pitch, dis, dis_pitch, width, height, scale, taps, out_ref, out_dis, out_pitch,   \
        out_w, out_h

extern "C" __global__ void __launch_bounds__(THREADS)
    float_ssim_decimate_97_u8(DECIMATE_97_PARAMS(unsigned char)) {
    decimate_97<unsigned char>(DECIMATE_97_ARGS);
}
extern "C" __global__ void __launch_bounds__(THREADS)
    float_ssim_decimate_97_u16(DECIMATE_97_PARAMS(unsigned short)) {
    decimate_97<unsigned short>(DECIMATE_97_ARGS);
}
extern "C" __global__ void __launch_bounds__(THREADS)
    float_ssim_decimate_97_f32(DECIMATE_97_PARAMS(float)) {
    decimate_97<float>(DECIMATE_97_ARGS);
}
