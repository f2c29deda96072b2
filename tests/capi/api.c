/* A libvmaf client, as FFmpeg's filter and the vmaf tool use the API:
 * every call's refusals first (each must return -EINVAL with a message
 * naming what was wrong, and leak nothing), then a whole run over an 8-bit
 * 4:2:0 .y4m pair with a model, a feature with options and pooled scores,
 * written in every output format, then a bootstrap collection.
 *
 *   api REF.y4m DIST.y4m OUT_PREFIX
 *
 * writes OUT_PREFIX.{xml,json,csv,sub} and OUT_PREFIX-b.json and prints
 * the scores it read back. Built with -fsanitize=address by
 * tests/capi/c_clients.rs, so a leak on any path fails the run. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vmafx.h>

static int failures = 0;

#define EXPECT(cond, ...) do { if (!(cond)) { failures++; \
    printf("FAIL line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

/* The call returned -EINVAL and the message names `needle`. */
static void refused(int ret, const char *needle, int line)
{
    const char *msg = vmafx_error_message();
    if (ret != -EINVAL || !strstr(msg, needle)) {
        failures++;
        printf("FAIL line %d: expected -EINVAL naming '%s', got %d: %s\n", line, needle, ret, msg);
    } else {
        printf("refused as expected: %s\n", msg);
    }
}
#define REFUSED(call, needle) refused((call), (needle), __LINE__)

typedef struct { FILE *f; unsigned w, h; } Y4m;

static int y4m_open(Y4m *y, const char *path)
{
    char line[256];
    y->f = fopen(path, "rb");
    if (!y->f || !fgets(line, sizeof line, y->f)) return -1;
    char *W = strstr(line, " W"), *H = strstr(line, " H"), *C = strstr(line, " C");
    if (!W || !H || (C && strncmp(C, " C420", 5))) return -1;
    y->w = strtoul(W + 2, NULL, 10);
    y->h = strtoul(H + 2, NULL, 10);
    return 0;
}

/* Reads the next frame into pic's planes (row by row: strides differ). */
static int y4m_read(Y4m *y, VmafPicture *pic)
{
    char tag[6];
    if (fread(tag, 1, 6, y->f) != 6) return 0;
    for (int p = 0; p < 3; p++) {
        unsigned w = p ? (y->w + 1) / 2 : y->w, h = p ? (y->h + 1) / 2 : y->h;
        for (unsigned r = 0; r < h; r++)
            if (fread((char *)pic->data[p] + r * pic->stride[p], 1, w, y->f) != w) return 0;
    }
    return 1;
}

