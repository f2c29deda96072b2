// PSNR-HVS (libvmaf 3.2.0's `psnr_hvs`, as src/feature/psnr_hvs/ reproduces
// it): one thread per overlapping 8x8 block (positions 0, 7, 14, ... of a
// plane) computes the block's masking statistics, Daala's integer DCT of
// both sides and the 64 CSF-weighted, masked squared errors with the CPU's
// float operations in the CPU's order (no fused multiply-add: every float
// operation is an _rn intrinsic), so every error term is the CPU's bit for
// bit.
//
// The CPU adds all terms of a plane, blocks in raster order and 64 terms
// per block in coefficient order, into ONE running float (`ret += t`). The
// GPU reproduces that sum exactly, in parallel:
//
// While the running sum s stays in one binade [2^e, 2^(e+1)), it lies on
// the grid of ulp u = 2^(e-23): s = m u with m in [2^23, 2^24), and
// fl(s + t) = (m + round(t / u)) u as long as the result stays below
// 2^(e+1). Round to nearest even depends on s only through the parity of m
// (on ties). So a run of terms, for an assumed binade, is a map
// {start parity p -> d_p ulps}, computed with integers (the end parity is
// (p + d_p) & 1), and maps compose associatively.
//
// 1. psnr_hvs_terms_*: one thread per 8x8 block ("chunk", numbered in
//    raster order) writes its 64 terms (groups of 32 chunks stored term by
//    term, so writes and reads are coalesced), their double sum, and each
//    CUDA block's double partial.
// 2. psnr_hvs_predict: one thread per chunk, TILE chunks per CUDA block.
//    A double prefix of the chunk sums predicts each chunk's binade; the
//    thread computes the chunk's map for it and the float increment that
//    map gives (d0 ulps). The float sum drifts from the exact sum (0.3% at
//    2160p); the prefix of these increments follows it far more closely.
// 3. psnr_hvs_maps: the same grid. The prefix of the increments predicts
//    the binades again; each chunk gets its map for that binade (and, near
//    a binade boundary, for the neighbouring one). Chunks well inside a
//    binade are "clean"; each clean chunk gets the composed map up to the
//    end of its run of clean chunks in the tile (pointer jumping), and each
//    tile whose chunks are all one clean run gets that map as its own.
// 4. psnr_hvs_walk: one CUDA block per plane. Runs of clean tiles are
//    composed again (pointer jumping); then thread 0 walks the plane with
//    the exact float s: a map applies only if s is in the map's binade and
//    s + d_p ulps stays below 2^(e+1) (all intermediate sums lie between,
//    so every step was inside the binade); otherwise it descends to the
//    tile's chunks, and a chunk whose maps do not apply (the first chunk,
//    binade crossings, wrong predictions) is added term by term with real
//    float adds. Predictions only decide speed: every applied map is
//    checked against the actual s, so the total is the CPU's bit for bit.
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

// The 64 error terms of the block at (x, y), written to out[0], out[stride],
// ..., out[63 * stride]; returns their sum in double, in term order.
template <typename T>
__device__ __forceinline__ double block_error(const T *ref, unsigned ref_pitch, const T *dis,
                                              unsigned dis_pitch, int x, int y,
                                              const PsnrHvsWeights &w, float *out,
                                              unsigned stride) {
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
        const float term = fmul(weighted, weighted);
        out[p * stride] = term;
        total += (double)term;
    }
    return total;
}

// Chunks (8x8 blocks) per group stored term by term: term p of chunk c is
// at terms[(c / GROUP) * 64 * GROUP + p * GROUP + c % GROUP].
#define GROUP 32

__device__ __forceinline__ u64 term_index(int c, int p) {
    return (u64)(c / GROUP) * (64 * GROUP) + (u64)p * GROUP + (u64)(c % GROUP);
}

