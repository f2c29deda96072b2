// SSIMULACRA 2 (src/feature/ssimulacra2: libjxl's tools/ssimulacra2.cc on
// VMAFx's R'G'B' conversion), every step on the device, bit-identical to
// the CPU:
//
//   ssimu2_convert_*      scale 0: Y'CbCr (nearest-neighbour chroma) to
//                         clamped R'G'B', linear RGB, XYB made positive
//   ssimu2_downsample     scale s from s - 1: 2x2 box in linear RGB, XYB
//   ssimu2_blur_rows      libjxl's horizontal recursive Gaussian (its 4-lane
//                         form, scalar steps at the ends) of a, b, a a, b b,
//                         a b per channel: one thread per row and plane,
//                         tiles staged in shared memory, every scale in one
//                         launch
//   ssimu2_blur_columns   the vertical pass (one thread per column and
//                         channel, its five planes at once, coalesced), the
//                         SSIM and edge error terms of each output pixel and
//                         their per-column double sums in row order
//   ssimu2_reduce_columns each quantity's column sums added in the CPU's
//                         fixed pairwise tree (maps.rs `tree_sum`)
//
// The host turns the 6 sums per scale and channel into the norms and the
// score with the CPU's code. Planes are packed rows of `float`; a pyramid
// plane holds every scale one after the other (struct Pyramid).
//
// Exactness: every float and double operation through an _rn intrinsic
// (NVRTC contracts a * b + c by default; float_common.cuh turns hiprtc's
// contraction off), fused multiply-adds (__fmaf_rn) exactly where the CPU
// calls mul_add (libjxl's MulAdd): colour conversion, transfer function,
// opsin matrix, cube root, both blur passes.

#include "common.cuh"
#include "float_common.cuh"

#define SSIMU2_SCALES 6
#define SSIMU2_LINE_THREADS 64
#define SSIMU2_PIXEL_THREADS 128
#define SSIMU2_REDUCE_THREADS 256
// Sums per scale and channel: SSIM error and its 4th power, artifact and
// its 4th power, detail lost and its 4th power.
#define SSIMU2_SUMS 6

// The scales of one frame (crate::gpu::feature::ssimulacra2::Pyramid).
struct Pyramid {
    int scales;
    int width[SSIMU2_SCALES];
    int height[SSIMU2_SCALES];
    // Floats before scale s in a pyramid plane.
    unsigned offset[SSIMU2_SCALES];
    // Floats of one pyramid plane (every scale).
    unsigned plane;
    // Blocks of SSIMU2_LINE_THREADS rows of the scales before s (a block
    // holds rows of one scale), and of all at [scales].
    unsigned row_block_start[SSIMU2_SCALES + 1];
    // Columns of the scales before s, and of all at [scales].
    unsigned column_start[SSIMU2_SCALES + 1];
    // Doubles between two quantities' column sums (the widest scale).
    unsigned sum_stride;
};

// The conversion's constants, f32 as the CPU computes them (colour.rs
// Coefficients, linear.rs, xyb.rs).
struct Colour {
    float y_off, y_scale, c_scale, cr_r, cb_g, cr_g, cb_b;
    // 1 / (2^bits - 1).
    float inv_peak;
    // sRGB to linear: numerator and denominator, constant term first.
    float p[5], q[5];
    float threshold, low_div_inv;
    // Opsin absorbance matrix (row-major) and bias; -cbrt(bias).
    float opsin[9];
    float bias, neg_bias_cbrt;
};

// libjxl's recursive Gaussian (blur.rs RecursiveGaussian).
struct Blur {
    float n2[3], d1[3];
    float mul_in[3][4], mul_prev[3][4], mul_prev2[3][4];
    int radius;
};

__device__ __forceinline__ float clamp01(float v) {
    if (v < 0.0f) v = 0.0f;
    if (v > 1.0f) v = 1.0f;
    return v;
}

// colour.rs chroma_index.
__device__ __forceinline__ int chroma_index(int x, int luma, int chroma) {
    if (chroma == luma) return x;
    if (chroma * 2 == luma) return x >> 1;
    const int c = (int)((u64)x * (u64)chroma / (u64)luma);
    return c < chroma - 1 ? c : chroma - 1;
}

