/* A C producer on vmafx's own API (vmafx.h): reference frames in host
 * memory (planar I420), distorted frames converted to NV12 in a memfd, as
 * a decoder would hand them over; per-frame scores as frames finish;
 * memory reused only after its release callback.
 *
 *   host_frames REF.y4m DIST.y4m     (8-bit 4:2:0 .y4m)
 *
 * Build: cc host_frames.c $(pkg-config --cflags --libs libvmaf)
 * Prints each frame's vmaf, then the pooled mean and how many frames were
 * released; exits 1 on any failure. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vmafx.h>

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

/* One I420 frame, tightly packed, into `buf`. */
static int y4m_read(Y4m *y, unsigned char *buf, size_t bytes)
{
    char tag[6];
    return fread(tag, 1, 6, y->f) == 6 && fread(buf, 1, bytes, y->f) == bytes;
}

static unsigned released = 0;
static void on_release(void *buf) { free(buf); released++; }
static void on_release_fd(void *fd) { close((int)(intptr_t)fd); released++; }

static void on_frame(void *user, unsigned index, const char *const *names, const double *values,
                     unsigned count)
{
    (void)user;
    for (unsigned i = 0; i < count; i++)
        if (!strcmp(names[i], "vmaf")) printf("frame %u: vmaf %.6f\n", index, values[i]);
}

#define CHECK(call) do { if ((call) != 0) { \
    fprintf(stderr, "%s failed: %s\n", #call, vmafx_error_message()); return 1; } } while (0)

int main(int argc, char **argv)
{
    Y4m r, d;
    if (argc != 3 || y4m_open(&r, argv[1]) || y4m_open(&d, argv[2])) {
        fprintf(stderr, "usage: host_frames REF.y4m DIST.y4m (8-bit 4:2:0)\n");
        return 2;
    }
    const unsigned w = r.w, h = r.h, cw = (w + 1) / 2, ch = (h + 1) / 2;
    const size_t luma = (size_t)w * h, chroma = (size_t)cw * ch, bytes = luma + 2 * chroma;

    const char *models[] = { "version=vmaf_v0.6.1" };
    VmafxConfig cfg = {
        .size = sizeof cfg, .width = w, .height = h, .pix_fmt = VMAF_PIX_FMT_YUV420P, .bpc = 8,
        .models = models, .n_models = 1, .backend = VMAFX_BACKEND_CPU,
    };
    VmafxContext *ctx;
    CHECK(vmafx_context_new(&ctx, &cfg));
    CHECK(vmafx_on_frame(ctx, on_frame, NULL));

    unsigned n = 0;
    unsigned char *planar = malloc(bytes);
    for (;; n++) {
        /* Reference: its own host buffer, freed by its release callback. */
        unsigned char *ref = malloc(bytes);
        if (!y4m_read(&r, ref, bytes) || !y4m_read(&d, planar, bytes)) { free(ref); break; }
        VmafxFrame rf = {
            .size = sizeof rf, .width = w, .height = h, .pixel_format = VMAFX_PIXEL_FORMAT_PLANAR,
            .memory = VMAFX_MEMORY_HOST, .host = ref, .bytes = bytes,
            .planes = { { 0, w }, { luma, cw }, { luma + chroma, cw } },
            .release = on_release, .release_user_data = ref,
        };
        /* Distorted: NV12 in a memfd, as a decoder's output. */
        int fd = memfd_create("nv12", 0);
        size_t nv12 = luma + 2 * chroma;
        if (fd < 0 || ftruncate(fd, nv12)) { perror("memfd"); return 1; }
        unsigned char *m = mmap(NULL, nv12, PROT_WRITE, MAP_SHARED, fd, 0);
        memcpy(m, planar, luma);
        for (size_t i = 0; i < chroma; i++) {
            m[luma + 2 * i] = planar[luma + i];
            m[luma + 2 * i + 1] = planar[luma + chroma + i];
        }
        munmap(m, nv12);
        VmafxFrame df = {
            .size = sizeof df, .width = w, .height = h, .pixel_format = VMAFX_PIXEL_FORMAT_NV12,
            .memory = VMAFX_MEMORY_HOST_FD, .fd = fd, .bytes = nv12,
            .planes = { { 0, w }, { luma, 2 * cw } },
            .release = on_release_fd, .release_user_data = (void *)(intptr_t)fd,
        };
        CHECK(vmafx_submit(ctx, &rf, &df));
    }
    free(planar);
    fclose(r.f);
    fclose(d.f);
    CHECK(vmafx_finish(ctx));
    double mean;
    CHECK(vmafx_score_pooled(ctx, "vmaf", VMAF_POOL_METHOD_MEAN, &mean));
    printf("%u frames: pooled vmaf %.17g; %u of %u frames released\n", n, mean, released, 2 * n);
    CHECK(vmafx_context_free(ctx));
    return released == 2 * n ? 0 : 1;
}
