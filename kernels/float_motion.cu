// Float motion (libvmaf 3.2.0's `float_motion`, as src/feature/float_motion.rs
// reproduces it): for a tile of the picture, the previous and the current
// reference luma are converted to float (-128 offset), blurred with the
// 5-tap filter (vertical, then horizontal, edges mirrored) and the absolute
// differences of the two blurs summed; one double partial per block.
//
// Blurring the previous frame again costs a few flops per pixel; keeping
// its raw samples instead of its blur moves a quarter of the bytes.
//
// Edges: the tile is loaded with every row and column index mirrored about
// the edge sample (reflect-101). The filter is separable and
// column-independent, so filtering mirrored source columns gives exactly
// the mirrored filtered columns the CPU pads its rows with.

#include "common.cuh"
#include "float_common.cuh"

#define THREADS 256
#define TILE_W 64
#define TILE_H 16
#define TAPS 5
#define HALF 2
#define IN_W (TILE_W + 2 * HALF)
#define IN_H (TILE_H + 2 * HALF)

// The CPU's FILTER_5 (host values, passed by value).
struct Filter5 {
    float f[TAPS];
};

// One picture's tile converted, then its vertical pass.
template <typename T>
__device__ __forceinline__ void load_and_filter_vertically(const T *src, unsigned pitch, int width,
                                                           int height, float scale, int x0, int y0,
                                                           const Filter5 &filter,
                                                           float (*in)[IN_W],
                                                           float (*vertical)[IN_W]) {
    const int tid = threadIdx.x;
    for (int i = tid; i < IN_H * IN_W; i += THREADS) {
        const int r = i / IN_W, c = i % IN_W;
        const int y = mirror_index(y0 - HALF + r, height);
        const int x = mirror_index(x0 - HALF + c, width);
        in[r][c] = to_float(((const T *)((const char *)src + (u64)y * pitch))[x], scale, -128.0f);
    }
    __syncthreads();
    for (int i = tid; i < TILE_H * IN_W; i += THREADS) {
        const int r = i / IN_W, c = i % IN_W;
        float acc = 0.0f;
#pragma unroll
        for (int k = 0; k < TAPS; k++) acc = fadd(acc, fmul(filter.f[k], in[r + k][c]));
        vertical[r][c] = acc;
    }
}

// The horizontal pass at tile pixel (r, c).
__device__ __forceinline__ float filter_horizontally(const Filter5 &filter,
                                                     const float (*vertical)[IN_W], int r, int c) {
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < TAPS; k++) acc = fadd(acc, fmul(filter.f[k], vertical[r][c + k]));
    return acc;
}

// partials[block] = the block's sum of |blur(previous) - blur(current)|.
template <typename T>
__device__ __forceinline__ void motion_tile(const T *previous, unsigned previous_pitch,
                                            const T *current, unsigned current_pitch, int width,
                                            int height, float scale, Filter5 filter,
                                            double *partials) {
    __shared__ float in_prev[IN_H][IN_W];
    __shared__ float in_cur[IN_H][IN_W];
    __shared__ float v_prev[TILE_H][IN_W];
    __shared__ float v_cur[TILE_H][IN_W];
    __shared__ double scratch[THREADS];
    const int x0 = blockIdx.x * TILE_W, y0 = blockIdx.y * TILE_H;

    load_and_filter_vertically(previous, previous_pitch, width, height, scale, x0, y0, filter,
                               in_prev, v_prev);
    load_and_filter_vertically(current, current_pitch, width, height, scale, x0, y0, filter,
                               in_cur, v_cur);
    __syncthreads();

    double sum = 0.0;
    for (int i = threadIdx.x; i < TILE_H * TILE_W; i += THREADS) {
        const int r = i / TILE_W, c = i % TILE_W;
        if (y0 + r >= height || x0 + c >= width) continue;
        const float p = filter_horizontally(filter, v_prev, r, c);
        const float q = filter_horizontally(filter, v_cur, r, c);
        sum += (double)fabsf(fsub(p, q));
    }
    const double total = block_sum_f64(sum, scratch);
    if (threadIdx.x == 0) partials[block_index()] = total;
}

#define MOTION_PARAMS(T)                                                                     \
    const T *previous, unsigned previous_pitch, const T *current, unsigned current_pitch,     \
        int width, int height, float scale, Filter5 filter, double *partials
#define MOTION_ARGS                                                                          \
    previous, previous_pitch, current, current_pitch, width, height, scale, filter, partials

extern "C" __global__ void __launch_bounds__(THREADS)
    float_motion_sad_u8(MOTION_PARAMS(unsigned char)) {
    motion_tile<unsigned char>(MOTION_ARGS);
}
extern "C" __global__ void __launch_bounds__(THREADS)
    float_motion_sad_u16(MOTION_PARAMS(unsigned short)) {
    motion_tile<unsigned short>(MOTION_ARGS);
}
