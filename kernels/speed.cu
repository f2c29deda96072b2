// SpEED (libvmaf 3.2.0's `speed_chroma` and `speed_temporal`, as
// src/feature/speed reproduces them), on up to four planes at once: the Cb
// and Cr planes of reference and distorted, or the two luma differences
// (previous frame minus this one) of reference and distorted.
//
// Two launches per frame:
// * speed_decimate_*: one thread per sample of the plane decimated by 16:
//   the samples converted to float (offset -128; for speed_temporal the
//   difference of two frames), optionally prescaled (nearest, bilinear,
//   bicubic or Lanczos-4, from the host's per-axis tables, which are the
//   CPU's own positions and weights), and the anti-alias filter at that
//   sample (vertical pass, then horizontal, edges mirrored), exactly the
//   sample the CPU's filter_decimate16 keeps.
// * speed_estimate: one block per plane, every step of the CPU's Estimator
//   (estimate.rs, linalg.rs) in its order and precision: the local mean
//   (the scale-4 low-pass) removed, the 25 block-offset means (float sums
//   in row order), the 25x25 covariance (double sums in row order, one
//   thread per entry), its eigenvalues (Householder tridiagonalisation and
//   implicit QR steps), the Householder QR solve of K X = block samples,
//   and per 5x5 block the variance estimate and the entropy. The block
//   entropies and variances and whether K was regular go back to the host,
//   which scores them with the CPU's speed_score.
//
// Exactness: every float and double operation goes through an _rn
// intrinsic (no fused multiply-add), each sum runs in one thread in the
// CPU's order, so every value is the CPU's bit for bit, except that the
// entropies use CUDA's log2 (within 1 ulp of glibc's; the double result is
// rounded to float). There are no atomics: the same bits on every run.

#include "common.cuh"
#include "float_common.cuh"

#define DECIMATE_THREADS 128
#define ESTIMATE_THREADS 512
// Block side, samples per block (the covariance matrix's order) and the
// covariance entries on and below its diagonal.
#define BLK 5
#define NN 25
#define PAIRS (NN * (NN + 1) / 2)
// Pivots and eigenvalues below this are treated as zero (linalg.rs EPS).
#define SPEED_EPS 1e-6
#define MAX_QR_ITERATIONS 500
// log2(2 pi e), as estimate.rs LOG2_2PIE.
#define LOG2_2PIE 4.094191170361282

// Prescaling methods (RESAMPLE_NONE: the plane read as it is, zero beyond
// its size, as the CPU's zeroed frame buffers).
#define RESAMPLE_NONE 0
#define RESAMPLE_NEAREST 1
#define RESAMPLE_BILINEAR 2
#define RESAMPLE_BICUBIC 3
#define RESAMPLE_LANCZOS4 4

