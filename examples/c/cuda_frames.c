/* A CUDA producer on vmafx's own API (vmafx.h), as a hardware decoder
 * would hand its frames over: each frame uploaded into device memory of a
 * small ring of surfaces (reference planar I420, distorted NV12), a CUDA
 * event recorded after the upload as the acquire fence (vmafx waits on it
 * on the device, the host never blocks), and a surface reused only after
 * its release callback. Scores come per frame as they finish.
 *
 *   cuda_frames REF.y4m DIST.y4m     (8-bit 4:2:0 .y4m)
 *
 * Surfaces are pitched as decoders pitch them (rows 256-byte aligned), so
 * vmafx reads them in place.
 *
 * Build: cc cuda_frames.c $(pkg-config --cflags --libs libvmaf) -ldl
 * The CUDA driver (libcuda.so.1) is loaded with dlopen and the few calls
 * used are declared below, so no CUDA toolkit is needed to build it.
 * Without a CUDA device vmafx_context_new refuses (-ENOTSUP, naming CUDA):
 * the program prints "SKIP: <message>" and exits 0. Otherwise it prints
 * each frame's vmaf, then the pooled mean and how many frames were
 * released; exits 1 on any failure. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vmafx.h>

/* ---- the CUDA driver API calls used (cuda.h's declarations) ---- */
typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUstream, *CUevent;
typedef unsigned long long CUdeviceptr;
#define CU_STREAM_NON_BLOCKING 1
#define CU_EVENT_DISABLE_TIMING 2

static struct {
    CUresult (*init)(unsigned);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*primary_ctx_retain)(CUcontext *, CUdevice);
    CUresult (*ctx_set_current)(CUcontext);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*mem_free)(CUdeviceptr);
    CUresult (*memcpy_htod_async)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*stream_create)(CUstream *, unsigned);
    CUresult (*stream_synchronize)(CUstream);
    CUresult (*event_create)(CUevent *, unsigned);
    CUresult (*event_record)(CUevent, CUstream);
} cu;

static int load_cuda(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) return -1;
#define SYM(field, name) if (!(*(void **)&cu.field = dlsym(lib, name))) return -1
    SYM(init, "cuInit");
    SYM(device_get, "cuDeviceGet");
    SYM(primary_ctx_retain, "cuDevicePrimaryCtxRetain");
    SYM(ctx_set_current, "cuCtxSetCurrent");
    SYM(mem_alloc, "cuMemAlloc_v2");
    SYM(mem_free, "cuMemFree_v2");
    SYM(memcpy_htod_async, "cuMemcpyHtoDAsync_v2");
    SYM(stream_create, "cuStreamCreate");
    SYM(stream_synchronize, "cuStreamSynchronize");
    SYM(event_create, "cuEventCreate");
    SYM(event_record, "cuEventRecord");
#undef SYM
    return 0;
}

/* ---- .y4m input ---- */
typedef struct { FILE *f; unsigned w, h; } Y4m;

static int y4m_open(Y4m *y, const char *path)
{
    char line[256];
    y->f = fopen(path, "rb");
    if (!y->f || !fgets(line, sizeof line, y->f)) return -1;
    char *W = strstr(line, " W"), *H = strstr(line, " H");
    if (!W || !H) return -1;
    y->w = strtoul(W + 2, NULL, 10);
    y->h = strtoul(H + 2, NULL, 10);
    return 0;
}

static int y4m_read(Y4m *y, unsigned char *buf, size_t bytes)
{
    char tag[6];
    return fread(tag, 1, 6, y->f) == 6 && fread(buf, 1, bytes, y->f) == bytes;
}

/* ---- the surfaces: a reference and a distorted buffer and the event
 * that says both are written; `busy` counts the frames vmafx still reads */
#define SURFACES 6
typedef struct {
    CUdeviceptr ref, dist;
    CUevent written;
    atomic_int busy;
} Surface;

