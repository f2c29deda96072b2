/* libvmaf_cuda.h as FFmpeg's libvmaf_cuda filter uses it: a CUDA state in
 * the primary context, device pictures from the pool filled with
 * cuMemcpy2D (luma only, as FFmpeg's filter copies them), scored in place.
 *
 *   cuda REF.y4m DIST.y4m
 *
 * Without a CUDA driver or device, vmaf_cuda_state_init must refuse with
 * -ENOTSUP and a message naming CUDA; the program then prints
 * "SKIP: <message>" and exits 0 (tests/capi/c_clients.rs records the
 * skip). With a device it prints the pooled vmaf, which
 * tests/capi/c_clients.rs compares with the CPU engine's. The CUDA driver
 * is loaded with dlopen, as a client would have it from its own decoder. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libvmaf/libvmaf_cuda.h>
#include <vmafx.h>

typedef struct {
    size_t srcXInBytes, srcY; int srcMemoryType; const void *srcHost; uint64_t srcDevice;
    void *srcArray; size_t srcPitch;
    size_t dstXInBytes, dstY; int dstMemoryType; void *dstHost; uint64_t dstDevice;
    void *dstArray; size_t dstPitch;
    size_t WidthInBytes, Height;
} Memcpy2D; /* CUDA_MEMCPY2D */

typedef int (*CuInit)(unsigned);
typedef int (*CuDeviceGet)(int *, int);
typedef int (*CuRetain)(void **, int);
typedef int (*CuSetCurrent)(void *);
typedef int (*CuMemcpy2D)(const Memcpy2D *);

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    VmafCudaState *state = NULL;
    VmafCudaConfiguration cc = { .cu_ctx = NULL };
    int err = vmaf_cuda_state_init(&state, cc);
    if (err) {
        const char *msg = vmafx_error_message();
        if (err != -ENOTSUP || !strstr(msg, "CUDA")) {
            printf("FAIL: vmaf_cuda_state_init returned %d: %s\n", err, msg);
            return 1;
        }
        printf("SKIP: %s\n", msg);
        return 0;
    }
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
    CuInit cuInit = (CuInit)dlsym(cuda, "cuInit");
    CuDeviceGet cuDeviceGet = (CuDeviceGet)dlsym(cuda, "cuDeviceGet");
    CuRetain retain = (CuRetain)dlsym(cuda, "cuDevicePrimaryCtxRetain");
    CuSetCurrent set_current = (CuSetCurrent)dlsym(cuda, "cuCtxSetCurrent");
    CuMemcpy2D memcpy2d = (CuMemcpy2D)dlsym(cuda, "cuMemcpy2D_v2");
    int dev;
    void *ctx_cu;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || retain(&ctx_cu, dev) || set_current(ctx_cu)) {
        printf("FAIL: the CUDA driver's primary context\n");
        return 1;
    }

    FILE *r = fopen(argv[1], "rb"), *d = fopen(argv[2], "rb");
    char line[256];
    if (!r || !d || !fgets(line, sizeof line, r) || !fgets(line, sizeof line, d)) return 2;
    unsigned w = strtoul(strstr(line, " W") + 2, NULL, 10), h = strtoul(strstr(line, " H") + 2, NULL, 10);
    size_t frame = (size_t)w * h * 3 / 2;
    unsigned char *host = malloc(frame);

    VmafConfiguration cfg = { .log_level = VMAF_LOG_LEVEL_ERROR };
    VmafContext *vmaf;
    VmafModel *model;
    VmafModelConfig mcfg = { .name = "vmaf" };
    VmafCudaPictureConfiguration pcfg = {
        .pic_params = { w, h, 8, VMAF_PIX_FMT_YUV420P },
        .pic_prealloc_method = VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_DEVICE,
    };
    if (vmaf_init(&vmaf, cfg) || vmaf_cuda_import_state(vmaf, state) ||
        vmaf_cuda_preallocate_pictures(vmaf, pcfg) || vmaf_model_load(&model, &mcfg, "vmaf_v0.6.1") ||
        vmaf_use_features_from_model(vmaf, model)) {
        printf("FAIL: set-up: %s\n", vmafx_error_message());
        return 1;
    }
    unsigned n = 0;
    for (;; n++) {
        VmafPicture pic[2];
        FILE *in[2] = { r, d };
        int ok = 1;
        for (int s = 0; s < 2 && ok; s++) {
            char tag[6];
            ok = fread(tag, 1, 6, in[s]) == 6 && fread(host, 1, frame, in[s]) == frame;
            if (!ok) break;
            if (vmaf_cuda_fetch_preallocated_picture(vmaf, &pic[s])) {
                printf("FAIL: fetch: %s\n", vmafx_error_message());
                return 1;
            }
            Memcpy2D m = { .srcMemoryType = 1 /* host */, .srcHost = host, .srcPitch = w,
                           .dstMemoryType = 2 /* device */, .dstDevice = (uint64_t)(uintptr_t)pic[s].data[0],
                           .dstPitch = pic[s].stride[0], .WidthInBytes = w, .Height = h };
            if (memcpy2d(&m)) { printf("FAIL: cuMemcpy2D\n"); return 1; }
        }
        if (!ok) {
            break;
        }
        if (vmaf_read_pictures(vmaf, &pic[0], &pic[1], n)) {
            printf("FAIL: read %u: %s\n", n, vmafx_error_message());
            return 1;
        }
    }
    double mean;
    if (vmaf_read_pictures(vmaf, NULL, NULL, 0) ||
        vmaf_score_pooled(vmaf, model, VMAF_POOL_METHOD_MEAN, &mean, 0, n - 1)) {
        printf("FAIL: flush or pool: %s\n", vmafx_error_message());
        return 1;
    }
    printf("%u frames from CUDA device pictures: pooled vmaf %.17g\n", n, mean);
    vmaf_model_destroy(model);
    vmaf_close(vmaf);
    free(host);
    return 0;
}