static void refusals(void)
{
    VmafConfiguration cfg = { .log_level = VMAF_LOG_LEVEL_NONE };
    VmafContext *ctx = NULL;
    VmafModel *model = NULL;
    VmafModelConfig mcfg = { 0 };
    VmafPicture a = { 0 }, b = { 0 };
    VmafFeatureDictionary *d = NULL;
    double s;

    REFUSED(vmaf_init(NULL, cfg), "vmaf is NULL");
    REFUSED(vmaf_model_load(&model, &mcfg, "vmaf_v9.9"), "vmaf_v9.9");
    REFUSED(vmaf_model_load(&model, &mcfg, NULL), "version is NULL");
    REFUSED(vmaf_model_load_from_path(&model, &mcfg, "/no/such/model.json"), "/no/such/model.json");
    REFUSED(vmaf_model_load(&model, &mcfg, "vmaf_b_v0.6.3"), "vmaf_model_collection_load");
    REFUSED(vmaf_picture_alloc(&a, 7, 8, 64, 64), "pixel format 7");
    REFUSED(vmaf_picture_alloc(&a, VMAF_PIX_FMT_YUV420P, 7, 64, 64), "bpc 7");
    REFUSED(vmaf_picture_alloc(&a, VMAF_PIX_FMT_YUV420P, 8, 0, 64), "0x64");
    REFUSED(vmaf_picture_unref(&a), "no reference");
    REFUSED(vmaf_picture_unref(NULL), "pic is NULL");
    REFUSED(vmaf_feature_dictionary_set(&d, NULL, "1"), "key is NULL");
    REFUSED(vmaf_feature_dictionary_free(&d), "already freed");

    EXPECT(vmaf_init(&ctx, cfg) == 0, "vmaf_init");
    REFUSED(vmaf_use_feature(ctx, "no_such_feature", NULL), "no_such_feature");
    EXPECT(vmaf_feature_dictionary_set(&d, "no_such_option", "1") == 0, "dictionary_set");
    REFUSED(vmaf_use_feature(ctx, "psnr", d), "no_such_option");
    EXPECT(vmaf_feature_dictionary_free(&d) == 0 && !d, "a refused dictionary stays the caller's");
    REFUSED(vmaf_score_pooled(ctx, NULL, VMAF_POOL_METHOD_MEAN, &s, 0, 0), "model is NULL");
    EXPECT(vmaf_model_load(&model, &mcfg, "vmaf_v0.6.1") == 0, "model_load");
    EXPECT(vmaf_use_features_from_model(ctx, model) == 0, "use model");
    REFUSED(vmaf_score_pooled(ctx, model, 0, &s, 0, 0), "pool method 0");
    REFUSED(vmaf_score_pooled(ctx, model, VMAF_POOL_METHOD_MEAN, &s, 3, 1), "index_low 3 > index_high 1");
    REFUSED(vmaf_score_at_index(ctx, model, &s, 0), "frame 0 is not complete yet");

    /* Pictures of different sizes, and out of order: both stay the caller's. */
    EXPECT(vmaf_picture_alloc(&a, VMAF_PIX_FMT_YUV420P, 8, 64, 64) == 0, "alloc a");
    EXPECT(vmaf_picture_alloc(&b, VMAF_PIX_FMT_YUV420P, 8, 64, 32) == 0, "alloc b");
    REFUSED(vmaf_read_pictures(ctx, &a, &b, 0), "the distorted picture");
    REFUSED(vmaf_read_pictures(ctx, &a, NULL, 0), "one of ref and dist is NULL");
    EXPECT(vmaf_picture_unref(&b) == 0, "unref b");
    EXPECT(vmaf_picture_alloc(&b, VMAF_PIX_FMT_YUV420P, 8, 64, 64) == 0, "alloc b");
    REFUSED(vmaf_read_pictures(ctx, &a, &b, 5), "the next index is 0");
    b.w[0] = 32;
    REFUSED(vmaf_read_pictures(ctx, &a, &b, 0), "the distorted picture");
    b.w[0] = 64;
    EXPECT(vmaf_read_pictures(ctx, &a, &b, 0) == 0, "read 0");
    EXPECT(a.ref == NULL && b.ref == NULL, "read pictures are zeroed (now the library's)");
    REFUSED(vmaf_picture_unref(&a), "no reference");
    REFUSED(vmaf_use_feature(ctx, "psnr", NULL), "after the first vmaf_read_pictures");
    EXPECT(vmaf_read_pictures(ctx, NULL, NULL, 0) == 0, "flush");
    EXPECT(vmaf_picture_alloc(&a, VMAF_PIX_FMT_YUV420P, 8, 64, 64) == 0, "alloc a");
    EXPECT(vmaf_picture_alloc(&b, VMAF_PIX_FMT_YUV420P, 8, 64, 64) == 0, "alloc b");
    REFUSED(vmaf_read_pictures(ctx, &a, &b, 1), "flushed");
    vmaf_picture_unref(&a);
    vmaf_picture_unref(&b);
    REFUSED(vmaf_write_output(ctx, "/no/such/dir/out.json", VMAF_OUTPUT_FORMAT_JSON), "/no/such/dir/out.json");
    REFUSED(vmaf_write_output(ctx, "/dev/null", 9), "output format 9");
    REFUSED(vmaf_fetch_preallocated_picture(ctx, &a), "vmaf_preallocate_pictures first");
    vmaf_model_destroy(model);
    REFUSED(vmaf_use_features_from_model(ctx, model), "not a live handle");
    REFUSED(vmaf_model_feature_overload(model, "adm", NULL), "not a live handle");
    EXPECT(vmaf_close(ctx) == 0, "close");
    REFUSED(vmaf_close(NULL), "NULL");
    /* A context used after close: refused, nothing touched. */
    REFUSED(vmaf_use_feature(ctx, "psnr", NULL), "not a live handle");
    REFUSED(vmaf_read_pictures(ctx, NULL, NULL, 0), "not a live handle");
    REFUSED(vmaf_close(ctx), "not a live handle");
}

