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
// Bit l of the result: `bit` (0 or 1) of lane l of this lane's aligned
// group of 32 (every lane of the warp must call).
#define lane_bits(bit) __ballot_sync(0xffffffffu, (bit) != 0u)
#define lane_xor(v, mask, width) __shfl_xor_sync(0xffffffffu, (v), (mask), (width))
#define lane_get(v, lane, width) __shfl_sync(0xffffffffu, (v), (lane), (width))
#define lane_sync() __syncwarp()
#endif

#if defined(__HIP_PLATFORM_AMD__)
// Bit l of the result: `bit` (0 or 1) of lane l of this lane's aligned
// group of 32 (every lane of the wave must call; by shuffles, the same on
// 32- and 64-wide waves).
__device__ __forceinline__ unsigned lane_bits(unsigned bit) {
    unsigned word = bit << (threadIdx.x & 31u);
    for (int m = 16; m > 0; m /= 2) word |= lane_xor(word, m, 32);
    return word;
}
#endif

// Sums each of `values` over the block (1-D, THREADS = blockDim.x, a
// power of two up to 1024): within groups of up to 32 lanes by shuffles,
// the groups' sums through `scratch` (N * THREADS / 32 entries suffice),
// then those again by shuffles, so two block barriers in all and no loop
// or division left at run time. Every thread gets the totals; every
// thread must call. Integer sums: any order gives the same bits.
template <unsigned THREADS, int N>
__device__ inline void block_sums_u64(u64 (&values)[N], u64 *scratch) {
    constexpr unsigned WIDTH = THREADS < 32 ? THREADS : 32, GROUPS = THREADS / WIDTH;
    static_assert((THREADS & (THREADS - 1)) == 0 && THREADS <= 1024, "a power of two up to 1024");
    const unsigned t = threadIdx.x;
#pragma unroll
    for (int q = 0; q < N; q++) {
#pragma unroll
        for (unsigned m = WIDTH / 2; m > 0; m /= 2) values[q] += lane_xor(values[q], m, WIDTH);
    }
    if (t % WIDTH == 0) {
#pragma unroll
        for (int q = 0; q < N; q++) scratch[q * GROUPS + t / WIDTH] = values[q];
    }
    __syncthreads();
    if constexpr (GROUPS == 1) {
        // One group: its lanes already hold the totals.
    } else if constexpr (N * GROUPS <= WIDTH) {
        // Lane l of each group reads sum l % GROUPS of value l / GROUPS;
        // the groups' sums of a value are GROUPS neighbouring lanes.
        const unsigned l = t % WIDTH;
        u64 part = l < N * GROUPS ? scratch[l] : 0;
#pragma unroll
        for (unsigned m = GROUPS / 2; m > 0; m /= 2) part += lane_xor(part, m, WIDTH);
#pragma unroll
        for (int q = 0; q < N; q++) values[q] = lane_get(part, q * GROUPS, WIDTH);
    } else {
#pragma unroll
        for (int q = 0; q < N; q++) {
            u64 total = 0;
#pragma unroll
            for (unsigned g = 0; g < GROUPS; g++) total += scratch[q * GROUPS + g];
            values[q] = total;
        }
    }
    __syncthreads();
}

template <unsigned THREADS>
__device__ inline u64 block_sum_u64(u64 value, u64 *scratch) {
    u64 values[1] = {value};
    block_sums_u64<THREADS, 1>(values, scratch);
    return values[0];
}
