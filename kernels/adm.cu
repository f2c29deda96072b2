// Integer ADM (libvmaf 3.2.0's integer_adm) as src/feature/adm/ computes
// it, bit for bit: per scale, the db2 DWT of both pictures (adm_dwt0_* for
// the picture, adm_dwt_coarse_* for the approximations), then decoupling,
// contrast masking and the cube sums per row (adm_score_*), then the
// per-row rounding shifts and totals (adm_finalize). Every width, rounding
// and wrap follows the CPU code; the host turns the integer totals into
// scores with the CPU's own float functions.

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

// Threads per block of the 2-D kernels: a warp-agnostic 32 x 8 tile.
#define BX 32
#define BY 8
// Per-row sums of a scale: ADM numerator (h, v, d), AIM numerator (h, v,
// d), reference energy (h, v, d).
#define SUMS 9

// libvmaf's mirrored tap position: -k for k < 0, 2n - k - 1 past the end.
__device__ inline int mirror(int k, int n) {
    if (k < 0) return -k;
    if (k >= n) return 2 * n - k - 1;
    return k;
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
// Scale 0 DWT

// Vertical pass of scale 0 at column c of the four rows: 16-bit low and
// high pass, the low pass centred on zero.
template <typename T>
__device__ inline void vertical0(const T *const *rows, int c, int bit_depth, int *lo,
                                 int *hi) {
    int s[4] = {(int)rows[0][c], (int)rows[1][c], (int)rows[2][c], (int)rows[3][c]};
    int round = 1 << (bit_depth - 1);
    u32 l = (u32)filter32(DB2_LO, s) - (u32)(DB2_LO_SUM * round);
    *lo = (short)((int)(l + (u32)round) >> bit_depth);
    *hi = (short)((int)((u32)filter32(DB2_HI, s) + (u32)round) >> bit_depth);
}

// Horizontal pass of scale 0: 16-bit output.
__device__ inline short hpass0(const int *f, const int *s) {
    return (short)((int)((u32)filter32(f, s) + (1u << 15)) >> 16);
}

// One thread per output coefficient, blockIdx.z the picture (0 reference,
// 1 distorted). Writes the approximation and, with `details`, the h, v, d
// bands (three planes of ow x oh per picture). With `overrun`, the last
// column's approximation and v band use unmirrored taps that continue
// into the high-pass row, as libvmaf's AVX-512 code does (feature/adm/dwt.rs).
template <typename T>
__device__ void dwt0(const T *ref, u32 ref_pitch, const T *dis, u32 dis_pitch, int w, int h,
                     int bit_depth, int ow, int oh, short *approx, short *bands, int details,
                     int overrun) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (j >= ow || i >= oh) return;
    int p = blockIdx.z;
    const T *src = p ? dis : ref;
    u64 pitch = p ? dis_pitch : ref_pitch;
    const T *rows[4];
    for (int t = 0; t < 4; t++) {
        rows[t] = (const T *)((const char *)src + (u64)mirror(2 * i - 1 + t, h) * pitch);
    }
    int lo[4], hi[4];
    for (int t = 0; t < 4; t++) {
        vertical0(rows, mirror(2 * j - 1 + t, w), bit_depth, &lo[t], &hi[t]);
    }
    u64 n = (u64)ow * oh, at = (u64)i * ow + j;
    short a = hpass0(DB2_LO, lo);
    if (details) {
        short *b = bands + 3 * n * p;
        short v = hpass0(DB2_HI, lo);
        b[at] = hpass0(DB2_LO, hi);
        b[2 * n + at] = hpass0(DB2_HI, hi);
        if (overrun && j == ow - 1) {
            int s[4];
            for (int t = 0; t < 4; t++) {
                int q = 2 * j - 1 + t, l, hh;
                if (q < w) {
                    vertical0(rows, q, bit_depth, &l, &hh);
                    s[t] = l;
                } else {
                    vertical0(rows, q - w, bit_depth, &l, &hh);
                    s[t] = hh;
                }
            }
            a = hpass0(DB2_LO, s);
            v = hpass0(DB2_HI, s);
        }
        b[n + at] = v;
    }
    approx[n * p + at] = a;
}

