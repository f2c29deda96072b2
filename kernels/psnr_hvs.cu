// PSNR-HVS (libvmaf 3.2.0's `psnr_hvs`, as src/feature/psnr_hvs/ reproduces
// it): one thread per overlapping 8x8 block (positions 0, 7, 14, ... of a
// plane) computes the block's masking statistics, Daala's integer DCT of
// both sides and the 64 CSF-weighted, masked squared errors with the CPU's
// float operations in the CPU's order (no fused multiply-add: every float
// operation is an _rn intrinsic), so every error term is the CPU's bit for
// bit. The block adds its terms in double; each CUDA block reduces its
// threads' sums in a fixed tree into a partial of its own, and
// float_reduce_partials adds a plane's partials in a fixed order. Only the
// order of the plane sum differs from the CPU's (one running float sum).

#include "common.cuh"
#include "float_common.cuh"

#define THREADS 64

// A plane's CSF table and masking table (src/feature/psnr_hvs/csf.rs),
// passed by value: launch parameters live in constant memory.
struct PsnrHvsWeights {
    float csf[64];
    float mask[64];
};

__device__ __forceinline__ int iadd(int a, int b) { return (int)((unsigned)a + (unsigned)b); }
__device__ __forceinline__ int isub(int a, int b) { return (int)((unsigned)a - (unsigned)b); }
// `(x * k + round) >> shift` with C's wrap-around, arithmetic shift.
__device__ __forceinline__ int mul_round_shr(int x, int k, int round, int shift) {
    return (int)((unsigned)x * (unsigned)k + (unsigned)round) >> shift;
}
// OD_DCT_RSHIFT(x, 1): halving that rounds towards zero.
__device__ __forceinline__ int half(int x) { return iadd((int)((unsigned)x >> 31), x) >> 1; }

// Daala's od_bin_fdct8 on x[0], x[stride], ..., x[7 * stride] into
// y[0..8]; constants and step order as src/feature/psnr_hvs/dct.rs.
__device__ __forceinline__ void fdct8(const int *x, int stride, int *y) {
    int t0 = x[0], t4 = x[stride], t2 = x[2 * stride], t6 = x[3 * stride];
    int t7 = x[4 * stride], t3 = x[5 * stride], t5 = x[6 * stride], t1 = x[7 * stride];
    t1 = isub(t0, t1);
    const int t1h = half(t1);
    t0 = isub(t0, t1h);
    t4 = iadd(t4, t5);
    const int t4h = half(t4);
    t5 = isub(t5, t4h);
    t3 = isub(t2, t3);
    t2 = isub(t2, half(t3));
    t6 = iadd(t6, t7);
    const int t6h = half(t6);
    t7 = isub(t6h, t7);
    t0 = iadd(t0, t6h);
    t6 = isub(t0, t6);
    t2 = isub(t4h, t2);
    t4 = isub(t2, t4);
    t0 = isub(t0, mul_round_shr(t4, 13573, 16384, 15));
    t4 = iadd(t4, mul_round_shr(t0, 11585, 8192, 14));
    t0 = isub(t0, mul_round_shr(t4, 13573, 16384, 15));
    t6 = isub(t6, mul_round_shr(t2, 21895, 16384, 15));
    t2 = iadd(t2, mul_round_shr(t6, 15137, 8192, 14));
    t6 = isub(t6, mul_round_shr(t2, 21895, 16384, 15));
    t3 = iadd(t3, mul_round_shr(t5, 19195, 16384, 15));
    t5 = iadd(t5, mul_round_shr(t3, 11585, 8192, 14));
    t3 = isub(t3, mul_round_shr(t5, 7489, 4096, 13));
    t7 = isub(half(t5), t7);
    t5 = isub(t5, t7);
    t3 = isub(t1h, t3);
    t1 = isub(t1, t3);
    t7 = iadd(t7, mul_round_shr(t1, 3227, 16384, 15));
    t1 = isub(t1, mul_round_shr(t7, 6393, 16384, 15));
    t7 = iadd(t7, mul_round_shr(t1, 3227, 16384, 15));
    t5 = iadd(t5, mul_round_shr(t3, 2485, 4096, 13));
    t3 = isub(t3, mul_round_shr(t5, 18205, 16384, 15));
    t5 = iadd(t5, mul_round_shr(t3, 2485, 4096, 13));
    y[0] = t0; y[1] = t1; y[2] = t2; y[3] = t3;
    y[4] = t4; y[5] = t5; y[6] = t6; y[7] = t7;
}

// The 8x8 transform in place: columns into z, then z's columns back
// (od_bin_fdct8x8); block[8 * v + h] ends up at frequency (v, h).
__device__ __forceinline__ void fdct8x8(int *block) {
    int z[64];
#pragma unroll
    for (int col = 0; col < 8; col++) fdct8(block + col, 8, z + 8 * col);
#pragma unroll
    for (int col = 0; col < 8; col++) fdct8(z + col, 8, block + 8 * col);
}

// The quadrant (`sub` in the C code) of block row i, column j.
__device__ __forceinline__ int quadrant(int i, int j) { return ((i & 12) >> 2) + ((j & 12) >> 1); }