// linear.rs srgb_to_linear.
__device__ __forceinline__ float srgb_to_linear(float v, const Colour &k) {
    const float x = fabsf(v);
    float yp = k.p[4], yq = k.q[4];
    for (int i = 3; i >= 0; i--) {
        yp = __fmaf_rn(yp, x, k.p[i]);
        yq = __fmaf_rn(yq, x, k.q[i]);
    }
    const float magnitude = x > k.threshold ? __fdiv_rn(yp, yq) : fmul(x, k.low_div_inv);
    return copysignf(magnitude, v);
}

// xyb.rs cube_root_and_add, for x >= 0.
__device__ __forceinline__ float cube_root_and_add(float x, float add) {
    const float k1_3 = 1.0f / 3.0f, k4_3 = 4.0f / 3.0f;
    const float xa_3 = fmul(k1_3, x);
    const unsigned m1 = __float_as_uint(x);
    const unsigned m2 = m1 == 0 ? 0u : 0x54800000u - (m1 >> 23) * 0x002AAAAAu;
    float r = __uint_as_float(m2);
    for (int i = 0; i < 3; i++) {
        const float r2 = fmul(r, r);
        r = __fmaf_rn(-xa_3, fmul(r2, r2), fmul(k4_3, r));
    }
    float r2 = fmul(r, r);
    r = __fmaf_rn(k1_3, __fmaf_rn(-x, fmul(r2, r2), r), r);
    r2 = fmul(r, r);
    return __fmaf_rn(r2, x, add);
}

// xyb.rs: linear RGB to positive XYB (opsin, cube root, MakePositiveXYB).
__device__ __forceinline__ void to_xyb(float r, float g, float b, const Colour &k, float &xo,
                                       float &yo, float &so) {
    float lms[3];
    for (int i = 0; i < 3; i++) {
        const float *m = k.opsin + 3 * i;
        float v = __fmaf_rn(m[0], r, __fmaf_rn(m[1], g, __fmaf_rn(m[2], b, k.bias)));
        if (__float_as_uint(v) >> 31) v = 0.0f;
        lms[i] = cube_root_and_add(v, k.neg_bias_cbrt);
    }
    const float xv = fmul(0.5f, fsub(lms[0], lms[1]));
    const float yv = fmul(0.5f, fadd(lms[0], lms[1]));
    so = fadd(fsub(lms[2], yv), 0.55f);
    xo = fadd(fmul(xv, 14.0f), 0.42f);
    yo = fadd(yv, 0.01f);
}

// One picture's planes as shared (pitches in bytes).
template <typename T> struct Planes {
    const T *y, *u, *v;
    unsigned pitch_y, pitch_u, pitch_v;
    int chroma_width, chroma_height;
};

template <typename T>
__device__ __forceinline__ T sample_at(const T *plane, unsigned pitch, int x, int y) {
    return ((const T *)((const char *)plane + (u64)y * pitch))[x];
}

// Scale 0: picture blockIdx.z (0 reference, 1 distorted), row blockIdx.y.
// `linear` and `xyb` are 6 pyramid planes each (picture * 3 + channel).
template <typename T>
__device__ __forceinline__ void convert(Planes<T> ref, Planes<T> dis, Pyramid pyr, Colour k,
                                        float *linear, float *xyb) {
    const int w = pyr.width[0], h = pyr.height[0];
    const int x = blockIdx.x * SSIMU2_PIXEL_THREADS + threadIdx.x, y = blockIdx.y;
    if (x >= w) return;
    const Planes<T> &p = blockIdx.z == 0 ? ref : dis;
    const int cx = chroma_index(x, w, p.chroma_width), cy = chroma_index(y, h, p.chroma_height);
    const float ys = fmul((float)sample_at(p.y, p.pitch_y, x, y), k.inv_peak);
    const float us = fmul((float)sample_at(p.u, p.pitch_u, cx, cy), k.inv_peak);
    const float vs = fmul((float)sample_at(p.v, p.pitch_v, cx, cy), k.inv_peak);
    const float yn = fmul(fsub(ys, k.y_off), k.y_scale);
    const float un = fmul(fsub(us, 0.5f), k.c_scale);
    const float vn = fmul(fsub(vs, 0.5f), k.c_scale);
    float rgb[3];
    rgb[0] = clamp01(__fmaf_rn(k.cr_r, vn, yn));
    rgb[1] = clamp01(__fmaf_rn(k.cr_g, vn, __fmaf_rn(k.cb_g, un, yn)));
    rgb[2] = clamp01(__fmaf_rn(k.cb_b, un, yn));
    const u64 at = (u64)y * w + x, first = (u64)blockIdx.z * 3 * pyr.plane;
    for (int c = 0; c < 3; c++) {
        rgb[c] = srgb_to_linear(rgb[c], k);
        linear[first + (u64)c * pyr.plane + at] = rgb[c];
    }
    float xo, yo, so;
    to_xyb(rgb[0], rgb[1], rgb[2], k, xo, yo, so);
    xyb[first + at] = xo;
    xyb[first + pyr.plane + at] = yo;
    xyb[first + 2 * (u64)pyr.plane + at] = so;
}