extern "C" __global__ void adm_dwt0_u8(const unsigned char *ref, u32 ref_pitch,
                                       const unsigned char *dis, u32 dis_pitch, int w, int h,
                                       int bit_depth, int ow, int oh, short *approx,
                                       short *bands, int details, int overrun) {
    dwt0(ref, ref_pitch, dis, dis_pitch, w, h, bit_depth, ow, oh, approx, bands, details,
         overrun);
}

extern "C" __global__ void adm_dwt0_u16(const unsigned short *ref, u32 ref_pitch,
                                        const unsigned short *dis, u32 dis_pitch, int w, int h,
                                        int bit_depth, int ow, int oh, short *approx,
                                        short *bands, int details, int overrun) {
    dwt0(ref, ref_pitch, dis, dis_pitch, w, h, bit_depth, ow, oh, approx, bands, details,
         overrun);
}

// ---------------------------------------------------------------------
// Scales 1-3 DWT

// Vertical pass of scales 1-3 at column c (rows: input row indices).
template <typename In>
__device__ inline int vertical_coarse(const In *src, int iw, const int *rows, int c,
                                      const int *f, i64 add, int shift) {
    int s[4];
    for (int t = 0; t < 4; t++) s[t] = (int)src[(u64)rows[t] * iw + c];
    return (int)((filter64(f, s) + add) >> shift);
}

__device__ inline int hpass_coarse(const int *f, const int *s, i64 add, int shift) {
    return (int)((filter64(f, s) + add) >> shift);
}

// The previous scale, whose last vertical-pass row libvmaf's scratch still
// holds past the rows of this scale (what the overrun of the distorted
// high-pass row reads). `input` null: nothing was written there (zeros).
template <typename Prev>
struct PrevScale {
    const Prev *input;
    int iw, ih, oh;
    i64 add;
    int shift;
};

// Value k (0 or 1) past the end of the four `iw`-wide rows (reference low,
// reference high, distorted low, distorted high) of the scratch: the
// previous scale's last vertical row, laid out the same way with its width.
template <typename Prev>
__device__ int stale(const PrevScale<Prev> &prev, int iw, int k) {
    if (!prev.input) return 0;
    u64 flat = 4 * (u64)iw + k;
    int b = (int)(flat / prev.iw), c = (int)(flat % prev.iw);
    int rows[4];
    for (int t = 0; t < 4; t++) rows[t] = mirror(2 * (prev.oh - 1) - 1 + t, prev.ih);
    const Prev *src = prev.input + (u64)(b / 2) * prev.iw * prev.ih;
    return vertical_coarse(src, prev.iw, rows, c, b % 2 == 0 ? DB2_LO : DB2_HI, prev.add,
                           prev.shift);
}

// One thread per output coefficient of scale s (1-3), blockIdx.z the
// picture; `in` holds both pictures' approximations of scale s - 1 (iw x
// ih each). With `overrun`, the last column uses unmirrored taps reading
// past each vertical-pass row into the next one of libvmaf's scratch
// (reference low, reference high, distorted low, distorted high, then what
// the previous scale left: see `stale`).
template <typename In, typename Prev>
__device__ void dwt_coarse(const In *in, int iw, int ih, int ow, int oh, i64 vadd, int vshift,
                           i64 hadd, int hshift, int *approx, int *bands, int overrun,
                           PrevScale<Prev> prev) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (j >= ow || i >= oh) return;
    int p = blockIdx.z;
    u64 in_n = (u64)iw * ih;
    const In *src = in + in_n * p;
    int rows[4], lo[4], hi[4];
    for (int t = 0; t < 4; t++) rows[t] = mirror(2 * i - 1 + t, ih);
    for (int t = 0; t < 4; t++) {
        int c = mirror(2 * j - 1 + t, iw);
        lo[t] = vertical_coarse(src, iw, rows, c, DB2_LO, vadd, vshift);
        hi[t] = vertical_coarse(src, iw, rows, c, DB2_HI, vadd, vshift);
    }
    if (overrun && j == ow - 1) {
        for (int t = 0; t < 4; t++) {
            int q = 2 * j - 1 + t;
            if (q < iw) {
                lo[t] = vertical_coarse(src, iw, rows, q, DB2_LO, vadd, vshift);
                hi[t] = vertical_coarse(src, iw, rows, q, DB2_HI, vadd, vshift);
            } else {
                int k = q - iw;
                lo[t] = vertical_coarse(src, iw, rows, k, DB2_HI, vadd, vshift);
                hi[t] = p == 0 ? vertical_coarse(in + in_n, iw, rows, k, DB2_LO, vadd, vshift)
                               : stale(prev, iw, k);
            }
        }
    }
    u64 n = (u64)ow * oh, at = (u64)i * ow + j;
    int *b = bands + 3 * n * p;
    approx[n * p + at] = hpass_coarse(DB2_LO, lo, hadd, hshift);
    b[at] = hpass_coarse(DB2_LO, hi, hadd, hshift);
    b[n + at] = hpass_coarse(DB2_HI, lo, hadd, hshift);
    b[2 * n + at] = hpass_coarse(DB2_HI, hi, hadd, hshift);
}