/* The whole run, as FFmpeg's libvmaf filter makes it; odd frames come from
 * the picture pool, as a client of vmaf_preallocate_pictures. */
static void run(const char *ref_path, const char *dist_path, const char *out)
{
    Y4m r, d;
    if (y4m_open(&r, ref_path) || y4m_open(&d, dist_path)) {
        EXPECT(0, "open the pair %s %s", ref_path, dist_path);
        return;
    }
    VmafConfiguration cfg = { .log_level = VMAF_LOG_LEVEL_ERROR, .n_threads = 2, .n_subsample = 1 };
    VmafContext *ctx;
    EXPECT(vmaf_init(&ctx, cfg) == 0, "init");
    VmafModel *model;
    VmafModelConfig mcfg = { .name = "vmaf", .flags = VMAF_MODEL_FLAGS_DEFAULT };
    EXPECT(vmaf_model_load(&model, &mcfg, "vmaf_v0.6.1") == 0, "model");
    VmafFeatureDictionary *opts = NULL;
    EXPECT(vmaf_feature_dictionary_set(&opts, "enable_chroma", "false") == 0, "opts");
    EXPECT(vmaf_use_feature(ctx, "psnr", opts) == 0, "psnr");
    EXPECT(vmaf_use_features_from_model(ctx, model) == 0, "use model");
    VmafPictureConfiguration pcfg = { .pic_params = { r.w, r.h, 8, VMAF_PIX_FMT_YUV420P }, .pic_cnt = 4 };
    EXPECT(vmaf_preallocate_pictures(ctx, pcfg) == 0, "preallocate");

    unsigned n = 0;
    for (;; n++) {
        VmafPicture pr, pd;
        int err = n % 2 ? vmaf_fetch_preallocated_picture(ctx, &pr) | vmaf_fetch_preallocated_picture(ctx, &pd)
                        : vmaf_picture_alloc(&pr, VMAF_PIX_FMT_YUV420P, 8, r.w, r.h)
                          | vmaf_picture_alloc(&pd, VMAF_PIX_FMT_YUV420P, 8, d.w, d.h);
        EXPECT(err == 0, "picture %u", n);
        if (!y4m_read(&r, &pr) || !y4m_read(&d, &pd)) {
            vmaf_picture_unref(&pr);
            vmaf_picture_unref(&pd);
            break;
        }
        EXPECT(vmaf_read_pictures(ctx, &pr, &pd, n) == 0, "read %u", n);
        if (n == 5) { /* mid-run: frame 2 has a score, or is refused as not complete (threads) */
            double s;
            int err = vmaf_score_at_index(ctx, model, &s, 2);
            EXPECT(err == 0 || (err == -EINVAL && strstr(vmafx_error_message(), "frame 2 is not complete yet")),
                   "score at 2 mid-run: %s", vmafx_error_message());
            REFUSED(vmaf_score_at_index(ctx, model, &s, 9), "frame 9 is not complete yet");
        }
    }
    fclose(r.f);
    fclose(d.f);
    EXPECT(vmaf_read_pictures(ctx, NULL, NULL, 0) == 0, "flush");

    const int methods[] = { VMAF_POOL_METHOD_MIN, VMAF_POOL_METHOD_MAX, VMAF_POOL_METHOD_MEAN,
                            VMAF_POOL_METHOD_HARMONIC_MEAN };
    for (int m = 0; m < 4; m++) {
        double s, p;
        EXPECT(vmaf_score_pooled(ctx, model, methods[m], &s, 0, n - 1) == 0, "pooled");
        EXPECT(vmaf_feature_score_pooled(ctx, "psnr_y", methods[m], &p, 0, n - 1) == 0, "psnr pooled");
        printf("pooled %d: vmaf %.17g psnr_y %.17g\n", methods[m], s, p);
    }
    double s0, f0;
    EXPECT(vmaf_score_at_index(ctx, model, &s0, 0) == 0, "score at 0");
    EXPECT(vmaf_feature_score_at_index(ctx, "integer_adm2", &f0, 0) == 0, "adm2 at 0");
    printf("frame 0: vmaf %.17g integer_adm2 %.17g; %u frames\n", s0, f0, n);

    static const char *ext[] = { "", "xml", "json", "csv", "sub" };
    char path[4096];
    for (int f = VMAF_OUTPUT_FORMAT_XML; f <= VMAF_OUTPUT_FORMAT_SUB; f++) {
        snprintf(path, sizeof path, "%s.%s", out, ext[f]);
        EXPECT(vmaf_write_output(ctx, path, f) == 0, "write %s", path);
    }
    vmaf_model_destroy(model);
    EXPECT(vmaf_close(ctx) == 0, "close");
}

