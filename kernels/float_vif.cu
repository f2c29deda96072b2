// Float VIF (libvmaf 3.2.0's `float_vif`, as src/feature/float_vif
// reproduces it): one launch per scale does, for a tile of pixels, the
// separable moment filter (vertical, then horizontal, in float), the
// per-pixel statistic ("matching_matlab" mode, fast polynomial log2), the
// block's numerator and denominator sums (one double partial each), and
// the decimation of the tile into the next scale's planes (the next
// scale's filter at even rows and columns). Scale 0 reads the shared
// 8- or 16-bit luma and converts it on the fly (-128 offset); the other
// scales read the float planes the previous launch decimated.
//
// Edges: the tile is loaded with every row and column index mirrored about
// the edge sample (reflect-101). The filters are separable and
// column-independent, so filtering mirrored source columns gives exactly
// the mirrored filtered columns the CPU pads its rows with.
//
// Exactness: every float operation in the CPU's order, none fused; the
// statistic's double steps likewise. Per-pixel values are bit-identical to
// the CPU's; only the sums differ: the CPU adds each row in float, here
// they are added in double (see float_common.cuh).

#include "common.cuh"
#include "float_common.cuh"

#define THREADS 256
// Output pixels per block: even, so every decimated sample (at even
// coordinates) belongs to exactly one tile.
#define TILE_W 64
#define TILE_H 16
// Rows of the vertical pass per thread and pixels of the horizontal pass
// per thread: neighbouring outputs share most of their taps, so each value
// read from shared memory serves several outputs.
#define VROWS 4
#define HPIX 4

// The scale's Gaussian and the next scale's (host values, by value).
struct VifFilters {
    float taps[17];
    float next[9];
};

#define VIF_EPS 1.0e-10f

// libvmaf's log2f_approx: exponent plus a degree-8 polynomial of the
// mantissa, Horner in float (coefficients: C double literals in a float
// table).
__device__ __forceinline__ float log2_approx(float x) {
    const float poly[9] = {
        (float)-0.012671635276421, (float)0.064841182402670, (float)-0.157048836463065,
        (float)0.257167726303123,  (float)-0.353800560300520, (float)0.480131410397451,
        (float)-0.721314327952201, (float)1.442694803896991,  0.0f};
    const unsigned bits = __float_as_uint(x);
    const int exponent = (int)((bits & 0x7F800000u) >> 23);
    const float remain = __uint_as_float((bits & 0x007FFFFFu) | 0x3F800000u);
    const float log_base = (float)(exponent - 127);
    const float t = fsub(remain, 1.0f);
    float log_remain = 0.0f;
#pragma unroll
    for (int i = 0; i < 9; i++) log_remain = fadd(fmul(log_remain, t), poly[i]);
    if (x == 0.0f) return -__int_as_float(0x7f800000);
    if (x < 0.0f) return __int_as_float(0x7fffffff);
    return fadd(log_base, log_remain);
}

// C's MAX(x, 0.0f).
__device__ __forceinline__ float max0(float x) { return x > 0.0f ? x : 0.0f; }