// Summed quadrant variances over the global variance (libvmaf's `s_gvar`
// after its update), in the CPU's float order.
__device__ __forceinline__ float variance_ratio(const int *block) {
    float gmean = 0.0f;
    float means[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int p = 0; p < 64; p++) {
        const float v = (float)block[p];
        gmean = fadd(gmean, v);
        means[quadrant(p >> 3, p & 7)] = fadd(means[quadrant(p >> 3, p & 7)], v);
    }
    gmean = __fdiv_rn(gmean, 64.0f);
#pragma unroll
    for (int q = 0; q < 4; q++) means[q] = __fdiv_rn(means[q], 16.0f);
    float gvar = 0.0f;
    float vars[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int p = 0; p < 64; p++) {
        const int q = quadrant(p >> 3, p & 7);
        const float v = (float)block[p];
        const float g = fsub(v, gmean);
        gvar = fadd(gvar, fmul(g, g));
        const float m = fsub(v, means[q]);
        vars[q] = fadd(vars[q], fmul(m, m));
    }
    // `1 / 63.f * 64` and `1 / 15.f * 16`: unbiased variance factors.
    const float global_scale = fmul(__fdiv_rn(1.0f, 63.0f), 64.0f);
    const float quadrant_scale = fmul(__fdiv_rn(1.0f, 15.0f), 16.0f);
    const float g = fmul(gvar, global_scale);
    if (!(g > 0.0f)) return g;
    float sum = fadd(fmul(vars[0], quadrant_scale), fmul(vars[1], quadrant_scale));
    sum = fadd(sum, fmul(vars[2], quadrant_scale));
    sum = fadd(sum, fmul(vars[3], quadrant_scale));
    return __fdiv_rn(sum, g);
}

// `sqrt(sum(c^2 * mask) * ratio) / 32` over the AC coefficients.
__device__ __forceinline__ float mask_level(const int *coeffs, float ratio,
                                            const PsnrHvsWeights &w) {
    float sum = 0.0f;
#pragma unroll
    for (int p = 1; p < 64; p++) {
        const int sq = (int)((unsigned)coeffs[p] * (unsigned)coeffs[p]);
        sum = fadd(sum, fmul((float)sq, w.mask[p]));
    }
    return __fdiv_rn(__fsqrt_rn(fmul(sum, ratio)), 32.0f);
}

template <typename T>
__device__ __forceinline__ void load_block(const T *plane, unsigned pitch, int x, int y,
                                           int *block) {
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const T *row = (const T *)((const char *)plane + (u64)(y + i) * pitch) + x;
#pragma unroll
        for (int j = 0; j < 8; j++) block[8 * i + j] = (int)row[j];
    }
}

// The 64 error terms of the block at (x, y), added in double in the CPU's
// term order.
template <typename T>
__device__ __forceinline__ double block_error(const T *ref, unsigned ref_pitch, const T *dis,
                                              unsigned dis_pitch, int x, int y,
                                              const PsnrHvsWeights &w) {
    int s[64], d[64];
    load_block(ref, ref_pitch, x, y, s);
    load_block(dis, dis_pitch, x, y, d);
    const float s_ratio = variance_ratio(s);
    const float d_ratio = variance_ratio(d);
    fdct8x8(s);
    fdct8x8(d);
    const float s_mask = mask_level(s, s_ratio, w);
    const float d_mask = mask_level(d, d_ratio, w);
    const float mask = d_mask > s_mask ? d_mask : s_mask;
    double total = 0.0;
#pragma unroll
    for (int p = 0; p < 64; p++) {
        const int diff = isub(s[p], d[p]);
        float err = (float)(diff < 0 ? (int)(0u - (unsigned)diff) : diff);
        if (p != 0) {
            const float threshold = __fdiv_rn(mask, w.mask[p]);
            err = err < threshold ? 0.0f : fsub(err, threshold);
        }
        const float weighted = fmul(err, w.csf[p]);
        total += (double)fmul(weighted, weighted);
    }
    return total;
}

// Grid (ceil(blocks_x / THREADS), blocks_y): thread x of CUDA block
// (bx, by) scores 8x8 block (THREADS * bx + x, by); each CUDA block writes
// its sum to partials[block_index()].
template <typename T>
__device__ __forceinline__ void psnr_hvs_plane(const T *ref, unsigned ref_pitch, const T *dis,
                                               unsigned dis_pitch, int blocks_x,
                                               const PsnrHvsWeights &w, double *partials) {
    __shared__ double scratch[THREADS];
    const int bx = blockIdx.x * THREADS + threadIdx.x;
    const double sum =
        bx < blocks_x ? block_error(ref, ref_pitch, dis, dis_pitch, 7 * bx, 7 * (int)blockIdx.y, w)
                      : 0.0;
    const double total = block_sum_f64(sum, scratch);
    if (threadIdx.x == 0) partials[block_index()] = total;
}

#define PSNR_HVS_PARAMS(T)                                                                    \
    const T *ref, unsigned ref_pitch, const T *dis, unsigned dis_pitch, int blocks_x,          \
        PsnrHvsWeights weights, double *partials

extern "C" __global__ void __launch_bounds__(THREADS) psnr_hvs_plane_u8(PSNR_HVS_PARAMS(unsigned char)) {
    psnr_hvs_plane(ref, ref_pitch, dis, dis_pitch, blocks_x, weights, partials);
}
extern "C" __global__ void __launch_bounds__(THREADS)
    psnr_hvs_plane_u16(PSNR_HVS_PARAMS(unsigned short)) {
    psnr_hvs_plane(ref, ref_pitch, dis, dis_pitch, blocks_x, weights, partials);
}