static atomic_uint released = 0;
static void on_release(void *surface)
{
    atomic_fetch_sub(&((Surface *)surface)->busy, 1);
    atomic_fetch_add(&released, 1);
}

static void on_frame(void *user, unsigned index, const char *const *names, const double *values,
                     unsigned count)
{
    (void)user;
    for (unsigned i = 0; i < count; i++)
        if (!strcmp(names[i], "vmaf")) printf("frame %u: vmaf %.6f\n", index, values[i]);
}

#define ALIGN(n) (((size_t)(n) + 255) / 256 * 256)

/* Copies `rows` rows of `width` bytes `src_pitch` apart into rows `dst_pitch` apart. */
static void pitch_rows(unsigned char *dst, size_t dst_pitch, const unsigned char *src,
                       size_t src_pitch, size_t width, size_t rows)
{
    for (size_t y = 0; y < rows; y++) memcpy(dst + y * dst_pitch, src + y * src_pitch, width);
}

#define CHECK(call) do { if ((call) != 0) { \
    fprintf(stderr, "%s failed: %s\n", #call, vmafx_error_message()); return 1; } } while (0)
#define CU(call) do { CUresult e_ = (call); if (e_) { \
    fprintf(stderr, "%s failed: CUDA error %d\n", #call, e_); return 1; } } while (0)

int main(int argc, char **argv)
{
    Y4m r, d;
    if (argc != 3 || y4m_open(&r, argv[1]) || y4m_open(&d, argv[2])) {
        fprintf(stderr, "usage: cuda_frames REF.y4m DIST.y4m (8-bit 4:2:0)\n");
        return 2;
    }
    const unsigned w = r.w, h = r.h, cw = (w + 1) / 2, ch = (h + 1) / 2;
    const size_t luma = (size_t)w * h, chroma = (size_t)cw * ch, bytes = luma + 2 * chroma;
    /* Device rows start 256 bytes apart at least, as a decoder's do: what
     * vmafx's kernels read in place (a compact 576-byte pitch would be
     * refused, naming the plane, address and pitch). */
    const size_t yp = ALIGN(w), cp = ALIGN(cw), uvp = ALIGN(2 * cw);
    const size_t ref_bytes = yp * h + 2 * cp * ch, dist_bytes = yp * h + uvp * ch;

    const char *models[] = { "version=vmaf_v0.6.1" };
    VmafxConfig cfg = {
        .size = sizeof cfg, .width = w, .height = h, .pix_fmt = VMAF_PIX_FMT_YUV420P, .bpc = 8,
        .models = models, .n_models = 1, .backend = VMAFX_BACKEND_CUDA,
    };
    VmafxContext *ctx;
    int err = vmafx_context_new(&ctx, &cfg);
    if (err) {
        const char *msg = vmafx_error_message();
        if (err == -ENOTSUP && strstr(msg, "CUDA")) {
            printf("SKIP: %s\n", msg);
            return 0;
        }
        fprintf(stderr, "vmafx_context_new failed (%d): %s\n", err, msg);
        return 1;
    }
    CHECK(vmafx_on_frame(ctx, on_frame, NULL));

    /* vmafx scores on device 0's primary context: the surfaces live there. */
    CUdevice dev;
    CUcontext cu_ctx;
    CUstream upload;
    if (load_cuda()) { fprintf(stderr, "libcuda.so.1 not loaded\n"); return 1; }
    CU(cu.init(0));
    CU(cu.device_get(&dev, 0));
    CU(cu.primary_ctx_retain(&cu_ctx, dev));
    CU(cu.ctx_set_current(cu_ctx));
    CU(cu.stream_create(&upload, CU_STREAM_NON_BLOCKING));
    Surface surfaces[SURFACES];
    for (int i = 0; i < SURFACES; i++) {
        CU(cu.mem_alloc(&surfaces[i].ref, ref_bytes));
        CU(cu.mem_alloc(&surfaces[i].dist, dist_bytes));
        CU(cu.event_create(&surfaces[i].written, CU_EVENT_DISABLE_TIMING));
        atomic_init(&surfaces[i].busy, 0);
    }

    unsigned char *planar = malloc(bytes), *staged = calloc(1, ref_bytes + dist_bytes);
    unsigned n = 0;
    for (;; n++) {
        if (!y4m_read(&r, planar, bytes)) break;
        Surface *s = &surfaces[n % SURFACES];
        if (atomic_load(&s->busy)) {
            /* vmafx holds a frame only while its work is queued: a ring a
             * few frames deep is free again by the time it comes round. */
            fprintf(stderr, "frame %u: surface %u is still read by vmafx\n", n, n % SURFACES);
            return 1;
        }
        /* The upload is queued on our stream; the host copy is done when
         * cuMemcpyHtoDAsync returns for pageable memory, so `planar` and
         * `staged` are free again before the next frame is read. */
        unsigned char *ref = staged, *nv12 = staged + ref_bytes;
        pitch_rows(ref, yp, planar, w, w, h);
        pitch_rows(ref + yp * h, cp, planar + luma, cw, cw, ch);
        pitch_rows(ref + yp * h + cp * ch, cp, planar + luma + chroma, cw, cw, ch);
        CU(cu.memcpy_htod_async(s->ref, ref, ref_bytes, upload));
        if (!y4m_read(&d, planar, bytes)) break;
        pitch_rows(nv12, yp, planar, w, w, h); /* NV12: Y, then Cb and Cr interleaved */
        for (size_t y = 0; y < ch; y++)
            for (size_t x = 0; x < cw; x++) {
                nv12[yp * h + y * uvp + 2 * x] = planar[luma + y * cw + x];
                nv12[yp * h + y * uvp + 2 * x + 1] = planar[luma + chroma + y * cw + x];
            }
        CU(cu.memcpy_htod_async(s->dist, nv12, dist_bytes, upload));
        CU(cu.event_record(s->written, upload));

        atomic_store(&s->busy, 2);
        VmafxFrame rf = {
            .size = sizeof rf, .width = w, .height = h, .pixel_format = VMAFX_PIXEL_FORMAT_PLANAR,
            .memory = VMAFX_MEMORY_DEVICE, .device_ptr = s->ref, .bytes = ref_bytes,
            .planes = { { 0, yp }, { yp * h, cp }, { yp * h + cp * ch, cp } },
            .acquire = VMAFX_ACQUIRE_DEVICE_EVENT, .acquire_event = (uintptr_t)s->written,
            .release = on_release, .release_user_data = s,
        };
        VmafxFrame df = {
            .size = sizeof df, .width = w, .height = h, .pixel_format = VMAFX_PIXEL_FORMAT_NV12,
            .memory = VMAFX_MEMORY_DEVICE, .device_ptr = s->dist, .bytes = dist_bytes,
            .planes = { { 0, yp }, { yp * h, uvp } },
            .acquire = VMAFX_ACQUIRE_DEVICE_EVENT, .acquire_event = (uintptr_t)s->written,
            .release = on_release, .release_user_data = s,
        };
        CHECK(vmafx_submit(ctx, &rf, &df));
    }
    free(planar);
    free(staged);
    fclose(r.f);
    fclose(d.f);
    CHECK(vmafx_finish(ctx));
    double mean;
    CHECK(vmafx_score_pooled(ctx, "vmaf", VMAF_POOL_METHOD_MEAN, &mean));
    unsigned done = atomic_load(&released);
    printf("%u frames: pooled vmaf %.17g; %u of %u frames released\n", n, mean, done, 2 * n);
    CHECK(vmafx_context_free(ctx));
    CU(cu.stream_synchronize(upload));
    for (int i = 0; i < SURFACES; i++) {
        cu.mem_free(surfaces[i].ref);
        cu.mem_free(surfaces[i].dist);
    }
    return done == 2 * n ? 0 : 1;
}