// vif_statistic_s of one pixel (compute.rs row_statistic): its numerator
// and denominator terms.
__device__ __forceinline__ void statistic(float m1, float m2, float xx, float yy, float xy,
                                          double nsq, float gain_limit, float sigma_max_inv,
                                          float &num, float &den) {
    float sigma1_sq = max0(fsub(xx, fmul(m1, m1)));
    const float sigma2_sq = max0(fsub(yy, fmul(m2, m2)));
    const float sigma12 = fsub(xy, fmul(m1, m2));
    float g = __fdiv_rn(sigma12, fadd(sigma1_sq, VIF_EPS));
    float sv_sq = fsub(sigma2_sq, fmul(g, sigma12));
    if (sigma1_sq < VIF_EPS) {
        g = 0.0f;
        sv_sq = sigma2_sq;
        sigma1_sq = 0.0f;
    }
    if (sigma2_sq < VIF_EPS) {
        g = 0.0f;
        sv_sq = 0.0f;
    }
    if (g < 0.0f) {
        sv_sq = sigma2_sq;
        g = 0.0f;
    }
    sv_sq = sv_sq > VIF_EPS ? sv_sq : VIF_EPS;
    g = g < gain_limit ? g : gain_limit;
    // Evaluated in double, rounded to float by log2f's parameter.
    const double num_arg =
        __dadd_rn(1.0, __ddiv_rn((double)fmul(fmul(g, g), sigma1_sq), __dadd_rn((double)sv_sq, nsq)));
    const double den_arg = __dadd_rn(1.0, __ddiv_rn((double)sigma1_sq, nsq));
    const float num_val = sigma12 < 0.0f ? 0.0f : log2_approx(__double2float_rn(num_arg));
    const float den_val = log2_approx(__double2float_rn(den_arg));
    const bool low = (double)sigma1_sq < nsq;
    num = low ? fsub(1.0f, fmul(sigma2_sq, sigma_max_inv)) : num_val;
    den = low ? 1.0f : den_val;
}

// Scale 0 keeps the raw samples in shared memory (half the bytes of
// floats) and converts them where read; the other scales are float.
template <typename T> struct Source {
    typedef unsigned short Stored;
    static __device__ __forceinline__ float value(Stored s, float scale) {
        return to_float(s, scale, -128.0f);
    }
};
template <> struct Source<float> {
    typedef float Stored;
    static __device__ __forceinline__ float value(float s, float) { return s; }
};

__host__ __device__ constexpr int round_up4(int n) { return (n + 3) / 4 * 4; }

// The horizontal pass of HPIX neighbouring pixels from `row` (16-byte
// aligned): out[p] = sum_k taps[k] * row[p + k], taps in order from 0.
template <int TAPS, int WIN>
__device__ __forceinline__ void horizontal(const float *row, const float *taps,
                                           float (&out)[HPIX]) {
    float w[WIN];
#pragma unroll
    for (int i = 0; i < WIN; i += 4) {
        const float4 v = *(const float4 *)(row + i);
        w[i] = v.x;
        w[i + 1] = v.y;
        w[i + 2] = v.z;
        w[i + 3] = v.w;
    }
#pragma unroll
    for (int p = 0; p < HPIX; p++) {
        float acc = 0.0f;
#pragma unroll
        for (int k = 0; k < TAPS; k++) acc = fadd(acc, fmul(taps[k], w[p + k]));
        out[p] = acc;
    }
}

