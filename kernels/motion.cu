// The integer `motion` SAD: sum of |blur(prev - cur)| with libvmaf 3.2.0's
// separable 5-tap filter (vertical pass rounded and shifted by the bit
// depth, then horizontal pass rounded and shifted by 16), reflect-101
// edges, and a wrapping 32-bit sum per row. Integer arithmetic only.
//
// Two launches. `motion_sad_*`: a block scores a tile of ROWS rows by
// THREADS columns: it loads the tile's differences with their mirrored
// 2-pixel halo into shared memory (all loads issued before any store, so
// their latencies overlap), runs the vertical pass there (in 32 bits up to
// 15-bit input, as the CPU does), splits each vertical value y into
// 256 * hi + lo so the horizontal pass fits 32 bits too (the CPU's
// `horizontal_tap`), and adds each row's sum of |v| to that row's 32-bit
// total with a wrapping atomic add: the row totals are libvmaf's wrapping
// per-row sums whatever the order. `motion_rows_total` adds the rows'
// totals into the frame's 64-bit SAD. No intermediate plane in device
// memory; enough blocks to hide memory latency.

#include "common.cuh"

#define THREADS 256
#define HALO 2
#define SPAN (THREADS + 2 * HALO)

__constant__ int FILTER[5] = {3571, 16004, 26386, 16004, 3571};

__device__ inline int mirror(int i, int size) {
    if (i < 0) return -i;
    if (i >= size) return 2 * size - i - 2;
    return i;
}

#define ROWS 8
#define LOADS (((ROWS + 2 * HALO) * SPAN + THREADS - 1) / THREADS)

template <typename T, typename Acc>
__device__ void motion_sad(const T *prev, unsigned prev_pitch, const T *cur, unsigned cur_pitch,
                           unsigned width, unsigned height, unsigned bit_depth,
                           unsigned *row_sums) {
    __shared__ int diff[ROWS + 2 * HALO][SPAN];
    __shared__ int hi[ROWS][SPAN];
    __shared__ int lo[ROWS][SPAN];
    const int w = (int)width, h = (int)height;
    const int x0 = blockIdx.x * THREADS, y0 = blockIdx.y * ROWS;
    const int rows = h - y0 < ROWS ? h - y0 : ROWS;
    const Acc round = (Acc)1 << (bit_depth - 1);
    int loaded[LOADS];
#pragma unroll
    for (int n = 0; n < LOADS; n++) {
        const int i = threadIdx.x + n * THREADS;
        const int r = i / SPAN, j = i % SPAN;
        const int px = x0 + j - HALO, py = y0 + r - HALO;
        loaded[n] = 0;
        if (i < (ROWS + 2 * HALO) * SPAN && px <= w + 1 && r < rows + 2 * HALO) {
            const int mx = mirror(px, w), my = mirror(py, h);
            const T *p = (const T *)((const char *)prev + (u64)my * prev_pitch);
            const T *c = (const T *)((const char *)cur + (u64)my * cur_pitch);
            loaded[n] = (int)__ldg(p + mx) - (int)__ldg(c + mx);
        }
    }
#pragma unroll
    for (int n = 0; n < LOADS; n++) {
        const int i = threadIdx.x + n * THREADS;
        if (i < (ROWS + 2 * HALO) * SPAN) diff[i / SPAN][i % SPAN] = loaded[n];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < ROWS * SPAN; i += THREADS) {
        const int r = i / SPAN, j = i % SPAN;
        if (r >= rows || x0 + j - HALO > w + 1) continue;
        const Acc outer = (Acc)(diff[r][j] + diff[r + 4][j]);
        const Acc inner = (Acc)(diff[r + 1][j] + diff[r + 3][j]);
        const Acc acc = (Acc)FILTER[0] * outer + (Acc)FILTER[1] * inner +
                        (Acc)FILTER[2] * (Acc)diff[r + 2][j];
        const int y = (int)((acc + round) >> bit_depth);
        hi[r][j] = y >> 8;
        lo[r][j] = y & 0xff;
    }
    __syncthreads();
    // |v| of each row into `diff` (free now), then the rows' sums by a
    // tree over the columns (all rows at once).
    unsigned (*sums)[SPAN] = (unsigned (*)[SPAN])diff;
    const int j = threadIdx.x;
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        unsigned v_abs = 0;
        if (r < rows && x0 + j < w) {
            const int a = FILTER[0] * (hi[r][j] + hi[r][j + 4]) +
                          FILTER[1] * (hi[r][j + 1] + hi[r][j + 3]) + FILTER[2] * hi[r][j + 2];
            const int b = FILTER[0] * (lo[r][j] + lo[r][j + 4]) +
                          FILTER[1] * (lo[r][j + 1] + lo[r][j + 3]) + FILTER[2] * lo[r][j + 2];
            const int v = (a + ((b + (1 << 15)) >> 8)) >> 8;
            v_abs = (unsigned)(v < 0 ? -v : v);
        }
        sums[r][j] = v_abs;
    }
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half /= 2) {
        for (int i = threadIdx.x; i < ROWS * half; i += THREADS) {
            const int r = i / half, k = i % half;
            sums[r][k] += sums[r][k + half];
        }
        __syncthreads();
    }
    if (threadIdx.x < rows) atomicAdd(row_sums + y0 + threadIdx.x, sums[threadIdx.x][0]);
}

extern "C" __global__ void motion_sad_u8(const unsigned char *prev, unsigned prev_pitch,
                                         const unsigned char *cur, unsigned cur_pitch,
                                         unsigned width, unsigned height, unsigned bit_depth,
                                         unsigned *row_sums) {
    motion_sad<unsigned char, int>(prev, prev_pitch, cur, cur_pitch, width, height, bit_depth,
                                   row_sums);
}

// Up to 15 bits: |vertical sum| <= 2^16 * (2^15 - 1) fits 32 bits.
extern "C" __global__ void motion_sad_u16(const unsigned short *prev, unsigned prev_pitch,
                                          const unsigned short *cur, unsigned cur_pitch,
                                          unsigned width, unsigned height, unsigned bit_depth,
                                          unsigned *row_sums) {
    motion_sad<unsigned short, int>(prev, prev_pitch, cur, cur_pitch, width, height, bit_depth,
                                    row_sums);
}

// 16 bits: the vertical sum in 64 bits.
extern "C" __global__ void motion_sad_u16_wide(const unsigned short *prev, unsigned prev_pitch,
                                               const unsigned short *cur, unsigned cur_pitch,
                                               unsigned width, unsigned height,
                                               unsigned bit_depth, unsigned *row_sums) {
    motion_sad<unsigned short, i64>(prev, prev_pitch, cur, cur_pitch, width, height, bit_depth,
                                    row_sums);
}

// The frame's SAD: the rows' wrapping 32-bit totals added in 64 bits. One
// block.
extern "C" __global__ void motion_rows_total(const unsigned *row_sums, unsigned height,
                                             u64 *total) {
    __shared__ u64 scratch[THREADS];
    u64 acc = 0;
    for (unsigned y = threadIdx.x; y < height; y += blockDim.x) acc += row_sums[y];
    const u64 sum = block_sum_u64(acc, scratch);
    if (threadIdx.x == 0) *total = sum;
}
