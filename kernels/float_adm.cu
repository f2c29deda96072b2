// Float ADM (libvmaf 3.2.0's `float_adm`, as src/feature/float_adm
// reproduces it). Per scale, two launches:
//
// - float_adm_dwt_*: one level of the db2 wavelet of both pictures, one
//   thread per output position (the vertical taps at the four source
//   columns, then the horizontal taps), into the scale's band planes
//   (a, h, v, d of the reference, then of the distorted picture). Scale 0
//   reads the shared 8- or 16-bit luma and converts it on the fly (-128
//   offset); the other scales read the previous scale's `a` bands.
// - float_adm_scale: over a tile of the pooled region, the decouple
//   (restored and additive detail) and the CSF weighting of the tile and
//   its one-sample border into shared memory, then per pixel the masking
//   thresholds and the p-th powers of the DLM numerator, the AIM numerator
//   and the denominator of each angle: nine double partials per block.
//
// The host adds the partials up (float_reduce_partials) and pools them
// with the CPU extractor's own code.
//
// Exactness: every float operation in the CPU's order, none fused (see
// float_common.cuh); the double steps likewise. The CPU's division is
// x86's `rcpss` estimate refined by one Newton-Raphson step; here the same
// Newton step refines the correctly rounded reciprocal, so a quotient may
// differ in its last bit. The CPU adds each row in float, the kernels add
// in double: values agree within float rounding (docs/gpu-testing.md).

#include "common.cuh"
#include "float_common.cuh"

#define THREADS 256
// Pooled-region pixels per block of float_adm_scale.
#define TILE_W 32
#define TILE_H 8
// The tile and its one-sample border (the masking filter's reach).
#define HALO_W (TILE_W + 2)
#define HALO_H (TILE_H + 2)

// Planes of a scale's band buffer: reference a, h, v, d, then distorted.
#define BAND_A 0
#define BAND_H 1
#define BAND_V 2
#define BAND_D 3
#define DIS_BANDS 4

// `dwt2_db2_coeffs_lo_s` / `_hi_s`: C double literals in float tables.
__device__ __forceinline__ float dwt_lo(int k) {
    return k == 0 ? (float)0.482962913144690
                  : k == 1 ? (float)0.836516303737469
                           : k == 2 ? (float)0.224143868041857 : (float)-0.129409522550921;
}
__device__ __forceinline__ float dwt_hi(int k) {
    return k == 0 ? (float)-0.129409522550921
                  : k == 1 ? (float)-0.224143868041857
                           : k == 2 ? (float)0.836516303737469 : (float)-0.482962913144690;
}

// `accum = 0; accum += f[0] * s[0]; ... accum += f[3] * s[3];`
__device__ __forceinline__ float taps4_lo(const float (&s)[4]) {
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; k++) acc = fadd(acc, fmul(dwt_lo(k), s[k]));
    return acc;
}
__device__ __forceinline__ float taps4_hi(const float (&s)[4]) {
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; k++) acc = fadd(acc, fmul(dwt_hi(k), s[k]));
    return acc;
}

// `dwt2_src_indices_filt_s`: source tap 2i - 1 + k mirrored into 0..n
// (-1 becomes 1, past the end 2n - k - 1).
__device__ __forceinline__ int dwt_fold(int k, int n) {
    return k < 0 ? -k : (k >= n ? 2 * n - k - 1 : k);
}

// A sample of the wavelet's input: the shared luma converted as the CPU's
// copy_luma does, or a float band.
template <typename T> struct DwtSource {
    static __device__ __forceinline__ float at(const T *p, unsigned pitch, int y, int x,
                                               float scale) {
        return to_float(((const T *)((const char *)p + (u64)y * pitch))[x], scale, -128.0f);
    }
};
template <> struct DwtSource<float> {
    static __device__ __forceinline__ float at(const float *p, unsigned pitch, int y, int x,
                                               float) {
        return ((const float *)((const char *)p + (u64)y * pitch))[x];
    }
};

// One output position of `adm_dwt2_s` of one picture into bands[0..4).
template <typename T>
__device__ __forceinline__ void dwt_one(const T *src, unsigned pitch, int width, int height,
                                        float scale, int i, int j, float *bands,
                                        unsigned band_pitch, u64 plane_stride) {
    int rows[4], cols[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        rows[k] = dwt_fold(2 * i - 1 + k, height);
        cols[k] = dwt_fold(2 * j - 1 + k, width);
    }
    // The vertical pass at the four source columns.
    float lo[4], hi[4];
#pragma unroll
    for (int c = 0; c < 4; c++) {
        float s[4];
#pragma unroll
        for (int k = 0; k < 4; k++) s[k] = DwtSource<T>::at(src, pitch, rows[k], cols[c], scale);
        lo[c] = taps4_lo(s);
        hi[c] = taps4_hi(s);
    }
    const u64 at = (u64)i * band_pitch + j;
    bands[BAND_A * plane_stride + at] = taps4_lo(lo);
    bands[BAND_V * plane_stride + at] = taps4_hi(lo);
    bands[BAND_H * plane_stride + at] = taps4_lo(hi);
    bands[BAND_D * plane_stride + at] = taps4_hi(hi);
}