#define CONVERT_PARAMS(T)                                                                    \
    Planes<T> ref, Planes<T> dis, Pyramid pyr, Colour k, float *linear, float *xyb

extern "C" __global__ void __launch_bounds__(SSIMU2_PIXEL_THREADS)
    ssimu2_convert_u8(CONVERT_PARAMS(unsigned char)) {
    convert(ref, dis, pyr, k, linear, xyb);
}
extern "C" __global__ void __launch_bounds__(SSIMU2_PIXEL_THREADS)
    ssimu2_convert_u16(CONVERT_PARAMS(unsigned short)) {
    convert(ref, dis, pyr, k, linear, xyb);
}

// Scale `s` (1 or more) from scale s - 1 (downsample.rs), picture
// blockIdx.z, row blockIdx.y; then its XYB.
extern "C" __global__ void __launch_bounds__(SSIMU2_PIXEL_THREADS)
    ssimu2_downsample(Pyramid pyr, int s, Colour k, float *linear, float *xyb) {
    const int w = pyr.width[s - 1], h = pyr.height[s - 1];
    const int ow = pyr.width[s];
    const int ox = blockIdx.x * SSIMU2_PIXEL_THREADS + threadIdx.x, oy = blockIdx.y;
    if (ox >= ow) return;
    const int ys[2] = {2 * oy, min(2 * oy + 1, h - 1)};
    const int xs[2] = {2 * ox, min(2 * ox + 1, w - 1)};
    const u64 first = (u64)blockIdx.z * 3 * pyr.plane;
    const u64 at = pyr.offset[s] + (u64)oy * ow + ox;
    float rgb[3];
    for (int c = 0; c < 3; c++) {
        const float *src = linear + first + (u64)c * pyr.plane + pyr.offset[s - 1];
        float sum = 0.0f;
        for (int r = 0; r < 2; r++)
            for (int i = 0; i < 2; i++) sum = fadd(sum, src[(u64)ys[r] * w + xs[i]]);
        rgb[c] = fmul(sum, 0.25f);
        linear[first + (u64)c * pyr.plane + at] = rgb[c];
    }
    float xo, yo, so;
    to_xyb(rgb[0], rgb[1], rgb[2], k, xo, yo, so);
    xyb[first + at] = xo;
    xyb[first + pyr.plane + at] = yo;
    xyb[first + 2 * (u64)pyr.plane + at] = so;
}

// Which scale item `i` of a launch over every scale's rows (columns) is in,
// and the item within it.
__device__ __forceinline__ int scale_of(unsigned i, const unsigned *start, int scales) {
    int s = 0;
    while (s + 1 < scales && i >= start[s + 1]) s++;
    return s;
}

// The five planes blurred per channel: a a, b b, a b, a, b (mod.rs order
// s11, s22, s12, mu1, mu2).
#define PLANE_S11 0
#define PLANE_S22 1
#define PLANE_S12 2
#define PLANE_MU1 3
#define PLANE_MU2 4

// The horizontal pass is blur.rs horizontal_line on each row: scalar
// steps to the first multiple of 4 at or after radius + 1, four outputs at
// a time, scalar steps to the end. A block holds SSIMU2_LINE_THREADS rows
// of one scale and plane, a thread per row, and walks them in tiles of
// TILE outputs: the block loads the tile's inputs (HALO more on each side,
// zero outside the row) coalesced into shared memory, each thread runs its
// row's recursion over the tile from there, and the block writes the
// outputs back coalesced. Rows in one block share their width, so they
// take the same steps.
#define TILE 64
#define HALO 8
#define TILE_IN (TILE + 2 * HALO + 1)
#define TILE_OUT (TILE + 1)

