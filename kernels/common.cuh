// Shared helpers for the vmafx kernels. Single source for CUDA (NVRTC) and
// HIP (hiprtc): only built-ins both compilers know, no warp-size
// assumptions (AMD wavefronts are 64 wide), no headers.

typedef unsigned long long u64;
typedef long long i64;

// Sums `value` over the block (blockDim.x a power of two, at most 1024)
// through shared memory; thread 0 gets the total. Every thread must call.
__device__ inline u64 block_sum_u64(u64 value, u64 *scratch) {
    unsigned t = threadIdx.x;
    scratch[t] = value;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half) scratch[t] += scratch[t + half];
        __syncthreads();
    }
    u64 total = scratch[0];
    __syncthreads();
    return total;
}