// One scale of one tile. DTAPS: the next scale's filter, 0 at the last
// scale. partials: this scale's numerator partials, its denominator ones
// `stride` further.
template <typename T, int TAPS, int DTAPS>
__device__ __forceinline__ void
vif_tile(const T *ref, unsigned ref_pitch, const T *dis, unsigned dis_pitch, int width,
         int height, float scale, const VifFilters &filters, double nsq, float gain_limit,
         float sigma_max_inv, double *partials, unsigned stride, float *next_ref,
         float *next_dis, unsigned next_pitch) {
    typedef typename Source<T>::Stored Stored;
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
    static_assert(TILE_W % HPIX == 0 && TILE_H % VROWS == 0 && VROWS % 2 == 0, "tiling");
    static_assert(TILE_W - HPIX + WIN <= V_W, "the window stays inside the padded rows");

    __shared__ Stored in_ref[IN_H][IN_W];
    __shared__ Stored in_dis[IN_H][IN_W];
    // The vertical pass's moments; the block reduction reuses the space.
    __shared__ __align__(16) union {
        struct {
            float mu1[TILE_H][V_W];
            float mu2[TILE_H][V_W];
            float xx[TILE_H][V_W];
            float yy[TILE_H][V_W];
            float xy[TILE_H][V_W];
        } v;
        double reduce[THREADS];
    } s;
    __shared__ float dec_ref[DEC_H][DEC_W];
    __shared__ float dec_dis[DEC_H][DEC_W];

    const int tid = threadIdx.x;
    const int x0 = blockIdx.x * TILE_W, y0 = blockIdx.y * TILE_H;

    for (int i = tid; i < IN_H * IN_W; i += THREADS) {
        const int r = i / IN_W, c = i % IN_W;
        const int y = mirror_index(y0 - HALF + r, height), x = mirror_index(x0 - HALF + c, width);
        in_ref[r][c] = (Stored)((const T *)((const char *)ref + (u64)y * ref_pitch))[x];
        in_dis[r][c] = (Stored)((const T *)((const char *)dis + (u64)y * dis_pitch))[x];
    }
    __syncthreads();

    // Vertical pass, VROWS rows of a column per item (vertical_moments: x,
    // y, x*x, y*y, x*y, each product rounded, then times the tap). The
    // decimation's vertical pass (the next filter at the even rows) reads
    // the same input rows: done here too, for decimated column dc = c -
    // HALF + DHALF (picture column x0 - DHALF + dc).
    for (int i = tid; i < (TILE_H / VROWS) * IN_W; i += THREADS) {
        const int r0 = i / IN_W * VROWS, c = i % IN_W;
        float mu1[VROWS], mu2[VROWS], xx[VROWS], yy[VROWS], xy[VROWS];
        float da[VROWS / 2], db[VROWS / 2];
#pragma unroll
        for (int q = 0; q < VROWS; q++) mu1[q] = mu2[q] = xx[q] = yy[q] = xy[q] = 0.0f;
#pragma unroll
        for (int m = 0; m < VROWS / 2; m++) da[m] = db[m] = 0.0f;
#pragma unroll
        for (int j = 0; j < TAPS + VROWS - 1; j++) {
            const float a = Source<T>::value(in_ref[r0 + j][c], scale);
            const float b = Source<T>::value(in_dis[r0 + j][c], scale);
            const float aa = fmul(a, a), bb = fmul(b, b), ab = fmul(a, b);
#pragma unroll
            for (int q = 0; q < VROWS; q++) {
                const int k = j - q;
                if (k < 0 || k >= TAPS) continue;
                const float f = filters.taps[k];
                mu1[q] = fadd(mu1[q], fmul(f, a));
                mu2[q] = fadd(mu2[q], fmul(f, b));
                xx[q] = fadd(xx[q], fmul(f, aa));
                yy[q] = fadd(yy[q], fmul(f, bb));
                xy[q] = fadd(xy[q], fmul(f, ab));
            }
            if (DTAPS > 0) {
#pragma unroll
                for (int m = 0; m < VROWS / 2; m++) {
                    const int k = j - (2 * m + HALF - DHALF);
                    if (k < 0 || k >= DT) continue;
                    const float f = filters.next[k];
                    da[m] = fadd(da[m], fmul(f, a));
                    db[m] = fadd(db[m], fmul(f, b));
                }
            }
        }
#pragma unroll
        for (int q = 0; q < VROWS; q++) {
            s.v.mu1[r0 + q][c] = mu1[q];
            s.v.mu2[r0 + q][c] = mu2[q];
            s.v.xx[r0 + q][c] = xx[q];
            s.v.yy[r0 + q][c] = yy[q];
            s.v.xy[r0 + q][c] = xy[q];
        }
        const int dc = c - HALF + DHALF;
        if (DTAPS > 0 && dc >= 0 && dc < DEC_W) {
#pragma unroll
            for (int m = 0; m < VROWS / 2; m++) {
                dec_ref[r0 / 2 + m][dc] = da[m];
                dec_dis[r0 / 2 + m][dc] = db[m];
            }
        }
    }
    __syncthreads();

    // Horizontal pass and the statistic, HPIX pixels of a row per item.
    double num_sum = 0.0, den_sum = 0.0;
    for (int i = tid; i < TILE_H * (TILE_W / HPIX); i += THREADS) {
        const int r = i / (TILE_W / HPIX), c0 = i % (TILE_W / HPIX) * HPIX;
        if (y0 + r >= height || x0 + c0 >= width) continue;
        float mu1[HPIX], mu2[HPIX], xx[HPIX], yy[HPIX], xy[HPIX];
        horizontal<TAPS, WIN>(&s.v.mu1[r][c0], filters.taps, mu1);
        horizontal<TAPS, WIN>(&s.v.mu2[r][c0], filters.taps, mu2);
        horizontal<TAPS, WIN>(&s.v.xx[r][c0], filters.taps, xx);
        horizontal<TAPS, WIN>(&s.v.yy[r][c0], filters.taps, yy);
        horizontal<TAPS, WIN>(&s.v.xy[r][c0], filters.taps, xy);
#pragma unroll
        for (int p = 0; p < HPIX; p++) {
            if (x0 + c0 + p < width) {
                float num, den;
                statistic(mu1[p], mu2[p], xx[p], yy[p], xy[p], nsq, gain_limit, sigma_max_inv,
                          num, den);
                num_sum += (double)num;
                den_sum += (double)den;
            }
        }
    }
    // Horizontal pass of the decimation, at even columns (filter_even_into).
    if (DTAPS > 0) {
        const int out_w = width / 2, out_h = height / 2;
        for (int i = tid; i < (TILE_H / 2) * (TILE_W / 2); i += THREADS) {
            const int r = i / (TILE_W / 2), c = i % (TILE_W / 2);
            const int oy = y0 / 2 + r, ox = x0 / 2 + c;
            if (oy >= out_h || ox >= out_w) continue;
            float a = 0.0f, b = 0.0f;
#pragma unroll
            for (int k = 0; k < DT; k++) {
                const float f = filters.next[k];
                a = fadd(a, fmul(f, dec_ref[r][2 * c + k]));
                b = fadd(b, fmul(f, dec_dis[r][2 * c + k]));
            }
            next_ref[(u64)oy * next_pitch + ox] = a;
            next_dis[(u64)oy * next_pitch + ox] = b;
        }
    }
    __syncthreads();

    const double num_total = block_sum_f64(num_sum, s.reduce);
    const double den_total = block_sum_f64(den_sum, s.reduce);
    if (tid == 0) {
        partials[block_index()] = num_total;
        partials[stride + block_index()] = den_total;
    }
}