// One output with bounds checks (lane 0 of libjxl's vectors); `in` is the
// tile's inputs, `at` the index of input 0 in it.
__device__ __forceinline__ void scalar_step(const float *in, int at, float *outs, int n0, int n,
                                            int xsize, const Blur &g, float (&prev)[3],
                                            float (&prev2)[3]) {
    const int left = n - g.radius - 1, right = n + g.radius - 1;
    const float left_val = left >= 0 ? in[at + left] : 0.0f;
    const float right_val = right < xsize ? in[at + right] : 0.0f;
    const float sum = fadd(left_val, right_val);
    float o[3];
#pragma unroll
    for (int k = 0; k < 3; k++) {
        float v = fmul(sum, g.mul_in[k][0]);
        v = __fmaf_rn(g.mul_prev2[k][0], prev2[k], v);
        prev2[k] = prev[k];
        v = __fmaf_rn(g.mul_prev[k][0], prev[k], v);
        prev[k] = v;
        o[k] = v;
    }
    if (n >= 0) outs[n - n0] = fadd(o[0], fadd(o[1], o[2]));
}

// Four outputs from n (a multiple of 4, all inside the row and the tile).
__device__ __forceinline__ void vector_step(const float *in, int at, float *outs, int n0, int n,
                                            const Blur &g, float (&prev)[3], float (&prev2)[3]) {
    const int lo = at + n - g.radius - 1, hi = at + n + g.radius - 1;
    float sum[4];
#pragma unroll
    for (int j = 0; j < 4; j++) sum[j] = fadd(in[lo + j], in[hi + j]);
    float o[3][4];
#pragma unroll
    for (int k = 0; k < 3; k++) {
        float v[4];
#pragma unroll
        for (int j = 0; j < 4; j++) v[j] = fmul(sum[0], g.mul_in[k][j]);
#pragma unroll
        for (int i = 1; i < 4; i++)
#pragma unroll
            for (int j = i; j < 4; j++) v[j] = __fmaf_rn(g.mul_in[k][j - i], sum[i], v[j]);
#pragma unroll
        for (int j = 0; j < 4; j++) v[j] = __fmaf_rn(g.mul_prev2[k][j], prev2[k], v[j]);
#pragma unroll
        for (int j = 0; j < 4; j++) v[j] = __fmaf_rn(g.mul_prev[k][j], prev[k], v[j]);
        prev2[k] = v[2];
        prev[k] = v[3];
#pragma unroll
        for (int j = 0; j < 4; j++) o[k][j] = v[j];
    }
#pragma unroll
    for (int j = 0; j < 4; j++) outs[n - n0 + j] = fadd(o[0][j], fadd(o[1][j], o[2][j]));
}

