// Float PSNR (libvmaf 3.2.0's `float_psnr`, as src/feature/float_psnr.rs
// reproduces it): the luma converted to float, the squared float
// differences summed in double; one partial per block (a block adds rows
// blockIdx.x, blockIdx.x + gridDim.x, ...), float_reduce_partials adds
// them. For 8-, 10- and 12-bit samples every square and every sum is exact,
// so the total is the CPU's bit for bit.

#include "common.cuh"
#include "float_common.cuh"

#define THREADS 256

template <typename T>
__device__ __forceinline__ void sse_rows(const T *ref, unsigned ref_pitch, const T *dis,
                                         unsigned dis_pitch, int width, int height, float scale,
                                         double *partials) {
    __shared__ double scratch[THREADS];
    double sum = 0.0;
    for (int y = blockIdx.x; y < height; y += gridDim.x) {
        const T *r = (const T *)((const char *)ref + (u64)y * ref_pitch);
        const T *d = (const T *)((const char *)dis + (u64)y * dis_pitch);
        for (int x = threadIdx.x; x < width; x += THREADS) {
            const float diff = fsub(to_float(r[x], scale, 0.0f), to_float(d[x], scale, 0.0f));
            sum += (double)fmul(diff, diff);
        }
    }
    const double total = block_sum_f64(sum, scratch);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

#define PSNR_PARAMS(T)                                                                       \
    const T *ref, unsigned ref_pitch, const T *dis, unsigned dis_pitch, int width,            \
        int height, float scale, double *partials

extern "C" __global__ void __launch_bounds__(THREADS)
    float_psnr_sse_u8(PSNR_PARAMS(unsigned char)) {
    sse_rows(ref, ref_pitch, dis, dis_pitch, width, height, scale, partials);
}
extern "C" __global__ void __launch_bounds__(THREADS)
    float_psnr_sse_u16(PSNR_PARAMS(unsigned short)) {
    sse_rows(ref, ref_pitch, dis, dis_pitch, width, height, scale, partials);
}
