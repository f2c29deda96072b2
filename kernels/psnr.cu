// Per-plane sum of squared errors for the integer `psnr` extractor.
// One block per row; integer sums, so the order of the atomics cannot
// change the result (bit-identical to the CPU).

#include "common.cuh"

#define THREADS 256

// libvmaf's 8-bit path sums each row in a wrapping 32-bit accumulator; the
// exact row sum modulo 2^32 is the same number.
template <typename T>
__device__ void sse_rows(const T *ref, unsigned ref_pitch, const T *dis,
                         unsigned dis_pitch, unsigned width, unsigned height,
                         int wrap_rows_32, u64 *total) {
    __shared__ u64 scratch[THREADS];
    for (unsigned y = blockIdx.x; y < height; y += gridDim.x) {
        const T *r = (const T *)((const char *)ref + (u64)y * ref_pitch);
        const T *d = (const T *)((const char *)dis + (u64)y * dis_pitch);
        u64 acc = 0;
        for (unsigned x = threadIdx.x; x < width; x += THREADS) {
            int e = (int)r[x] - (int)d[x];
            unsigned ue = (unsigned)(e < 0 ? -e : e);
            acc += (u64)(ue * ue);
        }
        u64 row = block_sum_u64<THREADS>(acc, scratch);
        if (threadIdx.x == 0) {
            if (wrap_rows_32) row &= 0xffffffffull;
            atomicAdd(total, row);
        }
    }
}

extern "C" __global__ void psnr_sse_u8(const unsigned char *ref, unsigned ref_pitch,
                                       const unsigned char *dis, unsigned dis_pitch,
                                       unsigned width, unsigned height, u64 *total) {
    sse_rows(ref, ref_pitch, dis, dis_pitch, width, height, 1, total);
}

extern "C" __global__ void psnr_sse_u16(const unsigned short *ref, unsigned ref_pitch,
                                        const unsigned short *dis, unsigned dis_pitch,
                                        unsigned width, unsigned height, u64 *total) {
    sse_rows(ref, ref_pitch, dis, dis_pitch, width, height, 0, total);
}