// The horizontal pass of every scale: blockIdx.x a block of rows (scale s
// from row_block_start), blockIdx.y = channel * 5 + plane. `xyb` is 6
// pyramid planes, `rows` 15 (channel * 5 + plane). Needs radius + 3 <= HALO.
extern "C" __global__ void __launch_bounds__(SSIMU2_LINE_THREADS)
    ssimu2_blur_rows(Pyramid pyr, Blur g, const float *xyb, float *rows) {
    __shared__ float tile_in[SSIMU2_LINE_THREADS * TILE_IN];
    __shared__ float tile_out[SSIMU2_LINE_THREADS * TILE_OUT];
    const int s = scale_of(blockIdx.x, pyr.row_block_start, pyr.scales);
    const int w = pyr.width[s], h = pyr.height[s];
    const int first_row = (int)(blockIdx.x - pyr.row_block_start[s]) * SSIMU2_LINE_THREADS;
    const int c = blockIdx.y / 5, which = blockIdx.y % 5;
    const int rows_here = min(SSIMU2_LINE_THREADS, h - first_row);
    const u64 at = pyr.offset[s] + (u64)first_row * w;
    const float *a = xyb + (u64)c * pyr.plane + at;
    const float *b = xyb + (u64)(3 + c) * pyr.plane + at;
    float *out = rows + (u64)blockIdx.y * pyr.plane + at;
    const int r = threadIdx.x;
    float prev[3] = {0.0f, 0.0f, 0.0f}, prev2[3] = {0.0f, 0.0f, 0.0f};
    const int start = 1 - g.radius;
    const int first_aligned = (g.radius + 1 + 3) / 4 * 4;
    const int aligned_end = min(first_aligned, w);
    const int vector_end = w - g.radius + 1 - 3;
    // Tiles start at multiples of 4 (so four-output steps never straddle
    // two), the first at or before `start`.
    const int origin = start >= 0 ? start / 4 * 4 : -((-start + 3) / 4 * 4);
    for (int n0 = origin; n0 < w; n0 += TILE) {
        // Inputs n0 - HALO .. n0 + TILE + HALO of every row, 0 outside.
        for (int i = threadIdx.x; i < rows_here * (TILE + 2 * HALO); i += SSIMU2_LINE_THREADS) {
            const int row = i / (TILE + 2 * HALO), k = i % (TILE + 2 * HALO);
            const int x = n0 - HALO + k;
            float v = 0.0f;
            if (x >= 0 && x < w) {
                const u64 p = (u64)row * w + x;
                switch (which) {
                case PLANE_S11: v = fmul(a[p], a[p]); break;
                case PLANE_S22: v = fmul(b[p], b[p]); break;
                case PLANE_S12: v = fmul(a[p], b[p]); break;
                case PLANE_MU1: v = a[p]; break;
                default: v = b[p]; break;
                }
            }
            tile_in[row * TILE_IN + k] = v;
        }
        __syncthreads();
        if (r < rows_here) {
            const float *in = tile_in + r * TILE_IN;
            float *outs = tile_out + r * TILE_OUT;
            // Input x is in[x - (n0 - HALO)].
            const int in_at = HALO - n0;
            const int end = min(n0 + TILE, w);
            int n = max(n0, start);
            while (n < end) {
                if (n >= aligned_end && n < vector_end) {
                    vector_step(in, in_at, outs, n0, n, g, prev, prev2);
                    n += 4;
                } else {
                    scalar_step(in, in_at, outs, n0, n, w, g, prev, prev2);
                    n++;
                }
            }
        }
        __syncthreads();
        // Outputs max(n0, 0) .. n0 + TILE of every row.
        const int lo = max(n0, 0), count = min(n0 + TILE, w) - lo;
        for (int i = threadIdx.x; i < rows_here * count; i += SSIMU2_LINE_THREADS) {
            const int row = i / count, k = i % count;
            out[(u64)row * w + lo + k] = tile_out[row * TILE_OUT + lo - n0 + k];
        }
    }
}

__device__ __forceinline__ double at_least_zero(double x) { return x < 0.0 ? 0.0 : x; }
__device__ __forceinline__ double quartic(double x) {
    const double x2 = __dmul_rn(x, x);
    return __dmul_rn(x2, x2);
}