// One wavelet level of both pictures (`width x height` in, bands of
// ceil(width / 2) x ceil(height / 2) out, `band_pitch` floats per row).
template <typename T>
__device__ __forceinline__ void dwt_level(const T *ref, unsigned ref_pitch, const T *dis,
                                          unsigned dis_pitch, int width, int height,
                                          float scale, float *bands, unsigned band_pitch,
                                          u64 plane_stride) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= (height + 1) / 2 || j >= (width + 1) / 2) return;
    dwt_one<T>(ref, ref_pitch, width, height, scale, i, j, bands, band_pitch, plane_stride);
    dwt_one<T>(dis, dis_pitch, width, height, scale, i, j, bands + DIS_BANDS * plane_stride,
               band_pitch, plane_stride);
}

#define DWT_PARAMS(T)                                                                        \
    const T *ref, unsigned ref_pitch, const T *dis, unsigned dis_pitch, int width,            \
        int height, float scale, float *bands, unsigned band_pitch, u64 plane_stride
#define DWT_ARGS ref, ref_pitch, dis, dis_pitch, width, height, scale, bands, band_pitch, plane_stride

extern "C" __global__ void float_adm_dwt_u8(DWT_PARAMS(unsigned char)) {
    dwt_level<unsigned char>(DWT_ARGS);
}
extern "C" __global__ void float_adm_dwt_u16(DWT_PARAMS(unsigned short)) {
    dwt_level<unsigned short>(DWT_ARGS);
}
extern "C" __global__ void float_adm_dwt_f32(DWT_PARAMS(float)) { dwt_level<float>(DWT_ARGS); }

// What float_adm_scale needs besides the bands (host values, by value).
struct AdmScaleParams {
    // CSF weights of the h, v and d bands.
    float weights[3];
    // `const float cos_1deg_sq` of adm_decouple_s.
    float cos_1deg_sq;
    double enhn_gain_limit;
    float p_norm;
    // p_norm == 3: cubes by multiplication (libvmaf's fast path).
    int cube;
    // adm_bypass_cm: no masking threshold.
    int bypass_cm;
    // The pooled region of the bands: rows top..bottom, columns left..right.
    int left, top, right, bottom;
};

// FLOAT_ONE_BY_30 / FLOAT_ONE_BY_15: double literals, products in double.
#define ONE_BY_30 0.0333333351
#define ONE_BY_15 0.0666666701

// libvmaf's DIVS (`rcpss` refined by one Newton-Raphson step; see the top).
__device__ __forceinline__ float divs(float n, float d) {
    const float xi = __frcp_rn(d);
    return fmul(n, fadd(xi, fmul(xi, fsub(1.0f, fmul(d, xi)))));
}

// One band of adm_decouple_s: the restored coefficient.
__device__ __forceinline__ float restore(float o, float t, bool angle_flag, double gain_limit) {
    float k = divs(t, fadd(o, 1e-30f));
    k = k < 0.0f ? 0.0f : (k > 1.0f ? 1.0f : k);
    float rst = fmul(k, o);
    if (angle_flag && (double)rst > 0.0) {
        const double e = __dmul_rn((double)rst, gain_limit);
        rst = (float)(e < (double)t ? e : (double)t);
    }
    if (angle_flag && (double)rst < 0.0) {
        const double e = __dmul_rn((double)rst, gain_limit);
        rst = (float)(e > (double)t ? e : (double)t);
    }
    return rst;
}

// `x^p` as the CPU raises pooled values.
__device__ __forceinline__ float raise(float x, const AdmScaleParams &p) {
    return p.cube ? fmul(fmul(x, x), x) : powf(x, p.p_norm);
}

// The nine-tap sum of one angle in libvmaf's order (masking.rs nine_taps).
__device__ __forceinline__ float nine_taps(const float (*f)[HALO_W], int ru, int rc, int rd,
                                           int cl, int cc, int cr, float centre) {
    float sum = 0.0f;
    sum = fadd(sum, f[ru][cl]);
    sum = fadd(sum, f[ru][cc]);
    sum = fadd(sum, f[ru][cr]);
    sum = fadd(sum, f[rc][cl]);
    sum = (float)__dadd_rn((double)sum, __dmul_rn(ONE_BY_15, (double)fabsf(centre)));
    sum = fadd(sum, f[rc][cr]);
    sum = fadd(sum, f[rd][cl]);
    sum = fadd(sum, f[rd][cc]);
    sum = fadd(sum, f[rd][cr]);
    return sum;
}

