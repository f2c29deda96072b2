// The integer `motion` SAD: sum of |blur(prev - cur)| with libvmaf 3.2.0's
// separable 5-tap filter (vertical pass rounded and shifted by the bit
// depth, then horizontal pass rounded and shifted by 16), reflect-101
// edges, and a wrapping 32-bit sum per row. Integer arithmetic only.

#include "common.cuh"

#define THREADS 256

__constant__ int FILTER[5] = {3571, 16004, 26386, 16004, 3571};

__device__ inline int mirror(int i, int size) {
    if (i < 0) return -i;
    if (i >= size) return 2 * size - i - 2;
    return i;
}

// Vertical pass of the difference: out[y][x] (tightly packed int32).
template <typename T>
__device__ void vertical(const T *prev, unsigned prev_pitch, const T *cur,
                         unsigned cur_pitch, unsigned width, unsigned height,
                         unsigned bit_depth, int *out) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y;
    if (x >= width || y >= height) return;
    i64 acc = 0;
    for (int k = 0; k < 5; k++) {
        int row = mirror((int)y + k - 2, (int)height);
        const T *p = (const T *)((const char *)prev + (u64)row * prev_pitch);
        const T *c = (const T *)((const char *)cur + (u64)row * cur_pitch);
        acc += (i64)FILTER[k] * ((int)p[x] - (int)c[x]);
    }
    i64 round = (i64)1 << (bit_depth - 1);
    out[(u64)y * width + x] = (int)((acc + round) >> bit_depth);
}

extern "C" __global__ void motion_vertical_u8(const unsigned char *prev, unsigned prev_pitch,
                                              const unsigned char *cur, unsigned cur_pitch,
                                              unsigned width, unsigned height,
                                              unsigned bit_depth, int *out) {
    vertical(prev, prev_pitch, cur, cur_pitch, width, height, bit_depth, out);
}

extern "C" __global__ void motion_vertical_u16(const unsigned short *prev, unsigned prev_pitch,
                                               const unsigned short *cur, unsigned cur_pitch,
                                               unsigned width, unsigned height,
                                               unsigned bit_depth, int *out) {
    vertical(prev, prev_pitch, cur, cur_pitch, width, height, bit_depth, out);
}

// Horizontal pass, absolute value and sum; one block per row. The row sum
// is libvmaf's wrapping uint32_t, i.e. the exact sum modulo 2^32.
extern "C" __global__ void motion_horizontal_sad(const int *vert, unsigned width,
                                                 unsigned height, u64 *total) {
    __shared__ u64 scratch[THREADS];
    for (unsigned y = blockIdx.x; y < height; y += gridDim.x) {
        const int *row = vert + (u64)y * width;
        u64 acc = 0;
        for (unsigned x = threadIdx.x; x < width; x += blockDim.x) {
            i64 sum = 0;
            for (int k = 0; k < 5; k++) {
                sum += (i64)FILTER[k] * row[mirror((int)x + k - 2, (int)width)];
            }
            int v = (int)((sum + (1 << 15)) >> 16);
            acc += (u64)(unsigned)(v < 0 ? -v : v);
        }
        u64 total_row = block_sum_u64(acc, scratch);
        if (threadIdx.x == 0) atomicAdd(total, total_row & 0xffffffffull);
    }
}