#define DWT_COARSE(name, In, Prev)                                                            \
    extern "C" __global__ void name(const In *in, int iw, int ih, int ow, int oh, i64 vadd,   \
                                    int vshift, i64 hadd, int hshift, int *approx,             \
                                    int *bands, int overrun, const Prev *prev_input,           \
                                    int prev_iw, int prev_ih, int prev_oh, i64 prev_add,       \
                                    int prev_shift) {                                          \
        PrevScale<Prev> prev = {prev_input, prev_iw, prev_ih, prev_oh, prev_add, prev_shift}; \
        dwt_coarse(in, iw, ih, ow, oh, vadd, vshift, hadd, hshift, approx, bands, overrun,    \
                   prev);                                                                      \
    }

// Scale 1 reads the 16-bit scale-0 approximation (nothing precedes it in
// the scratch); scale 2 reads scale 1's, with scale 1's input before it;
// scale 3 likewise.
DWT_COARSE(adm_dwt_coarse_s1, short, short)
DWT_COARSE(adm_dwt_coarse_s2, int, short)
DWT_COARSE(adm_dwt_coarse_s3, int, int)

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

// The enhancement gain limit on an aligned pair's restored coefficient.
__device__ inline int gain_limited(int rst, int t, int o, int k, bool aligned,
                                   double gain_limit) {
    if (!(aligned && k > 0 && o != 0)) return rst;
    double boosted = __dmul_rn((double)rst, gain_limit);
    double tf = (double)t;
    double limited = o > 0 ? fmin(boosted, tf) : fmax(boosted, tf);
    return (int)limited;
}

// Scale 0: t / o in Q15 through the exact reciprocal trunc(2^30 / |o|).
__device__ inline int restore_fine(int o, int t, bool aligned, double gain_limit) {
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
    return (short)gain_limited(rst, t, o, k, aligned, gain_limit);
}

// Scales 1-3: the divisor reduced to its 15 most significant bits.
__device__ inline int restore_coarse(int o, int t, bool aligned, double gain_limit) {
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
    return gain_limited(rst, t, o, (int)k, aligned, gain_limit);
}

// Restored (r) and additive (a) parts of the three orientations.
__device__ inline void decouple(const short *o, const short *t, double cos_sq,
                                double gain_limit, int *r, int *a) {
    int oh = o[0], ov = o[1], th = t[0], tv = t[1];
    // Products of 16-bit values are exact in int32, their sums in double.
    double dot = (double)(oh * th) + (double)(ov * tv);
    double o_mag = (double)(oh * oh) + (double)(ov * ov);
    double t_mag = (double)(th * th) + (double)(tv * tv);
    bool aligned = within_1deg(cos_sq, (float)dot, (float)o_mag, (float)t_mag);
    for (int k = 0; k < 3; k++) {
        r[k] = restore_fine(o[k], t[k], aligned, gain_limit);
        a[k] = (short)(t[k] - r[k]);
    }
}