#define VIF_PARAMS(T)                                                                        \
    const T *ref, unsigned ref_pitch, const T *dis, unsigned dis_pitch, int width,            \
        int height, float scale, VifFilters filters, double nsq, float gain_limit,            \
        float sigma_max_inv, double *partials, unsigned stride, float *next_ref,              \
        float *next_dis, unsigned next_pitch
#define VIF_ARGS                                                                             \
    ref, ref_pitch, dis, dis_pitch, width, height, scale, filters, nsq, gain_limit,           \
        sigma_max_inv, partials, stride, next_ref, next_dis, next_pitch

extern "C" __global__ void __launch_bounds__(THREADS)
    float_vif_scale0_u8(VIF_PARAMS(unsigned char)) {
    vif_tile<unsigned char, 17, 9>(VIF_ARGS);
}
extern "C" __global__ void __launch_bounds__(THREADS)
    float_vif_scale0_u16(VIF_PARAMS(unsigned short)) {
    vif_tile<unsigned short, 17, 9>(VIF_ARGS);
}
extern "C" __global__ void __launch_bounds__(THREADS) float_vif_scale1(VIF_PARAMS(float)) {
    vif_tile<float, 9, 5>(VIF_ARGS);
}
extern "C" __global__ void __launch_bounds__(THREADS) float_vif_scale2(VIF_PARAMS(float)) {
    vif_tile<float, 5, 3>(VIF_ARGS);
}
extern "C" __global__ void __launch_bounds__(THREADS) float_vif_scale3(VIF_PARAMS(float)) {
    vif_tile<float, 3, 0>(VIF_ARGS);
}