/* A bootstrap collection over the first frames. */
static void collection(const char *ref_path, const char *dist_path, const char *out)
{
    Y4m r, d;
    if (y4m_open(&r, ref_path) || y4m_open(&d, dist_path)) {
        EXPECT(0, "open the pair %s %s", ref_path, dist_path);
        return;
    }
    VmafConfiguration cfg = { .log_level = VMAF_LOG_LEVEL_ERROR };
    VmafContext *ctx;
    VmafModel *model;
    VmafModelCollection *mc;
    VmafModelConfig mcfg = { .name = "vmaf_b" };
    EXPECT(vmaf_init(&ctx, cfg) == 0, "init");
    EXPECT(vmaf_model_collection_load(&model, &mc, &mcfg, "vmaf_b_v0.6.3") == 0, "collection");
    EXPECT(vmaf_use_features_from_model_collection(ctx, mc) == 0, "use collection");
    unsigned n = 0;
    for (; n < 4; n++) {
        VmafPicture pr, pd;
        vmaf_picture_alloc(&pr, VMAF_PIX_FMT_YUV420P, 8, r.w, r.h);
        vmaf_picture_alloc(&pd, VMAF_PIX_FMT_YUV420P, 8, d.w, d.h);
        y4m_read(&r, &pr);
        y4m_read(&d, &pd);
        EXPECT(vmaf_read_pictures(ctx, &pr, &pd, n) == 0, "read %u", n);
    }
    fclose(r.f);
    fclose(d.f);
    EXPECT(vmaf_read_pictures(ctx, NULL, NULL, 0) == 0, "flush");
    VmafModelCollectionScore cs;
    double s;
    EXPECT(vmaf_score_pooled_model_collection(ctx, mc, VMAF_POOL_METHOD_MEAN, &cs, 0, n - 1) == 0, "pooled collection");
    EXPECT(vmaf_score_pooled(ctx, model, VMAF_POOL_METHOD_MEAN, &s, 0, n - 1) == 0, "pooled first member");
    printf("collection: vmaf_b %.17g bagging %.17g stddev %.17g ci %.17g %.17g\n", s,
           cs.bootstrap.bagging_score, cs.bootstrap.stddev, cs.bootstrap.ci.p95.lo, cs.bootstrap.ci.p95.hi);
    char path[4096];
    snprintf(path, sizeof path, "%s-b.json", out);
    EXPECT(vmaf_write_output(ctx, path, VMAF_OUTPUT_FORMAT_JSON) == 0, "write");
    double f0;
    EXPECT(vmaf_import_feature_score(ctx, "external", 1.5, 0) == 0, "import");
    REFUSED(vmaf_import_feature_score(ctx, "external", 2.5, 0), "already has a score");
    EXPECT(vmaf_feature_score_at_index(ctx, "external", &f0, 0) == 0 && f0 == 1.5, "imported");
    vmaf_model_destroy(model);
    vmaf_model_collection_destroy(mc);
    vmaf_close(ctx);
}

static unsigned releases = 0;
static void count_release(void *user) { (void)user; releases++; }

/* vmafx.h's own API: refusals name what was wrong, and a refused frame's
 * release callback runs before vmafx_submit returns, exactly once. */