__device__ inline void decouple(const int *o, const int *t, double cos_sq, double gain_limit,
                                int *r, int *a) {
    u64 o0 = (u64)(i64)o[0], o1 = (u64)(i64)o[1], t0 = (u64)(i64)t[0], t1 = (u64)(i64)t[1];
    i64 dot = (i64)(o0 * t0 + o1 * t1);
    i64 o_mag = (i64)(o0 * o0 + o1 * o1);
    i64 t_mag = (i64)(t0 * t0 + t1 * t1);
    bool aligned = within_1deg(cos_sq, (float)dot, (float)o_mag, (float)t_mag);
    for (int k = 0; k < 3; k++) {
        r[k] = restore_coarse(o[k], t[k], aligned, gain_limit);
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
    typedef short C;
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
};

// Scales 1-3 fixed point: Q32 weights; the 1/15 and 1/30 filters round
// with a wrapped -2^31 (Netflix/vmaf#955).
struct Coarse {
    typedef int C;
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
};

// Position of tile offset k from a band row/column start: -1 mirrors to 1,
// n repeats n - 1 (the masking neighbourhood's edges); clamped within the
// band for tile cells outside the scored region's halo (never read).
__device__ inline int neighbour_index(int k, int n) {
    if (k < 0) k = -k;
    return k >= n ? n - 1 : k;
}

// One BX x BY tile of the scored region per block. Decouples the tile and
// its one-coefficient border, computes the masks there, then per scored
// coefficient the masked cube sums; writes each tile row's 9 sums to
// `partials[(row - top) * gridDim.x + blockIdx.x]`.
template <typename K>
__device__ void score(const typename K::C *bands, int bw, int bh, int top, int bottom, int left,
                      int right, const Weights &w, double gain_limit, double cos_sq,
                      u64 *partials) {
    typedef typename K::C C;
    __shared__ int mask_num[BY + 2][BX + 2];
    __shared__ int mask_aim[BY + 2][BX + 2];
    __shared__ int restored[3][BY][BX];
    __shared__ int additive[3][BY][BX];
    __shared__ u64 sums[SUMS][BY][BX];

    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BX + tx;
    int r0 = top + blockIdx.y * BY, c0 = left + blockIdx.x * BX;
    u64 n = (u64)bw * bh;
    const C *ref = bands, *dis = bands + 3 * n;

    for (int idx = tid; idx < (BY + 2) * (BX + 2); idx += BX * BY) {
        int y = idx / (BX + 2) - 1, x = idx % (BX + 2) - 1;
        u64 at = (u64)neighbour_index(r0 + y, bh) * bw + neighbour_index(c0 + x, bw);
        C o[3] = {ref[at], ref[n + at], ref[2 * n + at]};
        C t[3] = {dis[at], dis[n + at], dis[2 * n + at]};
        int r[3], a[3];
        decouple(o, t, cos_sq, gain_limit, r, a);
        int mn = 0, ma = 0;
        for (int k = 0; k < 3; k++) {
            mn += K::neighbour_mask(K::weighted(w, a[k], k));
            ma += K::neighbour_mask(K::weighted(w, r[k], k));
        }
        mask_num[y + 1][x + 1] = mn;
        mask_aim[y + 1][x + 1] = ma;
        if (y >= 0 && y < BY && x >= 0 && x < BX) {
            for (int k = 0; k < 3; k++) {
                restored[k][y][x] = r[k];
                additive[k][y][x] = a[k];
            }
        }
    }
    __syncthreads();

    int i = r0 + ty, j = c0 + tx;
    u64 v[SUMS];
    for (int k = 0; k < SUMS; k++) v[k] = 0;
    if (i < bottom && j < right) {
        int box_num = -mask_num[ty + 1][tx + 1], box_aim = -mask_aim[ty + 1][tx + 1];
        for (int dy = 0; dy < 3; dy++) {
            for (int dx = 0; dx < 3; dx++) {
                box_num += mask_num[ty + dy][tx + dx];
                box_aim += mask_aim[ty + dy][tx + dx];
            }
        }
        int thr_num = box_num, thr_aim = box_aim;
        for (int k = 0; k < 3; k++) {
            thr_num += K::centre_mask(K::weighted(w, additive[k][ty][tx], k));
            thr_aim += K::centre_mask(K::weighted(w, restored[k][ty][tx], k));
        }
        u64 at = (u64)i * bw + j;
        for (int k = 0; k < 3; k++) {
            v[k] = (u64)K::cube_above(w, K::contrast(w, restored[k][ty][tx], k), thr_num, k);
            v[3 + k] = (u64)K::cube_above(w, K::contrast(w, additive[k][ty][tx], k), thr_aim, k);
            v[6 + k] = K::energy(w, ref[k * n + at]);
        }
    }
    for (int k = 0; k < SUMS; k++) sums[k][ty][tx] = v[k];
    __syncthreads();
    for (int h = BX / 2; h > 0; h /= 2) {
        if (tx < h) {
            for (int k = 0; k < SUMS; k++) sums[k][ty][tx] += sums[k][ty][tx + h];
        }
        __syncthreads();
    }
    if (tx == 0 && i < bottom) {
        u64 *out = partials + ((u64)(i - top) * gridDim.x + blockIdx.x) * SUMS;
        for (int k = 0; k < SUMS; k++) out[k] = sums[k][ty][0];
    }
}

#define SCORE(name, K)                                                                        \
    extern "C" __global__ void name(const K::C *bands, int bw, int bh, int top, int bottom,   \
                                    int left, int right, i64 rf0, i64 rf1, i64 rf2, int cs0,  \
                                    int cs1, int cs2, int den_square_shift,                    \
                                    int den_cube_shift, double gain_limit, double cos_sq,      \
                                    u64 *partials) {                                           \
        Weights w = {{rf0, rf1, rf2}, {cs0, cs1, cs2}, den_square_shift, den_cube_shift};     \
        score<K>(bands, bw, bh, top, bottom, left, right, w, gain_limit, cos_sq, partials);    \
    }

SCORE(adm_score_fine, Fine)
SCORE(adm_score_coarse, Coarse)

// ---------------------------------------------------------------------
// Totals

struct FinalizeScale {
    u64 offset;  // of the scale's partials, in u64
    u32 rows, cols;
    u32 row_shift;  // of the numerators (signed sums)
    u32 den_shift;  // of the reference energy (unsigned sums)
};

struct FinalizeParams {
    FinalizeScale scale[4];
};

#define FINALIZE_THREADS 256

// One thread per row of a scale (blockIdx.y): the row's sums over its
// tiles, rounded and shifted per row like the CPU, summed into
// totals[scale * 9 + k] (cleared before the frame).
extern "C" __global__ void adm_finalize(const u64 *partials, FinalizeParams params,
                                        u64 *totals) {
    __shared__ u64 scratch[FINALIZE_THREADS];
    FinalizeScale s = params.scale[blockIdx.y];
    if (blockIdx.x * FINALIZE_THREADS >= s.rows) return;
    u32 r = blockIdx.x * FINALIZE_THREADS + threadIdx.x;
    u64 row[SUMS];
    for (int k = 0; k < SUMS; k++) row[k] = 0;
    if (r < s.rows) {
        const u64 *p = partials + s.offset + (u64)r * s.cols * SUMS;
        for (u32 c = 0; c < s.cols; c++) {
            for (int k = 0; k < SUMS; k++) row[k] += p[c * SUMS + k];
        }
        for (int k = 0; k < 6; k++) {
            row[k] = (u64)((i64)(row[k] + (u64)half(s.row_shift)) >> s.row_shift);
        }
        for (int k = 6; k < SUMS; k++) row[k] = (row[k] + (u64)half(s.den_shift)) >> s.den_shift;
    }
    for (int k = 0; k < SUMS; k++) {
        u64 total = block_sum_u64(row[k], scratch);
        if (threadIdx.x == 0) atomicAdd(totals + blockIdx.y * SUMS + k, total);
    }
}
