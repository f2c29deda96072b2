// Shared helpers for the vmafx kernels. Single source for CUDA (NVRTC) and
// HIP (hiprtc): only built-ins both compilers know, no warp-size
// assumptions (AMD wavefronts are 64 wide), no headers.

typedef unsigned long long u64;
typedef long long i64;

// Lane exchanges within aligned groups of `width` lanes (a power of two
// up to 32, so a group never spans two warps, 32 or 64 wide). CUDA lanes
// may diverge, so every lane of the warp must call, and `lane_sync` is a
// warp barrier with memory ordering; AMD lanes run in lockstep.
#if defined(__HIP_PLATFORM_AMD__)
#define lane_xor(v, mask, width) __shfl_xor((v), (mask), (width))
#define lane_get(v, lane, width) __shfl((v), (lane), (width))
#define lane_sync() __builtin_amdgcn_wave_barrier()
#else
#define lane_xor(v, mask, width) __shfl_xor_sync(0xffffffffu, (v), (mask), (width))
#define lane_get(v, lane, width) __shfl_sync(0xffffffffu, (v), (lane), (width))
#define lane_sync() __syncwarp()
#endif

// Sums each of `values` over the block (1-D, blockDim.x a power of two,
// at most 1024): within groups of up to 32 lanes by shuffles, then the
// groups' sums through `scratch` (N * 32 entries suffice), so two block
// barriers in all. Every thread gets the totals; every thread must call.
// Integer sums: any order gives the same bits.
template <int N>
__device__ inline void block_sums_u64(u64 (&values)[N], u64 *scratch) {
    const unsigned t = threadIdx.x;
    const unsigned width = blockDim.x < 32 ? blockDim.x : 32, groups = blockDim.x / width;
#pragma unroll
    for (int q = 0; q < N; q++) {
        for (unsigned m = width / 2; m > 0; m /= 2) values[q] += lane_xor(values[q], m, width);
    }
    if (t % width == 0) {
#pragma unroll
        for (int q = 0; q < N; q++) scratch[q * groups + t / width] = values[q];
    }
    __syncthreads();
#pragma unroll
    for (int q = 0; q < N; q++) {
        u64 total = 0;
        for (unsigned g = 0; g < groups; g++) total += scratch[q * groups + g];
        values[q] = total;
    }
    __syncthreads();
}

__device__ inline u64 block_sum_u64(u64 value, u64 *scratch) {
    u64 values[1] = {value};
    block_sums_u64<1>(values, scratch);
    return values[0];
}
