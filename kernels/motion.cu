// The integer `motion` SAD: sum of |blur(prev - cur)| with libvmaf 3.2.0's
// separable 5-tap filter (vertical pass rounded and shifted by the bit
// depth, then horizontal pass rounded and shifted by 16), reflect-101
// edges, and a wrapping 32-bit sum per row. Integer arithmetic only.
//
// One fused kernel: a block scores a strip of ROWS rows, a chunk of THREADS
// columns at a time. It loads the chunk's differences with their mirrored
// 2-pixel halo into shared memory, runs the vertical pass there (in 32 bits
// up to 15-bit input, as the CPU does), splits each vertical value y into
// 256 * hi + lo so the horizontal pass fits 32 bits too (the CPU's
// `horizontal_tap`), and keeps one wrapping 32-bit sum per row and thread.
// A row's sum modulo 2^32 is the wrapping sum of the threads' sums, so the
// block adds its rows' sums to the 64-bit total: one launch, no
// intermediate plane in device memory.

#include "common.cuh"

#define THREADS 256
#define ROWS 4
#define HALO 2
#define SPAN (THREADS + 2 * HALO)

__constant__ int FILTER[5] = {3571, 16004, 26386, 16004, 3571};

__device__ inline int mirror(int i, int size) {
    if (i < 0) return -i;
    if (i >= size) return 2 * size - i - 2;
    return i;
}

template <typename T, typename Acc>
__device__ void motion_sad(const T *prev, unsigned prev_pitch, const T *cur, unsigned cur_pitch,
                           unsigned width, unsigned height, unsigned bit_depth, u64 *total) {
    __shared__ int diff[ROWS + 2 * HALO][SPAN];
    __shared__ int hi[ROWS][SPAN];
    __shared__ int lo[ROWS][SPAN];
    __shared__ u64 scratch[THREADS];
    const int w = (int)width, h = (int)height;
    const Acc round = (Acc)1 << (bit_depth - 1);
    for (unsigned strip = blockIdx.x; strip * ROWS < height; strip += gridDim.x) {
        const int y0 = (int)(strip * ROWS);
        const int rows = h - y0 < ROWS ? h - y0 : ROWS;
        unsigned row_sum[ROWS] = {0, 0, 0, 0};
        for (int x0 = 0; x0 < w; x0 += THREADS) {
            // Differences of rows y0-2 .. y0+rows+1, columns x0-2 .. x0+THREADS+1.
            for (int i = threadIdx.x; i < (ROWS + 2 * HALO) * SPAN; i += THREADS) {
                const int r = i / SPAN, j = i % SPAN;
                const int px = x0 + j - HALO, py = y0 + r - HALO;
                if (px > w + 1 || r >= rows + 2 * HALO) continue;
                const int mx = mirror(px, w), my = mirror(py, h);
                const T *p = (const T *)((const char *)prev + (u64)my * prev_pitch);
                const T *c = (const T *)((const char *)cur + (u64)my * cur_pitch);
                diff[r][j] = (int)p[mx] - (int)c[mx];
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
            const int j = threadIdx.x;
            if (x0 + j < w) {
#pragma unroll
                for (int r = 0; r < ROWS; r++) {
                    if (r >= rows) break;
                    const int a = FILTER[0] * (hi[r][j] + hi[r][j + 4]) +
                                  FILTER[1] * (hi[r][j + 1] + hi[r][j + 3]) + FILTER[2] * hi[r][j + 2];
                    const int b = FILTER[0] * (lo[r][j] + lo[r][j + 4]) +
                                  FILTER[1] * (lo[r][j + 1] + lo[r][j + 3]) + FILTER[2] * lo[r][j + 2];
                    const int v = (a + ((b + (1 << 15)) >> 8)) >> 8;
                    row_sum[r] += (unsigned)(v < 0 ? -v : v);
                }
            }
            __syncthreads();
        }
        u64 strip_total = 0;
        for (int r = 0; r < ROWS; r++) {
            strip_total += block_sum_u64((u64)row_sum[r], scratch) & 0xffffffffull;
        }
        if (threadIdx.x == 0) atomicAdd(total, strip_total);
    }
}

extern "C" __global__ void motion_sad_u8(const unsigned char *prev, unsigned prev_pitch,
                                         const unsigned char *cur, unsigned cur_pitch,
                                         unsigned width, unsigned height, unsigned bit_depth,
                                         u64 *total) {
    motion_sad<unsigned char, int>(prev, prev_pitch, cur, cur_pitch, width, height, bit_depth,
                                   total);
}

// Up to 15 bits: |vertical sum| <= 2^16 * (2^15 - 1) fits 32 bits.
extern "C" __global__ void motion_sad_u16(const unsigned short *prev, unsigned prev_pitch,
                                          const unsigned short *cur, unsigned cur_pitch,
                                          unsigned width, unsigned height, unsigned bit_depth,
                                          u64 *total) {
    motion_sad<unsigned short, int>(prev, prev_pitch, cur, cur_pitch, width, height, bit_depth,
                                    total);
}

// 16 bits: the vertical sum in 64 bits.
extern "C" __global__ void motion_sad_u16_wide(const unsigned short *prev, unsigned prev_pitch,
                                               const unsigned short *cur, unsigned cur_pitch,
                                               unsigned width, unsigned height,
                                               unsigned bit_depth, u64 *total) {
    motion_sad<unsigned short, i64>(prev, prev_pitch, cur, cur_pitch, width, height, bit_depth,
                                    total);
}