__device__ __forceinline__ float fdiv(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double add_d(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double sub_d(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double mul_d(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double div_d(double a, double b) { return __ddiv_rn(a, b); }

// Everything about one extractor's planes (crate::gpu::feature::speed
// `Geometry`): pointers first, 32-bit values after.
struct SpeedGeometry {
    const float *antialias;   // antialias_taps
    const float *lowpass;     // lowpass_taps
    const int *col_index;     // scaled_w * col_taps source columns
    const float *col_weight;  // their weights
    const int *row_index;     // scaled_h * row_taps source rows
    const float *row_weight;
    int src_w, src_h;        // the plane as extracted
    int scaled_w, scaled_h;  // after prescaling
    int op_w, op_h;          // after decimating by 16
    int trunc_w, trunc_h;    // cut to whole blocks
    int blocks_h, blocks_v;  // blocks across and down
    int antialias_taps, lowpass_taps;
    int method;
    int col_taps, row_taps;
    float sample_scale;  // 1 / libvmaf's divisor
    float sigma_nn;
    int pad;
};

// Plane p's samples: picture `a`, minus picture `b` when `difference`.
struct PlaneSource {
    u64 a, b;
    unsigned pitch_a, pitch_b;
};

struct Sources {
    PlaneSource p[4];
    int difference;
    int pad;
};

// The sample of the original plane at (x, y), converted as the CPU's
// picture_copy (and, for speed_temporal, previous minus current).
template <typename T>
__device__ __forceinline__ float plane_sample(const PlaneSource &s, int difference, float scale,
                                              int x, int y) {
    const T *ra = (const T *)((const char *)s.a + (u64)y * s.pitch_a);
    float v = to_float(ra[x], scale, -128.0f);
    if (difference) {
        const T *rb = (const T *)((const char *)s.b + (u64)y * s.pitch_b);
        v = fsub(v, to_float(rb[x], scale, -128.0f));
    }
    return v;
}

// The prescaled plane's sample at (x, y) (resample.rs Resampler::scale,
// through the tables of AxisTaps).
template <typename T>
__device__ float scaled_sample(const SpeedGeometry &g, const PlaneSource &s, int difference, int x,
                               int y) {
    if (g.method == RESAMPLE_NONE) {
        // Unscaled, or within 1e-3 of 1: the frame buffer as the CPU
        // reads it, zero beyond the plane.
        if (x >= g.src_w || y >= g.src_h) return 0.0f;
        return plane_sample<T>(s, difference, g.sample_scale, x, y);
    }
    const int *cx = g.col_index + x * g.col_taps;
    const int *ry = g.row_index + y * g.row_taps;
    const float *wx = g.col_weight + x * g.col_taps;
    const float *wy = g.row_weight + y * g.row_taps;
    const float sc = g.sample_scale;
    if (g.method == RESAMPLE_NEAREST) return plane_sample<T>(s, difference, sc, cx[0], ry[0]);
    if (g.method == RESAMPLE_BILINEAR) {
        const float dx = wx[0], dy = wy[0];
        const float a11 = plane_sample<T>(s, difference, sc, cx[0], ry[0]);
        const float a12 = plane_sample<T>(s, difference, sc, cx[1], ry[0]);
        const float a21 = plane_sample<T>(s, difference, sc, cx[0], ry[1]);
        const float a22 = plane_sample<T>(s, difference, sc, cx[1], ry[1]);
        const float t1 = fmul(fmul(fsub(1.0f, dy), fsub(1.0f, dx)), a11);
        const float t2 = fmul(fmul(fsub(1.0f, dy), dx), a12);
        const float t3 = fmul(fmul(dy, fsub(1.0f, dx)), a21);
        const float t4 = fmul(fmul(dy, dx), a22);
        return fadd(fadd(fadd(t1, t2), t3), t4);
    }
    if (g.method == RESAMPLE_BICUBIC) {
        float value = 0.0f;
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < 4; i++)
                value = fadd(value, fmul(plane_sample<T>(s, difference, sc, cx[i], ry[j]),
                                         fmul(wx[i], wy[j])));
        return value;
    }
    // Lanczos-4.
    float value = 0.0f, weight_sum = 0.0f;
    for (int j = 0; j < 9; j++)
        for (int i = 0; i < 9; i++) {
            const float weight = fmul(wx[i], wy[j]);
            weight_sum = fadd(weight_sum, weight);
            value = fadd(value, fmul(plane_sample<T>(s, difference, sc, cx[i], ry[j]), weight));
        }
    return fdiv(value, weight_sum);
}

// decimated[plane][y][x] = the anti-aliased prescaled plane at (16x, 16y)
// (convolve.rs filter_decimate16: the vertical pass, taps added from 0 in
// filter order, then the horizontal pass over the vertical results).
template <typename T>
__device__ __forceinline__ void decimate(const SpeedGeometry &g, const Sources &sources,
                                         float *decimated) {
    const int plane = blockIdx.y;
    const int i = blockIdx.x * DECIMATE_THREADS + threadIdx.x;
    if (i >= g.op_w * g.op_h) return;
    const int x = i % g.op_w, y = i / g.op_w;
    const PlaneSource s = sources.p[plane];
    const int taps = g.antialias_taps, radius = taps / 2;
    float acc = 0.0f;
    for (int kx = 0; kx < taps; kx++) {
        const int col = mirror_index(16 * x - radius + kx, g.scaled_w);
        float vertical = 0.0f;
        for (int ky = 0; ky < taps; ky++) {
            const int row = mirror_index(16 * y - radius + ky, g.scaled_h);
            vertical = fadd(vertical, fmul(g.antialias[ky],
                                           scaled_sample<T>(g, s, sources.difference, col, row)));
        }
        acc = fadd(acc, fmul(g.antialias[kx], vertical));
    }
    decimated[(u64)plane * g.op_w * g.op_h + i] = acc;
}

extern "C" __global__ void __launch_bounds__(DECIMATE_THREADS)
    speed_decimate_u8(SpeedGeometry g, Sources sources, float *decimated) {
    decimate<unsigned char>(g, sources, decimated);
}
extern "C" __global__ void __launch_bounds__(DECIMATE_THREADS)
    speed_decimate_u16(SpeedGeometry g, Sources sources, float *decimated) {
    decimate<unsigned short>(g, sources, decimated);
}

// ---- linalg.rs, in float with its order of operations ----

// C's sqrt on a float stored back to float.
__device__ __forceinline__ float sqrt_f(float x) { return (float)__dsqrt_rn((double)x); }
__device__ __forceinline__ float sign_f(float x) { return x >= 0.0f ? 1.0f : -1.0f; }
__device__ __forceinline__ float hypot_f(float x, float y) {
    return sqrt_f(fadd(fmul(x, x), fmul(y, y)));
}

// householder_column: the Householder vector zeroing column `col` below
// `start`, stored in place; returns tau.
__device__ float householder_column(float *a, int col, int start) {
    if (NN - start == 1) return 0.0f;
    float norm_sq = 0.0f;
    for (int r = start + 1; r < NN; r++)
        norm_sq = fadd(norm_sq, fmul(a[r * NN + col], a[r * NN + col]));
    const float xnorm = sqrt_f(norm_sq);
    if (xnorm == 0.0f) return 0.0f;
    const float alpha = a[start * NN + col];
    const float beta = fmul(-sign_f(alpha), hypot_f(alpha, xnorm));
    const float tau = fdiv(fsub(beta, alpha), beta);
    const float s = fsub(alpha, beta);
    if (s != 0.0f) {
        for (int r = start; r < NN; r++) a[r * NN + col] = fdiv(a[r * NN + col], s);
        a[start * NN + col] = beta;
    }
    return tau;
}

// chop_small_elements over d[0..n], sd[0..n-1].
__device__ void chop_small_elements(const float *d, float *sd, int n) {
    for (int i = 0; i < n - 1; i++)
        if ((double)fabsf(sd[i]) < mul_d(SPEED_EPS, (double)fadd(fabsf(d[i]), fabsf(d[i + 1]))))
            sd[i] = 0.0f;
}

__device__ float trailing_eigenvalue(const float *d, const float *sd, int n) {
    const float ta = d[n - 2], tb = d[n - 1], tab = sd[n - 2];
    const float dt = (float)div_d((double)fsub(ta, tb), 2.0);
    if (dt > 0.0f) return fsub(tb, fmul(tab, fdiv(tab, fadd(dt, hypot_f(dt, tab)))));
    if (dt == 0.0f) return fsub(tb, fabsf(tab));
    return fadd(tb, fmul(tab, fdiv(tab, fadd(-dt, hypot_f(dt, tab)))));
}

__device__ __forceinline__ float inverse_norm(float t) {
    return (float)div_d(1.0, __dsqrt_rn((double)fadd(1.0f, fmul(t, t))));
}

__device__ void givens(float a, float b, float *c, float *s) {
    if (b == 0.0f) {
        *c = 1.0f;
        *s = 0.0f;
    } else if (fabsf(b) > fabsf(a)) {
        const float t = fdiv(-a, b);
        const float s1 = inverse_norm(t);
        *c = fmul(s1, t);
        *s = s1;
    } else {
        const float t = fdiv(-b, a);
        const float c1 = inverse_norm(t);
        *c = c1;
        *s = fmul(c1, t);
    }
}

// One implicit QR step on the unreduced block d[0..n], sd[0..n-1] (qr_step).
__device__ void qr_step(float *d, float *sd, int n) {
    float mu = trailing_eigenvalue(d, sd, n);
    if (mul_d(SPEED_EPS, (double)fabsf(mu)) > (double)fadd(fabsf(d[0]), fabsf(sd[0]))) mu = 0.0f;
    float x = fsub(d[0], mu);
    float z = sd[0];
    float ap = d[0], bp = sd[0], aq = d[1];
    float c, s;
    if (n == 2) {
        givens(x, z, &c, &s);
        const float ap1 = fadd(fmul(c, fsub(fmul(c, ap), fmul(s, bp))),
                               fmul(s, fsub(fmul(s, aq), fmul(c, bp))));
        const float bp1 = fsub(fmul(c, fadd(fmul(s, ap), fmul(c, bp))),
                               fmul(s, fadd(fmul(s, bp), fmul(c, aq))));
        const float aq1 = fadd(fmul(s, fadd(fmul(s, ap), fmul(c, bp))),
                               fmul(c, fadd(fmul(s, bp), fmul(c, aq))));
        d[0] = ap1;
        sd[0] = bp1;
        d[1] = aq1;
        return;
    }
    float bq = sd[1];
    float bk = 0.0f, zk = 0.0f;
    for (int k = 0; k < n - 1; k++) {
        givens(x, z, &c, &s);
        const float bk1 = fsub(fmul(c, bk), fmul(s, zk));
        const float ap1 = fadd(fmul(c, fsub(fmul(c, ap), fmul(s, bp))),
                               fmul(s, fsub(fmul(s, aq), fmul(c, bp))));
        const float bp1 = fsub(fmul(c, fadd(fmul(s, ap), fmul(c, bp))),
                               fmul(s, fadd(fmul(s, bp), fmul(c, aq))));
        const float zp1 = fmul(-s, bq);
        const float aq1 = fadd(fmul(s, fadd(fmul(s, ap), fmul(c, bp))),
                               fmul(c, fadd(fmul(s, bp), fmul(c, aq))));
        const float bq1 = fmul(c, bq);
        bk = bp1;
        zk = zp1;
        ap = aq1;
        bp = bq1;
        if (k < n - 2) aq = d[k + 2];
        if (k < n - 3) bq = sd[k + 2];
        d[k] = ap1;
        if (k > 0) sd[k - 1] = bk1;
        if (k < n - 2) sd[k + 1] = bp;
        x = bk;
        z = zk;
    }
    d[n - 1] = ap;
    sd[n - 2] = bk;
}

// Implicit QR iterations until sd is zero, at most 500 (diagonalize).
__device__ void diagonalize(float *d, float *sd) {
    chop_small_elements(d, sd, NN);
    int b = NN - 1;
    int iterations = 0;
    while (b > 0 && iterations < MAX_QR_ITERATIONS) {
        if (sd[b - 1] == 0.0f) {
            b--;
            continue;
        }
        int a = b - 1;
        while (a > 0 && sd[a - 1] != 0.0f) a--;
        qr_step(d + a, sd + a, b - a + 1);
        chop_small_elements(d + a, sd + a, b - a + 1);
        iterations++;
    }
}

// vector_norm: sqrt of the float sum of squares in order.
__device__ float vector_norm(const float *v) {
    float acc = 0.0f;
    for (int i = 0; i < NN; i++) acc = fadd(acc, fmul(v[i], v[i]));
    return sqrt_f(acc);
}

// dst = x y for 25 x 25 matrices, each element summed over the inner index
// from 0 in order (mat_mul); every thread of the block takes part.
__device__ void mat_mul_25(float *dst, const float *x, const float *y) {
    for (int e = threadIdx.x; e < NN * NN; e += ESTIMATE_THREADS) {
        const int i = e / NN, j = e % NN;
        float acc = 0.0f;
        for (int k = 0; k < NN; k++) acc = fadd(acc, fmul(x[i * NN + k], y[k * NN + j]));
        dst[e] = acc;
    }
    __syncthreads();
}

// out[plane] = block entropies, block variances, then 1 where K was
// regular and the solve succeeded (the Estimator's `true`), else 0.
extern "C" __global__ void __launch_bounds__(ESTIMATE_THREADS)
    speed_estimate(SpeedGeometry g, float *decimated, float *vertical, float *samples,
                   float *solution, float *out) {
    __shared__ float cov[NN * NN];  // K
    __shared__ float a[NN * NN];    // tridiagonalised in place, then R
    __shared__ float z[NN * NN];
    __shared__ float q[NN * NN];
    __shared__ float h[NN * NN];
    __shared__ float product[NN * NN];
    __shared__ float v[NN], x[NN], diag[NN], subdiag[NN], means[NN];
    __shared__ float shared_tau, shared_alpha;
    __shared__ int shared_solved;

    const int t = threadIdx.x;
    const int plane = blockIdx.x;
    const int w = g.op_w, ht = g.op_h, area = w * ht;
    const int blocks = g.blocks_h * g.blocks_v;
    float *dec = decimated + (u64)plane * area;
    float *vert = vertical + (u64)plane * area;
    float *smp = samples + (u64)plane * NN * blocks;
    float *sol = solution + (u64)plane * NN * blocks;
    float *result = out + (u64)plane * (2 * blocks + 1);

    // The local mean (core.rs: convolve::filter with the scale-4 low-pass)
    // removed from the decimated plane.
    const int lr = g.lowpass_taps / 2;
    for (int i = t; i < area; i += ESTIMATE_THREADS) {
        const int yy = i / w, xx = i % w;
        float acc = 0.0f;
        for (int k = 0; k < g.lowpass_taps; k++)
            acc = fadd(acc, fmul(g.lowpass[k], dec[mirror_index(yy - lr + k, ht) * w + xx]));
        vert[i] = acc;
    }
    __syncthreads();
    for (int i = t; i < area; i += ESTIMATE_THREADS) {
        const int yy = i / w, xx = i % w;
        float acc = 0.0f;
        for (int k = 0; k < g.lowpass_taps; k++)
            acc = fadd(acc, fmul(g.lowpass[k], vert[yy * w + mirror_index(xx - lr + k, w)]));
        dec[i] = fsub(dec[i], acc);
    }
    __syncthreads();

    // Means of the common window at the 25 block offsets: float sums in
    // row order (Estimator::covariance_matrix).
    const int sw = g.trunc_w - BLK + 1, sh = g.trunc_h - BLK + 1;
    const int count = sw * sh;
    if (t < NN) {
        const int r = t / BLK, c = t % BLK;
        float sum = 0.0f;
        for (int i = 0; i < sh; i++) {
            const float *row = dec + (r + i) * w + c;
            for (int j = 0; j < sw; j++) sum = fadd(sum, row[j]);
        }
        means[t] = fdiv(sum, (float)count);
    }
    __syncthreads();

    // K: entry (xi, yi), yi <= xi, the double sum over the window of the
    // products of the two offsets' deviations, in row order.
    for (int p = t; p < PAIRS; p += ESTIMATE_THREADS) {
        int xi = 0;
        while ((xi + 1) * (xi + 2) / 2 <= p) xi++;
        const int yi = p - xi * (xi + 1) / 2;
        const int r1 = xi / BLK, c1 = xi % BLK, r2 = yi / BLK, c2 = yi % BLK;
        const double mx = (double)means[xi], my = (double)means[yi];
        double sum = 0.0;
        for (int i = 0; i < sh; i++) {
            const float *xs = dec + (r1 + i) * w + c1;
            const float *ys = dec + (r2 + i) * w + c2;
            for (int j = 0; j < sw; j++)
                sum = add_d(sum, mul_d(sub_d((double)xs[j], mx), sub_d((double)ys[j], my)));
        }
        const float value = (float)div_d(sum, (double)count);
        cov[xi * NN + yi] = value;
        cov[yi * NN + xi] = value;
    }
    __syncthreads();

    // Eigenvalues of K (EigenSolver): Householder tridiagonalisation...
    for (int e = t; e < NN * NN; e += ESTIMATE_THREADS) a[e] = cov[e];
    __syncthreads();
    for (int i = 0; i < NN - 2; i++) {
        if (t == 0) shared_tau = householder_column(a, i, i + 1);
        __syncthreads();
        const float tau = shared_tau;
        const int s = i + 1;
        if (t > i && t < NN) v[t] = (t == s && tau != 0.0f) ? 1.0f : a[t * NN + i];
        __syncthreads();
        if (tau != 0.0f) {
            // x = tau A v
            if (t >= s && t < NN) {
                float acc = 0.0f;
                for (int c = s; c < NN; c++) acc = fadd(acc, fmul(fmul(tau, a[t * NN + c]), v[c]));
                x[t] = acc;
            }
            __syncthreads();
            // x -= (tau / 2) (x . v) v
            if (t == 0) {
                float xv = 0.0f;
                for (int r = s; r < NN; r++) xv = fadd(xv, fmul(x[r], v[r]));
                shared_alpha = (float)mul_d(mul_d(-0.5, (double)tau), (double)xv);
            }
            __syncthreads();
            if (t >= s && t < NN) x[t] = fadd(x[t], fmul(shared_alpha, v[t]));
            __syncthreads();
            // A -= x v' + v x'
            for (int e = t; e < NN * NN; e += ESTIMATE_THREADS) {
                const int r = e / NN, c = e % NN;
                if (r >= s && c >= s) a[e] = fsub(a[e], fadd(fmul(x[r], v[c]), fmul(v[r], x[c])));
            }
            __syncthreads();
        }
    }
    // ... and implicit QR steps on the tridiagonal matrix.
    if (t == 0) {
        for (int i = 0; i < NN; i++) diag[i] = a[i * NN + i];
        for (int i = 0; i < NN - 1; i++) subdiag[i] = a[(i + 1) * NN + i];
        diagonalize(diag, subdiag);
        int regular = 1;
        for (int i = 0; i < NN; i++)
            if ((double)diag[i] < SPEED_EPS) regular = 0;
        shared_solved = regular;
    }
    // Block samples: row k = si * 5 + sj holds sample (si, sj) of every
    // block (gather_block_samples).
    for (int e = t; e < NN * blocks; e += ESTIMATE_THREADS) {
        const int k = e / blocks, b = e % blocks;
        const int bi = b / g.blocks_h, bj = b % g.blocks_h;
        smp[e] = dec[(k / BLK + BLK * bi) * w + k % BLK + BLK * bj];
    }
    __syncthreads();

    // K X = samples by libvmaf's Householder QR (QrSolver), if K is
    // regular.
    const int regular = shared_solved;
    if (regular) {
        for (int e = t; e < NN * NN; e += ESTIMATE_THREADS) {
            z[e] = cov[e];
            q[e] = (e / NN == e % NN) ? 1.0f : 0.0f;
        }
        __syncthreads();
        for (int k = 0; k < NN - 1; k++) {
            // Restrict z to its trailing minor.
            for (int e = t; e < NN * NN; e += ESTIMATE_THREADS) {
                const int i = e / NN, j = e % NN;
                if (i < k || j < k) z[e] = (i == j) ? 1.0f : 0.0f;
            }
            __syncthreads();
            if (t == 0) {
                for (int i = 0; i < NN; i++) v[i] = z[i * NN + k];
                const float norm = vector_norm(v);
                // The sign from K's diagonal, not z's (as libvmaf).
                v[k] = fadd(v[k], fmul(sign_f(cov[k * NN + k]), norm));
                const float norm2 = vector_norm(v);
                for (int i = 0; i < NN; i++) v[i] = fdiv(v[i], norm2);
            }
            __syncthreads();
            // H = I - 2 v v'
            for (int e = t; e < NN * NN; e += ESTIMATE_THREADS) {
                const int i = e / NN, j = e % NN;
                const float r = fmul(fmul(-2.0f, v[i]), v[j]);
                h[e] = (i == j) ? fadd(r, 1.0f) : r;
            }
            __syncthreads();
            mat_mul_25(product, h, z);
            for (int e = t; e < NN * NN; e += ESTIMATE_THREADS) z[e] = product[e];
            __syncthreads();
            mat_mul_25(product, h, q);
            for (int e = t; e < NN * NN; e += ESTIMATE_THREADS) q[e] = product[e];
            __syncthreads();
        }
        mat_mul_25(a, q, cov);  // R
        if (t == 0) {
            for (int i = 0; i < NN; i++)
                if ((double)fabsf(a[i * NN + i]) < SPEED_EPS) shared_solved = 0;
        }
        // Q' samples, then back substitution per block from the last row.
        for (int e = t; e < NN * blocks; e += ESTIMATE_THREADS) {
            const int i = e / blocks, b = e % blocks;
            float acc = 0.0f;
            for (int k = 0; k < NN; k++) acc = fadd(acc, fmul(q[i * NN + k], smp[k * blocks + b]));
            sol[e] = acc;
        }
        __syncthreads();
        if (shared_solved) {
            for (int b = t; b < blocks; b += ESTIMATE_THREADS) {
                for (int i = NN - 1; i >= 0; i--) {
                    float acc = sol[i * blocks + b];
                    for (int k = i + 1; k < NN; k++)
                        acc = fsub(acc, fmul(sol[k * blocks + b], a[i * NN + k]));
                    sol[i * blocks + b] = fdiv(acc, a[i * NN + i]);
                }
            }
        }
    }
    const int solved = shared_solved;
    if (!solved)
        for (int e = t; e < NN * blocks; e += ESTIMATE_THREADS) sol[e] = 0.0f;
    __syncthreads();

    // Per block: s = sum_k x_k (K^-1 x)_k / 25, then the entropy
    // sum_k log2(lambda_k s + sigma_nn) + log2(2 pi e) over the eigenvalues.
    for (int b = t; b < blocks; b += ESTIMATE_THREADS) {
        float variance = 0.0f;
        for (int k = 0; k < NN; k++) {
            const float term = fdiv(fmul(sol[k * blocks + b], smp[k * blocks + b]), (float)NN);
            variance = k == 0 ? term : fadd(variance, term);
        }
        float entropy = 0.0f;
        for (int k = 0; k < NN; k++) {
            const float l = diag[k] < 0.0f ? 0.0f : diag[k];
            const double term = add_d(log2((double)fadd(fmul(l, variance), g.sigma_nn)), LOG2_2PIE);
            entropy = (float)add_d((double)entropy, term);
        }
        result[b] = entropy;
        result[blocks + b] = variance;
    }
    if (t == 0) result[2 * blocks] = solved ? 1.0f : 0.0f;
}