static void vmafx_refusals(void)
{
    const char *models[] = { "version=vmaf_v0.6.1" };
    VmafxConfig cfg = { .size = sizeof cfg, .width = 64, .height = 64,
                        .pix_fmt = VMAF_PIX_FMT_YUV420P, .bpc = 8, .models = models, .n_models = 1 };
    VmafxContext *ctx = NULL;
    VmafxConfig small = cfg;
    small.size = 8;
    REFUSED(vmafx_context_new(&ctx, &small), "cfg->size 8");
    VmafxConfig bad = cfg;
    bad.backend = 7;
    REFUSED(vmafx_context_new(&ctx, &bad), "backend 7");
    const char *two[] = { "version=vmaf_v0.6.1", NULL };
    bad = cfg;
    bad.models = two;
    bad.n_models = 2;
    REFUSED(vmafx_context_new(&ctx, &bad), "models[1] is NULL");
    const char *features[] = { "psnr=no_such_option=1" };
    bad = cfg;
    bad.features = features;
    bad.n_features = 1;
    REFUSED(vmafx_context_new(&ctx, &bad), "no_such_option");
    EXPECT(vmafx_context_new(&ctx, &cfg) == 0, "context: %s", vmafx_error_message());

    static unsigned char pixels[64 * 64 * 3 / 2];
    VmafxFrame f = { .size = sizeof f, .width = 64, .height = 64, .pixel_format = VMAFX_PIXEL_FORMAT_PLANAR,
                     .memory = VMAFX_MEMORY_HOST, .host = pixels, .bytes = sizeof pixels,
                     .planes = { { 0, 64 }, { 4096, 32 }, { 5120, 32 } },
                     .release = count_release };
    VmafxFrame g = f;
    g.host = NULL;
    releases = 0;
    REFUSED(vmafx_submit(ctx, &f, &g), "dist: memory is VMAFX_MEMORY_HOST but host is NULL");
    EXPECT(releases == 2, "both frames released on a refusal (%u)", releases);
    g = f;
    g.pixel_format = 42;
    releases = 0;
    REFUSED(vmafx_submit(ctx, &g, &f), "ref: pixel_format 42");
    EXPECT(releases == 2, "both frames released on a refusal (%u)", releases);
    g = f;
    g.bytes = 100; /* smaller than its planes */
    releases = 0;
    REFUSED(vmafx_submit(ctx, &f, &g), "host");
    EXPECT(releases == 2, "both frames released when the frame's checks refuse it (%u)", releases);
    double s;
    REFUSED(vmafx_score_pooled(ctx, "vmaf", VMAF_POOL_METHOD_MEAN, &s), "call vmafx_finish first");
    releases = 0;
    EXPECT(vmafx_submit(ctx, &f, &f) == 0, "submit: %s", vmafx_error_message());
    EXPECT(vmafx_poll(ctx) == 0, "poll: %s", vmafx_error_message());
    EXPECT(vmafx_finish(ctx) == 0, "finish");
    EXPECT(releases == 2, "released after scoring (%u)", releases);
    EXPECT(vmafx_score_pooled(ctx, "vmaf", VMAF_POOL_METHOD_MEAN, &s) == 0, "pooled");
    REFUSED(vmafx_score_at(ctx, "vmaf", 1, &s), "no score 'vmaf' at frame 1");
    REFUSED(vmafx_submit(ctx, &f, &f), "finished");
    REFUSED(vmafx_poll(ctx), "finished");
    REFUSED(vmafx_poll(NULL), "NULL");
    EXPECT(vmafx_context_free(ctx) == 0, "free");
    REFUSED(vmafx_context_free(ctx), "not a live handle");
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: api REF.y4m DIST.y4m OUT_PREFIX\n");
        return 2;
    }
    printf("libvmaf %s (vmafx)\n", vmaf_version());
    refusals();
    vmafx_refusals();
    run(argv[1], argv[2], argv[3]);
    collection(argv[1], argv[2], argv[3]);
    printf("%s: %d failures\n", failures ? "FAILED" : "ok", failures);
    return failures != 0;
}
