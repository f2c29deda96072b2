// The integer `motion` SAD: sum of |blur(prev - cur)| with libvmaf 3.2.0's
// separable 5-tap filter (vertical pass rounded and shifted by the bit
// depth, then horizontal pass rounded and shifted by 16), reflect-101
// edges, and a wrapping 32-bit sum per row. Integer arithmetic only.
//
// One kernel. A block owns COLS output columns of a strip of ROWS rows;
// each thread owns one column (the block's THREADS columns include the
// 2-pixel halo on each side). Walking down the strip, a thread keeps the
// five differences its vertical tap reads in registers (one new row of
// each plane loaded per output row), runs the vertical pass in 32 bits up
// to 15-bit input (as the CPU does), and shares the result, split as
// y = 256 * hi + lo so the horizontal pass fits 32 bits too (the CPU's
// `horizontal_tap`), with its neighbours through shared memory.
//
// Row sums: libvmaf adds each row in a wrapping uint32_t. |v| < 2^16, so a
// row of at most 65537 pixels never reaches 2^32 and the frame's SAD is
// the plain sum of every |v|; the extractor runs on the GPU only for such
// widths (src/gpu/feature/motion.rs). Each thread sums in 64 bits and each
// block adds its total to the frame's.

#include "common.cuh"

#define THREADS 256
#define HALO 2
#define COLS (THREADS - 2 * HALO)
#define ROWS 16

__constant__ int FILTER[5] = {3571, 16004, 26386, 16004, 3571};

__device__ inline int mirror(int i, int size) {
    if (i < 0) return -i;
    if (i >= size) return 2 * size - i - 2;
    return i;
}

template <typename T>
__device__ __forceinline__ int difference(const T *prev, unsigned prev_pitch, const T *cur,
                                          unsigned cur_pitch, int row, int col) {
    const T *p = (const T *)((const char *)prev + (u64)row * prev_pitch);
    const T *c = (const T *)((const char *)cur + (u64)row * cur_pitch);
    return (int)__ldg(p + col) - (int)__ldg(c + col);
}

template <typename T, typename Acc>
__device__ void motion_sad(const T *prev, unsigned prev_pitch, const T *cur, unsigned cur_pitch,
                           unsigned width, unsigned height, unsigned bit_depth, u64 *total) {
    __shared__ int hi[THREADS];
    __shared__ int lo[THREADS];
    __shared__ u64 scratch[THREADS];
    const int w = (int)width, h = (int)height;
    const int t = threadIdx.x;
    const int px = (int)blockIdx.x * COLS - HALO + t;
    const int y0 = (int)blockIdx.y * ROWS;
    const int y_end = y0 + ROWS < h ? y0 + ROWS : h;
    // Columns past the mirrored halo load nothing (they are never read).
    const bool loads = px <= w + 1;
    const int mx = loads ? mirror(px, w) : 0;
    const bool outputs = t >= HALO && t < THREADS - HALO && px < w;
    const Acc round = (Acc)1 << (bit_depth - 1);
    // d_next runs a row ahead, so each row's load is in flight while the
    // previous row is filtered.
    int d0 = 0, d1 = 0, d2 = 0, d3 = 0, d4 = 0, d_next = 0;
    if (loads) {
        d1 = difference(prev, prev_pitch, cur, cur_pitch, mirror(y0 - 2, h), mx);
        d2 = difference(prev, prev_pitch, cur, cur_pitch, mirror(y0 - 1, h), mx);
        d3 = difference(prev, prev_pitch, cur, cur_pitch, y0, mx);
        d4 = difference(prev, prev_pitch, cur, cur_pitch, mirror(y0 + 1, h), mx);
        d_next = difference(prev, prev_pitch, cur, cur_pitch, mirror(y0 + 2, h), mx);
    }
    u64 acc = 0;
    for (int y = y0; y < y_end; y++) {
        d0 = d1;
        d1 = d2;
        d2 = d3;
        d3 = d4;
        d4 = d_next;
        if (loads && y + 1 < y_end) {
            d_next = difference(prev, prev_pitch, cur, cur_pitch, mirror(y + 3, h), mx);
        }
        const Acc v = (Acc)FILTER[0] * (Acc)(d0 + d4) + (Acc)FILTER[1] * (Acc)(d1 + d3) +
                      (Acc)FILTER[2] * (Acc)d2;
        const int yv = (int)((v + round) >> bit_depth);
        hi[t] = yv >> 8;
        lo[t] = yv & 0xff;
        __syncthreads();
        if (outputs) {
            const int a = FILTER[0] * (hi[t - 2] + hi[t + 2]) + FILTER[1] * (hi[t - 1] + hi[t + 1]) +
                          FILTER[2] * hi[t];
            const int b = FILTER[0] * (lo[t - 2] + lo[t + 2]) + FILTER[1] * (lo[t - 1] + lo[t + 1]) +
                          FILTER[2] * lo[t];
            const int r = (a + ((b + (1 << 15)) >> 8)) >> 8;
            acc += (unsigned)(r < 0 ? -r : r);
        }
        __syncthreads();
    }
    const u64 block_total = block_sum_u64(acc, scratch);
    if (t == 0 && block_total != 0) atomicAdd(total, block_total);
}

extern "C" __global__ void __launch_bounds__(THREADS)
    motion_sad_u8(const unsigned char *prev, unsigned prev_pitch, const unsigned char *cur,
                  unsigned cur_pitch, unsigned width, unsigned height, unsigned bit_depth,
                  u64 *total) {
    motion_sad<unsigned char, int>(prev, prev_pitch, cur, cur_pitch, width, height, bit_depth,
                                   total);
}

// Up to 15 bits: |vertical sum| <= 2^16 * (2^15 - 1) fits 32 bits.
extern "C" __global__ void __launch_bounds__(THREADS)
    motion_sad_u16(const unsigned short *prev, unsigned prev_pitch, const unsigned short *cur,
                   unsigned cur_pitch, unsigned width, unsigned height, unsigned bit_depth,
                   u64 *total) {
    motion_sad<unsigned short, int>(prev, prev_pitch, cur, cur_pitch, width, height, bit_depth,
                                    total);
}

// 16 bits: the vertical sum in 64 bits.
extern "C" __global__ void __launch_bounds__(THREADS)
    motion_sad_u16_wide(const unsigned short *prev, unsigned prev_pitch, const unsigned short *cur,
                        unsigned cur_pitch, unsigned width, unsigned height, unsigned bit_depth,
                        u64 *total) {
    motion_sad<unsigned short, i64>(prev, prev_pitch, cur, cur_pitch, width, height, bit_depth,
                                    total);
}
