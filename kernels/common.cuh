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
