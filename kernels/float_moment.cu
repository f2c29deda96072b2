// Float moments (libvmaf 3.2.0's `float_moment`, as src/feature/float_moment.rs
// reproduces it): the luma of both pictures converted to float, the samples
// and their float squares summed in double; one partial per block and
// quantity (a block adds rows blockIdx.x, blockIdx.x + gridDim.x, ...),
// float_reduce_partials adds them. For 8-, 10- and 12-bit samples every
// square and every sum is exact, so the totals are the CPU's bit for bit.

#include "common.cuh"
#include "float_common.cuh"

#define THREADS 256

// partials[q * stride + block], q: reference sum, reference squares,
// distorted sum, distorted squares.
template <typename T>
__device__ __forceinline__ void moment_rows(const T *ref, unsigned ref_pitch, const T *dis,
                                            unsigned dis_pitch, int width, int height,
                                            float scale, double *partials, unsigned stride) {
    __shared__ double scratch[THREADS];
    double sums[4] = {0.0, 0.0, 0.0, 0.0};
    for (int y = blockIdx.x; y < height; y += gridDim.x) {
        const T *r = (const T *)((const char *)ref + (u64)y * ref_pitch);
        const T *d = (const T *)((const char *)dis + (u64)y * dis_pitch);
        for (int x = threadIdx.x; x < width; x += THREADS) {
            const float a = to_float(r[x], scale, 0.0f), b = to_float(d[x], scale, 0.0f);
            sums[0] += (double)a;
            sums[1] += (double)fmul(a, a);
            sums[2] += (double)b;
            sums[3] += (double)fmul(b, b);
        }
    }
    for (int q = 0; q < 4; q++) {
        const double total = block_sum_f64(sums[q], scratch);
        if (threadIdx.x == 0) partials[q * stride + blockIdx.x] = total;
    }
}

#define MOMENT_PARAMS(T)                                                                     \
    const T *ref, unsigned ref_pitch, const T *dis, unsigned dis_pitch, int width,            \
        int height, float scale, double *partials, unsigned stride

extern "C" __global__ void __launch_bounds__(THREADS)
    float_moment_sums_u8(MOMENT_PARAMS(unsigned char)) {
    moment_rows(ref, ref_pitch, dis, dis_pitch, width, height, scale, partials, stride);
}
extern "C" __global__ void __launch_bounds__(THREADS)
    float_moment_sums_u16(MOMENT_PARAMS(unsigned short)) {
    moment_rows(ref, ref_pitch, dis, dis_pitch, width, height, scale, partials, stride);
}