// Grid (ceil(chunks / THREADS)): thread x of CUDA block b scores chunk
// c = THREADS * b + x, the 8x8 block (c % blocks_x, c / blocks_x) at
// (7 * that), writes its terms and their double sum sums[c]; the CUDA
// block writes the sum of its chunks' sums (fixed tree) to partials[b].
template <typename T>
__device__ __forceinline__ void psnr_hvs_terms(const T *ref, unsigned ref_pitch, const T *dis,
                                               unsigned dis_pitch, int blocks_x, int chunks,
                                               const PsnrHvsWeights &w, float *terms,
                                               double *sums, double *partials) {
    __shared__ double scratch[THREADS];
    const int c = (int)(blockIdx.x * THREADS + threadIdx.x);
    double sum = 0.0;
    if (c < chunks) {
        const int by = c / blocks_x, bx = c - by * blocks_x;
        sum = block_error(ref, ref_pitch, dis, dis_pitch, 7 * bx, 7 * by, w,
                          terms + term_index(c, 0), GROUP);
        sums[c] = sum;
    }
    const double total = block_sum_f64(sum, scratch);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

#define PSNR_HVS_PARAMS(T)                                                                    \
    const T *ref, unsigned ref_pitch, const T *dis, unsigned dis_pitch, int blocks_x,          \
        int chunks, PsnrHvsWeights weights, float *terms, double *sums, double *partials

extern "C" __global__ void __launch_bounds__(THREADS) psnr_hvs_terms_u8(PSNR_HVS_PARAMS(unsigned char)) {
    psnr_hvs_terms(ref, ref_pitch, dis, dis_pitch, blocks_x, chunks, weights, terms, sums, partials);
}
extern "C" __global__ void __launch_bounds__(THREADS)
    psnr_hvs_terms_u16(PSNR_HVS_PARAMS(unsigned short)) {
    psnr_hvs_terms(ref, ref_pitch, dis, dis_pitch, blocks_x, chunks, weights, terms, sums, partials);
}

// ---- The exact float running sum ----

// Chunks per tile: the CUDA block of psnr_hvs_maps and of psnr_hvs_walk.
#define TILE 256
// An increment that leaves any binade: d >= SAT never applies
// (m + d >= 2^24 for every m >= 2^23); sums saturate there.
#define SAT 0x1000000u
// A chunk is clean (composed with its neighbours) if its predicted start
// and end lie at least MARGIN (relative) inside one binade; a chunk within
// ALT of a boundary also gets a map for the binade across it. The
// prediction (psnr_hvs_predict) follows the float sum to about 1e-5 in
// practice; a larger error only costs speed (the walker descends).
#define MARGIN (1.0 / 16384.0)
#define ALT (1.0 / 64.0)
// The "binade" of a zero sum: all-zero chunks before any nonzero term
// (black borders, identical planes) keep s = 0; their maps are 0.
#define ZERO_BINADE 255u
// Chunks of a tile whose terms the walker loads with the tile's maps, in
// case it must add them one by one: the first PREFETCH chunks without a
// binade or predicted to cross one.
#define PREFETCH 16

// Which plane's buffers (the host's `MapPlane`): chunk count, the terms
// (see term_index), chunk sums and partials of psnr_hvs_terms, and the
// outputs of psnr_hvs_predict and psnr_hvs_maps: per chunk 8 words (see
// psnr_hvs_maps), per tile TILE_WORDS = 12 words (the clean run map d0, d1
// from its first chunk; whole tile one clean run | prefetched chunks << 8;
// binade; the prefetched chunks' indices in the tile, one byte each; the
// tile's predicted increment, a double; unused).
struct PsnrHvsPlane {
    const float *terms;
    double *sums;
    const double *partials;
    unsigned *chunks;
    unsigned *tiles;
    int n;
    int pad;
};
struct PsnrHvsPlanes {
    PsnrHvsPlane p[3];
};

__device__ __forceinline__ unsigned sat_add(unsigned a, unsigned b) {
    const unsigned s = a + b;
    return s < SAT ? s : SAT;
}

// Map a (d0, d1) followed by map b: start parity p ends at (p + d_p) & 1.
__device__ __forceinline__ void compose(unsigned &d0, unsigned &d1, unsigned b0, unsigned b1) {
    d0 = sat_add(d0, (d0 & 1) ? b1 : b0);
    d1 = sat_add(d1, (d1 & 1) ? b0 : b1);
}

// Adds term t (float bits tb, t >= 0) to the maps (d0, d1) of binade e
// (biased exponent 1..254 of the running sum): round(t / u), ties to even
// of the running mantissa, in ulps u = 2^(e - 150).
__device__ __forceinline__ void add_term(unsigned tb, unsigned e, unsigned &d0, unsigned &d1) {
    int te = (int)(tb >> 23);
    unsigned tm = tb & 0x7fffffu;
    if (te == 0) te = 1; else tm |= 0x800000u;
    const int sh = te - (int)e;
    unsigned q, f;
    if (sh > 0) {
        // t >= 2^(e+1) (or negative, inf, NaN): leaves the binade.
        q = SAT;
        f = 0;
    } else {
        const int k = -sh < 25 ? -sh : 25;
        q = tm >> k;
        f = k ? tm << (32 - k) : 0u;
    }
    const unsigned up = f > 0x80000000u ? 1u : 0u;
    const unsigned tie = f == 0x80000000u ? 1u : 0u;
    // Start parity of this step: (p + d_p) & 1; a tie rounds m + q up if odd.
    d0 = sat_add(d0, sat_add(q, up | (tie & ((d0 + q) & 1))));
    d1 = sat_add(d1, sat_add(q, up | (tie & ((1 + d1 + q) & 1))));
}

// `before` plus the exclusive scan of v over the CUDA block (fixed order).
__device__ __forceinline__ double tile_prefix(double before, double v, double *scratch) {
    const unsigned t = threadIdx.x;
    scratch[t] = v;
    __syncthreads();
    for (unsigned step = 1; step < TILE; step *= 2) {
        const double add = t >= step ? scratch[t - step] : 0.0;
        __syncthreads();
        scratch[t] += add;
        __syncthreads();
    }
    const double prefix = before + (t > 0 ? scratch[t - 1] : 0.0);
    __syncthreads();
    return prefix;
}

// A chunk's predicted binade (0: none), whether it is clean, whether it is
// predicted to cross into the next binade, and its alternative binade,
// from the predicted sum before it and its own (predicted) size.
struct Prediction {
    unsigned e, e_alt;
    bool clean, crossing;
};

__device__ __forceinline__ Prediction predict(bool valid, double prefix, double size) {
    Prediction pr = {0, 0, false, false};
    if (valid && prefix == 0.0 && size == 0.0) {
        pr.e = ZERO_BINADE;
        pr.clean = true;
    } else if (valid && prefix > 0.0) {
        const u64 bits = (u64)__double_as_longlong(prefix);
        const int de = (int)((bits >> 52) & 0x7ff);
        const int fe = de - 1023 + 127;
        if (de > 0 && fe >= 1 && fe <= 254) {
            pr.e = (unsigned)fe;
            const double lo = __longlong_as_double((long long)((u64)de << 52));
            const double hi = 2.0 * lo;
            const double end = prefix + size;
            // (A sum stuck exactly at 2^e, its terms below half an ulp, is
            // inside the binade.)
            pr.clean = (prefix == lo || prefix >= lo * (1.0 + MARGIN)) && end <= hi * (1.0 - MARGIN);
            pr.crossing = end >= hi;
            int alt = 0;
            if (prefix < lo * (1.0 + ALT)) alt = fe - 1;
            else if (end > hi * (1.0 - ALT)) alt = fe + 1;
            if (alt >= 1 && alt <= 254) pr.e_alt = (unsigned)alt;
        }
    }
    return pr;
}

// The map (d0, d1) of chunk c's 64 terms in binade e (ZERO_BINADE: 0,
// none: SAT).
__device__ __forceinline__ void chunk_map(const PsnrHvsPlane &P, int c, unsigned e, unsigned &d0,
                                          unsigned &d1) {
    if (e == 0) {
        d0 = d1 = SAT;
        return;
    }
    d0 = d1 = 0;
    if (e == ZERO_BINADE) return;
    const float *terms = P.terms + term_index(c, 0);
    // Most terms are zero (masked): they change nothing.
    for (int p = 0; p < 64; p++) {
        const unsigned tb = __float_as_uint(terms[p * GROUP]);
        if (tb) add_term(tb, e, d0, d1);
    }
}

// Tile words: see PsnrHvsPlane.
#define TILE_WORDS 12

// Pass 1 of the prediction. Grid (ceil(max chunks / TILE), 3): chunk
// TILE * blockIdx.x + threadIdx.x of plane blockIdx.y. The binade e from
// a double prefix of the chunk sums; the chunk's map in e; and the chunk's
// predicted float increment r = d0 ulps (where the map leaves the binade
// or there is none: the float sum of its terms from the rounded prefix),
// replacing its sum in sums[c] (the tile's sum of them in tile words 8-9):
// the float sum drifts from the exact sum by up to 0.3% at 2160p, from the
// prefix of the r by far less.
extern "C" __global__ void __launch_bounds__(TILE) psnr_hvs_predict(PsnrHvsPlanes planes) {
    __shared__ double scratch[TILE];
    const PsnrHvsPlane &P = planes.p[blockIdx.y];
    const int first = (int)blockIdx.x * TILE;
    if (first >= P.n) return;  // the whole CUDA block
    const unsigned t = threadIdx.x;
    const int c = first + (int)t;
    const bool valid = c < P.n;
    double before = 0.0;
    const int partials = first / THREADS;
    for (int i = (int)t; i < partials; i += TILE) before += P.partials[i];
    before = block_sum_f64(before, scratch);
    const double v = valid ? P.sums[c] : 0.0;
    const double prefix = tile_prefix(before, v, scratch);
    const Prediction pr = predict(valid, prefix, v);
    unsigned own0 = SAT, own1 = SAT;
    if (valid) chunk_map(P, c, pr.e, own0, own1);
    double r = v;
    if (pr.e == ZERO_BINADE) {
        r = 0.0;
    } else if (pr.e != 0 && own0 < SAT && !pr.crossing) {
        r = (double)own0 * __longlong_as_double((long long)((u64)(pr.e - 150 + 1023) << 52));
    } else if (valid) {
        // No binade (the first nonzero chunk, where the sum is exactly 0)
        // or a crossing: the float sum from the rounded prefix.
        const float start = (float)prefix;
        float sum = start;
        const float *terms = P.terms + term_index(c, 0);
        for (int p = 0; p < 64; p++) sum = fadd(sum, terms[p * GROUP]);
        r = (double)sum - (double)start;
    }
    if (valid) {
        P.sums[c] = r;
        unsigned *out = P.chunks + 8 * (u64)c;
        out[2] = own0;
        out[3] = own1;
        out[7] = pr.e;
    }
    const double total = block_sum_f64(valid ? r : 0.0, scratch);
    if (t == 0) {
        double *tile = (double *)(P.tiles + TILE_WORDS * (u64)blockIdx.x);
        tile[4] = total;
    }
}

// Pass 2 and the runs. Grid as psnr_hvs_predict. The binades again, from
// the prefix of the predicted increments; the chunk's map in that binade
// (pass 1's if the same) and, near a boundary, in the alternative binade.
// Per chunk c, chunks[8 c ..]: the map from c to the end of its clean run
// (d0, d1), the chunk's own map (d0, d1), its map in the alternative
// binade (d0, d1), the chunk after the run, and e | e_alt << 8 |
// clean << 16 (a binade of 0: none, maps SAT; ZERO_BINADE: all terms so
// far zero).
extern "C" __global__ void __launch_bounds__(TILE) psnr_hvs_maps(PsnrHvsPlanes planes) {
    __shared__ double scratch[TILE];
    __shared__ unsigned map0[TILE], map1[TILE];
    __shared__ int link[TILE], run_end[TILE], binade[TILE];
    __shared__ unsigned fetch_list[PREFETCH / 4];
    const PsnrHvsPlane &P = planes.p[blockIdx.y];
    const int first = (int)blockIdx.x * TILE;
    if (first >= P.n) return;  // the whole CUDA block
    const unsigned t = threadIdx.x;
    const int c = first + (int)t;
    const bool valid = c < P.n;

    double before = 0.0;
    for (int i = (int)t; i < (int)blockIdx.x; i += TILE)
        before += ((const double *)(P.tiles + TILE_WORDS * (u64)i))[4];
    before = block_sum_f64(before, scratch);
    const double r = valid ? P.sums[c] : 0.0;
    const double prefix = tile_prefix(before, r, scratch);
    const Prediction pr = predict(valid, prefix, r);
    const unsigned e = pr.e, e_alt = pr.e_alt;
    const bool clean = pr.clean, crossing = pr.crossing;

    // The chunk's maps.
    unsigned own0 = SAT, own1 = SAT, alt0 = SAT, alt1 = SAT;
    if (valid) {
        const unsigned *rec = P.chunks + 8 * (u64)c;
        if (rec[7] == e) {
            own0 = rec[2];
            own1 = rec[3];
        } else {
            chunk_map(P, c, e, own0, own1);
        }
        if (e_alt) chunk_map(P, c, e_alt, alt0, alt1);
    }

    // The chunks to prefetch, in order: an inclusive scan of the flags.
    const int fetch = valid && !clean && (e == 0 || crossing) ? 1 : 0;
    link[t] = fetch;
    if (t < PREFETCH / 4) fetch_list[t] = 0;
    __syncthreads();
    for (unsigned step = 1; step < TILE; step *= 2) {
        const int add = t >= step ? link[t - step] : 0;
        __syncthreads();
        link[t] += add;
        __syncthreads();
    }
    const int rank = link[t] - fetch;
    const int fetched = link[TILE - 1] < PREFETCH ? link[TILE - 1] : PREFETCH;
    if (fetch && rank < PREFETCH) atomicOr(&fetch_list[rank / 4], t << (8 * (rank % 4)));

    // Runs of clean chunks in the tile, composed by pointer jumping: after
    // round r, a chunk's map covers up to 2^r chunks of its run.
    binade[t] = clean ? (int)e : 0;
    __syncthreads();
    int next = (clean && t + 1 < TILE && binade[t + 1] == (int)e) ? (int)t + 1 : -1;
    int end = (int)t + 1;
    unsigned d0 = own0, d1 = own1;
    map0[t] = d0;
    map1[t] = d1;
    link[t] = next;
    run_end[t] = end;
    for (unsigned step = 1; step < TILE; step *= 2) {
        __syncthreads();
        unsigned b0 = 0, b1 = 0;
        int next2 = -1, end2 = end;
        if (next >= 0) {
            b0 = map0[next];
            b1 = map1[next];
            next2 = link[next];
            end2 = run_end[next];
        }
        __syncthreads();
        if (next >= 0) {
            compose(d0, d1, b0, b1);
            next = next2;
            end = end2;
            map0[t] = d0;
            map1[t] = d1;
            link[t] = next;
            run_end[t] = end;
        }
    }
    if (valid) {
        unsigned *out = P.chunks + 8 * (u64)c;
        out[0] = d0;
        out[1] = d1;
        out[2] = own0;
        out[3] = own1;
        out[4] = alt0;
        out[5] = alt1;
        out[6] = (unsigned)(first + end);
        out[7] = e | e_alt << 8 | (clean ? 1u << 16 : 0u);
    }
    if (t == 0) {
        const int chunks = P.n - first < TILE ? P.n - first : TILE;
        unsigned *out = P.tiles + TILE_WORDS * (u64)blockIdx.x;
        out[0] = d0;
        out[1] = d1;
        out[2] = (clean && end == chunks ? 1u : 0u) | (unsigned)fetched << 8;
        out[3] = e;
#pragma unroll
        for (int j = 0; j < PREFETCH / 4; j++) out[4 + j] = fetch_list[j];
    }
}

// Applies map (d0, d1) of binade e to s if s is in that binade and the
// result stays in it; false (s unchanged) otherwise.
__device__ __forceinline__ bool apply(float &s, unsigned e, unsigned d0, unsigned d1) {
    const unsigned bits = __float_as_uint(s);
    if (e == ZERO_BINADE) return bits == 0 && d0 == 0;
    if (e == 0 || (bits >> 23) != e) return false;
    const unsigned d = (bits & 1) ? d1 : d0;
    if ((bits & 0x7fffffu) + d >= 0x800000u) return false;
    s = __uint_as_float(bits + d);
    return true;
}

// Walker statistics (emulation only).
#ifdef PSNR_HVS_WALK_STATS
#define WALK_STAT(name) (walk_stats.name++)
#else
#define WALK_STAT(name) ((void)0)
#endif

// Grid (3): CUDA block q walks plane q and writes its float total (as a
// double) to out[q].
extern "C" __global__ void __launch_bounds__(TILE) psnr_hvs_walk(PsnrHvsPlanes planes, double *out) {
    __shared__ unsigned map0[TILE], map1[TILE];
    __shared__ int link[TILE], run_end[TILE], binade[TILE];
    __shared__ unsigned records[8 * TILE];
    __shared__ unsigned fetch_count[TILE], fetch_lists[TILE * (PREFETCH / 4)];
    __shared__ float fetched[PREFETCH * 64];
    __shared__ int position;
    const PsnrHvsPlane &P = planes.p[blockIdx.x];
    const unsigned t = threadIdx.x;
    const int tiles = (P.n + TILE - 1) / TILE;
    float s = 0.0f;  // thread 0's running sum
    for (int w = 0; w < tiles; w += TILE) {
        // This window of tiles: clean tiles composed with the clean tiles
        // after them (same binade) by pointer jumping.
        const int window = tiles - w < TILE ? tiles - w : TILE;
        const int k = w + (int)t;
        unsigned d0 = SAT, d1 = SAT;
        int e = 0;
        if ((int)t < window) {
            const unsigned *r = P.tiles + TILE_WORDS * (u64)k;
            d0 = r[0];
            d1 = r[1];
            e = r[2] & 1 ? (int)r[3] : 0;
            fetch_count[t] = r[2] >> 8;
#pragma unroll
            for (int j = 0; j < PREFETCH / 4; j++) fetch_lists[t * (PREFETCH / 4) + j] = r[4 + j];
        }
        binade[t] = e;
        __syncthreads();
        int next = (e && (int)t + 1 < window && binade[t + 1] == e) ? (int)t + 1 : -1;
        int end = (int)t + 1;
        map0[t] = d0;
        map1[t] = d1;
        link[t] = next;
        run_end[t] = end;
        for (unsigned step = 1; step < TILE; step *= 2) {
            __syncthreads();
            unsigned b0 = 0, b1 = 0;
            int next2 = -1, end2 = end;
            if (next >= 0) {
                b0 = map0[next];
                b1 = map1[next];
                next2 = link[next];
                end2 = run_end[next];
            }
            __syncthreads();
            if (next >= 0) {
                compose(d0, d1, b0, b1);
                next = next2;
                end = end2;
                map0[t] = d0;
                map1[t] = d1;
                link[t] = next;
                run_end[t] = end;
            }
        }
        __syncthreads();

        int i = 0;  // tile w + i
        for (;;) {
            if (t == 0) {
                while (i < window && apply(s, (unsigned)binade[i], map0[i], map1[i])) {
                    WALK_STAT(tile_runs);
                    i = run_end[i];
                }
                position = i;
            }
            __syncthreads();
            i = position;
            if (i >= window) break;
            // Tile w + i by its chunks.
            const int first = (w + i) * TILE;
            const int chunks = P.n - first < TILE ? P.n - first : TILE;
            if ((int)t < chunks) {
                const unsigned *r = P.chunks + 8 * (u64)(first + (int)t);
#pragma unroll
                for (int j = 0; j < 8; j++) records[8 * t + j] = r[j];
            }
            const unsigned *list = fetch_lists + i * (PREFETCH / 4);
            const int count = (int)fetch_count[i];
            for (int j = (int)t; j < 64 * count; j += TILE) {
                const int slot = j / 64;
                const int c = (int)((list[slot / 4] >> (8 * (slot % 4))) & 0xff);
                fetched[j] = P.terms[term_index(first + c, j % 64)];
            }
            __syncthreads();
            if (t == 0) {
                WALK_STAT(descents);
                int c = 0;
                while (c < chunks) {
                    const unsigned *r = records + 8 * c;
                    const unsigned e0 = r[7] & 0xff, e1 = (r[7] >> 8) & 0xff;
                    const int run = (int)r[6] - first;
                    if (apply(s, e0, r[0], r[1])) {
                        WALK_STAT(chunk_runs);
                        c = run;
                    } else if (run > c + 1 && apply(s, e0, r[2], r[3])) {
                        WALK_STAT(chunk_own);
                        c++;
                    } else if (apply(s, e1, r[4], r[5])) {
                        WALK_STAT(chunk_alt);
                        c++;
                    } else {
                        // Term by term, as the CPU: prefetched, or from
                        // device memory.
                        int slot = 0;
                        while (slot < count &&
                               (int)((list[slot / 4] >> (8 * (slot % 4))) & 0xff) != c)
                            slot++;
                        if (slot < count) {
                            WALK_STAT(chunk_terms_fetched);
                            const float *v = fetched + 64 * slot;
#pragma unroll
                            for (int p = 0; p < 64; p++) s = fadd(s, v[p]);
                        } else {
                            WALK_STAT(chunk_terms);
                            const float *terms = P.terms + term_index(first + c, 0);
                            float v[64];
#pragma unroll
                            for (int p = 0; p < 64; p++) v[p] = terms[p * GROUP];
#pragma unroll
                            for (int p = 0; p < 64; p++) s = fadd(s, v[p]);
                        }
                        c++;
                    }
                }
            }
            __syncthreads();
            i++;
        }
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = (double)s;
}