// The vertical pass and the error maps of every scale: thread per column
// (over every scale's columns) and channel blockIdx.y. Per output pixel
// the five blurred values give maps.rs's SSIM error and edge ratio, added
// into this column's six double sums in row order; `sums` gets them at
// ((scale * 3 + channel) * 6 + quantity) * sum_stride + column.
extern "C" __global__ void __launch_bounds__(SSIMU2_LINE_THREADS)
    ssimu2_blur_columns(Pyramid pyr, Blur g, const float *xyb, const float *rows, double *sums) {
    const unsigned i = blockIdx.x * SSIMU2_LINE_THREADS + threadIdx.x;
    if (i >= pyr.column_start[pyr.scales]) return;
    const int s = scale_of(i, pyr.column_start, pyr.scales);
    const int x = (int)(i - pyr.column_start[s]), w = pyr.width[s], h = pyr.height[s];
    const int c = blockIdx.y, radius = g.radius;
    const u64 base = pyr.offset[s] + x;
    const float *in = rows + (u64)c * 5 * pyr.plane + base;
    const float *a = xyb + (u64)c * pyr.plane + base;
    const float *b = xyb + (u64)(3 + c) * pyr.plane + base;
    const float c2 = 0.0009f;
    float y1[5][3], y2[5][3];
    for (int p = 0; p < 5; p++)
        for (int k = 0; k < 3; k++) y1[p][k] = y2[p][k] = 0.0f;
    double sum[SSIMU2_SUMS];
    for (int q = 0; q < SSIMU2_SUMS; q++) sum[q] = 0.0;
    for (int n = 1 - radius; n < h; n++) {
        const int top = n - radius - 1, bottom = n + radius - 1;
        float out[5];
        for (int p = 0; p < 5; p++) {
            const float *plane = in + (u64)p * pyr.plane;
            // blur.rs vertical_body: one input, both, or none.
            float total;
            if (top >= 0 && bottom < h)
                total = fadd(plane[(u64)top * w], plane[(u64)bottom * w]);
            else if (top >= 0)
                total = plane[(u64)top * w];
            else if (bottom < h)
                total = plane[(u64)bottom * w];
            else
                total = 0.0f;
            for (int k = 0; k < 3; k++) {
                const float v = __fmaf_rn(g.n2[k], total, -__fmaf_rn(g.d1[k], y1[p][k], y2[p][k]));
                y2[p][k] = y1[p][k];
                y1[p][k] = v;
            }
            out[p] = fadd(y1[p][0], fadd(y1[p][1], y1[p][2]));
        }
        if (n < 0) continue;
        // maps.rs ssim_errors.
        const float m1 = out[PLANE_MU1], m2 = out[PLANE_MU2];
        const float mu11 = fmul(m1, m1), mu22 = fmul(m2, m2), mu12 = fmul(m1, m2);
        const float diff = fsub(m1, m2);
        const float num_m = (float)__dsub_rn(1.0, (double)fmul(diff, diff));
        const float num_s = fadd(fmul(2.0f, fsub(out[PLANE_S12], mu12)), c2);
        const float denom_s =
            fadd(fadd(fsub(out[PLANE_S11], mu11), fsub(out[PLANE_S22], mu22)), c2);
        const double d = at_least_zero(__dsub_rn(1.0, (double)__fdiv_rn(fmul(num_m, num_s), denom_s)));
        sum[0] = __dadd_rn(sum[0], d);
        sum[1] = __dadd_rn(sum[1], quartic(d));
        // maps.rs edge_ratios.
        const u64 at = (u64)n * w;
        const double e1 = (double)fabsf(fsub(a[at], m1));
        const double e2 = (double)fabsf(fsub(b[at], m2));
        const double d1 = __dsub_rn(__ddiv_rn(__dadd_rn(1.0, e2), __dadd_rn(1.0, e1)), 1.0);
        const double artifact = at_least_zero(d1), detail_lost = at_least_zero(-d1);
        sum[2] = __dadd_rn(sum[2], artifact);
        sum[3] = __dadd_rn(sum[3], quartic(artifact));
        sum[4] = __dadd_rn(sum[4], detail_lost);
        sum[5] = __dadd_rn(sum[5], quartic(detail_lost));
    }
    double *dst = sums + (u64)(s * 3 + c) * SSIMU2_SUMS * pyr.sum_stride + x;
    for (int q = 0; q < SSIMU2_SUMS; q++) dst[(u64)q * pyr.sum_stride] = sum[q];
}

// Quantity blockIdx.x ((scale * 3 + channel) * 6 + sum) of the scales
// present: its column sums added in maps.rs's tree (at each level, step
// 1, 2, 4, ...: x[a] += x[a + step] for a a multiple of 2 step), in place;
// the total into out[blockIdx.x].
extern "C" __global__ void __launch_bounds__(SSIMU2_REDUCE_THREADS)
    ssimu2_reduce_columns(Pyramid pyr, double *sums, double *out) {
    const int s = blockIdx.x / (3 * SSIMU2_SUMS);
    const unsigned n = (unsigned)pyr.width[s];
    double *x = sums + (u64)blockIdx.x * pyr.sum_stride;
    for (unsigned step = 1; step < n; step *= 2) {
        for (unsigned a = threadIdx.x * 2 * step; a + step < n; a += SSIMU2_REDUCE_THREADS * 2 * step)
            x[a] = __dadd_rn(x[a], x[a + step]);
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = x[0];
}
