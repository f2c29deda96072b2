// Shared by the float extractors' kernels (float_*.cu): the CPU's float
// arithmetic, operation by operation, and deterministic double sums.
//
// Exactness: every float operation goes through an _rn intrinsic, so the
// compiler fuses no multiply-add (the CPU code rounds each product and each
// sum) and per-pixel values are bit-identical to the CPU's. Sums: each
// thread adds its values in double in a fixed order, each block reduces its
// threads' sums in a fixed tree and writes one partial per block, and
// float_reduce_partials adds a quantity's partials in a fixed order: the
// same bits on every run (no float atomics).

#if defined(__HIP__) || defined(__HIPCC_RTC__)
// hiprtc contracts a * b + c by default, even across its _rn helpers.
#pragma clang fp contract(off)
#endif

__device__ __forceinline__ float fadd(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float fsub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float fmul(float a, float b) { return __fmul_rn(a, b); }

// Reflect-101 index into 0..n (the CPU's `mirror`); indices further out
// (only tiles' unused margins reach them) are clamped so that loads stay
// inside the plane.
__device__ __forceinline__ int mirror_index(int i, int n) {
    if (i < 0) i = -i;
    if (i >= n) i = 2 * n - i - 2;
    return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

// A sample as the CPU's picture_copy makes it: `sample * (1 / divisor) +
// offset` in float (the divisor a power of two, so the product is exact).
__device__ __forceinline__ float to_float(unsigned sample, float scale, float offset) {
    return fadd(fmul((float)sample, scale), offset);
}

// Sums `value` over the block (blockDim.x a power of two, at most 1024) in
// a fixed tree through shared memory; thread 0 gets the total. Every
// thread must call.
__device__ inline double block_sum_f64(double value, double *scratch) {
    unsigned t = threadIdx.x;
    scratch[t] = value;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half) scratch[t] += scratch[t + half];
        __syncthreads();
    }
    double total = scratch[0];
    __syncthreads();
    return total;
}

// Index of this block among the grid's (x fastest): its partial's slot.
__device__ __forceinline__ unsigned block_index() {
    return blockIdx.y * gridDim.x + blockIdx.x;
}

#define REDUCE_THREADS 256

// out[q] = the sum of partials[q * stride + i] for i < stride, for the
// quantity q = blockIdx.x: each thread adds every REDUCE_THREADS-th
// partial in order, then the block's tree. Slots no block wrote hold 0.
extern "C" __global__ void __launch_bounds__(REDUCE_THREADS)
    float_reduce_partials(const double *partials, unsigned stride, double *out) {
    __shared__ double scratch[REDUCE_THREADS];
    const double *p = partials + (u64)blockIdx.x * stride;
    double sum = 0.0;
    for (unsigned i = threadIdx.x; i < stride; i += REDUCE_THREADS) sum += p[i];
    double total = block_sum_f64(sum, scratch);
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}
