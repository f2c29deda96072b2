// `ssim` (integer_ssim): Xiph's fixed-point SSIM of the luma plane,
// bit-identical to the CPU (src/feature/integer_ssim.rs).
//
// ssim_terms_*: one block per 32x8 tile of windows. The window's moments
// are exact integers (the 9-tap Gaussian cut at the picture border, C's
// wrapping `int` products), formed from zero-padded samples: a tap outside
// the picture adds 0, as if dropped. Each window's `w ssim` is taken in
// double through _rn operations in the CPU's order and stored per pixel.
//
// ssim_sum: the CPU adds those terms into one running double in raster
// order; one thread does the same, so the frame's sum has the CPU's bits
// (the sum of the weights is exact in any order and made on the host).

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

#define SUM_THREADS 256
#define SUM_CHUNK (SUM_THREADS * 8)

// The running raster-order sum of `n` terms into `*total` (one block): the
// block stages chunks in shared memory, thread 0 adds them in order.
extern "C" __global__ void ssim_sum(const double *terms, u64 n, double *total) {
    __shared__ double chunk[SUM_CHUNK];
    double sum = 0.0;
    for (u64 base = 0; base < n; base += SUM_CHUNK) {
        u64 count = n - base < SUM_CHUNK ? n - base : SUM_CHUNK;
        for (unsigned i = threadIdx.x; i < count; i += SUM_THREADS) chunk[i] = terms[base + i];
        __syncthreads();
        if (threadIdx.x == 0)
            for (unsigned i = 0; i < count; i++) sum = __dadd_rn(sum, chunk[i]);
        __syncthreads();
    }
    if (threadIdx.x == 0) *total = sum;
}