// One scale's pooled sums over a tile of the pooled region. partials:
// nine quantities, `stride` slots each: DLM numerator h, v, d, AIM
// numerator h, v, d, denominator h, v, d.
extern "C" __global__ void __launch_bounds__(THREADS)
    float_adm_scale(const float *bands, unsigned band_pitch, u64 plane_stride, int width,
                    int height, AdmScaleParams p, double *partials, unsigned stride) {
    // Restored and additive detail, and their CSF-weighted values /30.
    __shared__ float rst[3][HALO_H][HALO_W];
    __shared__ float add[3][HALO_H][HALO_W];
    __shared__ float f_rst[3][HALO_H][HALO_W];
    __shared__ float f_add[3][HALO_H][HALO_W];
    __shared__ double scratch[THREADS];

    const int tid = threadIdx.x;
    const int x0 = p.left + blockIdx.x * TILE_W, y0 = p.top + blockIdx.y * TILE_H;
    const float *ref = bands, *dis = bands + DIS_BANDS * plane_stride;

    for (int idx = tid; idx < HALO_H * HALO_W; idx += THREADS) {
        const int r = idx / HALO_W, c = idx % HALO_W;
        // Border samples outside the band are never read (the thresholds
        // mirror inside it); clamp their loads.
        const int y = min(max(y0 - 1 + r, 0), height - 1);
        const int x = min(max(x0 - 1 + c, 0), width - 1);
        const u64 at = (u64)y * band_pitch + x;
        float o[3], t[3];
#pragma unroll
        for (int b = 0; b < 3; b++) {
            o[b] = ref[(BAND_H + b) * plane_stride + at];
            t[b] = dis[(BAND_H + b) * plane_stride + at];
        }
        // Is the angle between (oh, ov) and (th, tv) under one degree?
        const float ot_dp = fadd(fmul(o[0], t[0]), fmul(o[1], t[1]));
        const float o_mag_sq = fadd(fmul(o[0], o[0]), fmul(o[1], o[1]));
        const float t_mag_sq = fadd(fmul(t[0], t[0]), fmul(t[1], t[1]));
        const bool angle_flag =
            ot_dp >= 0.0f &&
            fmul(ot_dp, ot_dp) >= fmul(fmul(p.cos_1deg_sq, o_mag_sq), t_mag_sq);
#pragma unroll
        for (int b = 0; b < 3; b++) {
            const float rs = restore(o[b], t[b], angle_flag, p.enhn_gain_limit);
            const float ad = fsub(t[b], rs);
            rst[b][r][c] = rs;
            add[b][r][c] = ad;
            f_rst[b][r][c] = (float)__dmul_rn(ONE_BY_30, (double)fabsf(fmul(p.weights[b], rs)));
            f_add[b][r][c] = (float)__dmul_rn(ONE_BY_30, (double)fabsf(fmul(p.weights[b], ad)));
        }
    }
    __syncthreads();

    double sums[9];
#pragma unroll
    for (int q = 0; q < 9; q++) sums[q] = 0.0;
    const int tx = tid % TILE_W, ty = tid / TILE_W;
    const int i = y0 + ty, j = x0 + tx;
    if (i < p.bottom && j < p.right) {
        // Neighbours: before the first row/column mirror to index 1, past
        // the last repeat it; as tile indices (the border starts at -1).
        const int up = i == 0 ? 1 : i - 1, down = i + 1 >= height ? height - 1 : i + 1;
        const int lf = j == 0 ? 1 : j - 1, rt = j + 1 >= width ? width - 1 : j + 1;
        const int ru = up - y0 + 1, rc = ty + 1, rd = down - y0 + 1;
        const int cl = lf - x0 + 1, cc = tx + 1, cr = rt - x0 + 1;
        // DLM: the restored detail masked by the additive impairment; AIM:
        // the additive impairment masked by the restored detail.
        float thr_add = 0.0f, thr_rst = 0.0f;
        if (!p.bypass_cm) {
#pragma unroll
            for (int b = 0; b < 3; b++) {
                const float wa = fmul(p.weights[b], add[b][rc][cc]);
                const float wr = fmul(p.weights[b], rst[b][rc][cc]);
                thr_add = fadd(thr_add, nine_taps(f_add[b], ru, rc, rd, cl, cc, cr, wa));
                thr_rst = fadd(thr_rst, nine_taps(f_rst[b], ru, rc, rd, cl, cc, cr, wr));
            }
        }
        const u64 at = (u64)i * band_pitch + j;
#pragma unroll
        for (int b = 0; b < 3; b++) {
            const float f = p.weights[b];
            float x = fsub(fabsf(fmul(rst[b][rc][cc], f)), thr_add);
            sums[b] = (double)raise(x < 0.0f ? 0.0f : x, p);
            x = fsub(fabsf(fmul(add[b][rc][cc], f)), thr_rst);
            sums[3 + b] = (double)raise(x < 0.0f ? 0.0f : x, p);
            sums[6 + b] = (double)raise(fabsf(fmul(f, ref[(BAND_H + b) * plane_stride + at])), p);
        }
    }
#pragma unroll
    for (int q = 0; q < 9; q++) {
        const double total = block_sum_f64(sums[q], scratch);
        if (tid == 0) partials[q * stride + block_index()] = total;
    }
}
