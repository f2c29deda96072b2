/* The ABI check: compiled against a set of libvmaf headers (libvmaf 3.2's
 * own, or vmafx's), prints the layout table of the structs and enums those
 * headers declare in vmafx_abi_layout()'s format, and compares it with the
 * table of the library it is linked with. Exit 0 only if they are equal. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <libvmaf/libvmaf.h>
#include <libvmaf/libvmaf_cuda.h>

const char *vmafx_abi_layout(void); /* vmafx.h: not among libvmaf's headers */

#define ROW(name, value) n += snprintf(buf + n, sizeof(buf) - n, "%s %ld\n", name, (long)(value))
#define OFF(type, field) ROW(#type "." #field, offsetof(type, field))

int main(void)
{
    static char buf[8192];
    int n = 0;
    ROW("VmafConfiguration.size", sizeof(VmafConfiguration));
    OFF(VmafConfiguration, log_level);
    OFF(VmafConfiguration, n_threads);
    OFF(VmafConfiguration, n_subsample);
    OFF(VmafConfiguration, cpumask);
    OFF(VmafConfiguration, gpumask);
    ROW("VmafPicture.size", sizeof(VmafPicture));
    OFF(VmafPicture, pix_fmt);
    OFF(VmafPicture, bpc);
    OFF(VmafPicture, w);
    OFF(VmafPicture, h);
    OFF(VmafPicture, stride);
    OFF(VmafPicture, data);
    OFF(VmafPicture, ref);
    OFF(VmafPicture, priv);
    ROW("VmafPictureConfiguration.size", sizeof(VmafPictureConfiguration));
    OFF(VmafPictureConfiguration, pic_params.w);
    OFF(VmafPictureConfiguration, pic_params.h);
    OFF(VmafPictureConfiguration, pic_params.bpc);
    OFF(VmafPictureConfiguration, pic_params.pix_fmt);
    OFF(VmafPictureConfiguration, pic_cnt);
    ROW("VmafModelConfig.size", sizeof(VmafModelConfig));
    OFF(VmafModelConfig, name);
    OFF(VmafModelConfig, flags);
    ROW("VmafModelCollectionScore.size", sizeof(VmafModelCollectionScore));
    OFF(VmafModelCollectionScore, type);
    OFF(VmafModelCollectionScore, bootstrap.bagging_score);
    OFF(VmafModelCollectionScore, bootstrap.stddev);
    OFF(VmafModelCollectionScore, bootstrap.ci.p95.lo);
    OFF(VmafModelCollectionScore, bootstrap.ci.p95.hi);
    ROW("VmafCudaConfiguration.size", sizeof(VmafCudaConfiguration));
    OFF(VmafCudaConfiguration, cu_ctx);
    ROW("VmafCudaPictureConfiguration.size", sizeof(VmafCudaPictureConfiguration));
    OFF(VmafCudaPictureConfiguration, pic_params.w);
    OFF(VmafCudaPictureConfiguration, pic_params.pix_fmt);
    OFF(VmafCudaPictureConfiguration, pic_prealloc_method);
    ROW("VMAF_LOG_LEVEL_ERROR", VMAF_LOG_LEVEL_ERROR);
    ROW("VMAF_OUTPUT_FORMAT_XML", VMAF_OUTPUT_FORMAT_XML);
    ROW("VMAF_OUTPUT_FORMAT_JSON", VMAF_OUTPUT_FORMAT_JSON);
    ROW("VMAF_OUTPUT_FORMAT_CSV", VMAF_OUTPUT_FORMAT_CSV);
    ROW("VMAF_OUTPUT_FORMAT_SUB", VMAF_OUTPUT_FORMAT_SUB);
    ROW("VMAF_POOL_METHOD_MIN", VMAF_POOL_METHOD_MIN);
    ROW("VMAF_POOL_METHOD_MAX", VMAF_POOL_METHOD_MAX);
    ROW("VMAF_POOL_METHOD_MEAN", VMAF_POOL_METHOD_MEAN);
    ROW("VMAF_POOL_METHOD_HARMONIC_MEAN", VMAF_POOL_METHOD_HARMONIC_MEAN);
    ROW("VMAF_PIX_FMT_YUV420P", VMAF_PIX_FMT_YUV420P);
    ROW("VMAF_PIX_FMT_YUV422P", VMAF_PIX_FMT_YUV422P);
    ROW("VMAF_PIX_FMT_YUV444P", VMAF_PIX_FMT_YUV444P);
    ROW("VMAF_PIX_FMT_YUV400P", VMAF_PIX_FMT_YUV400P);
    ROW("VMAF_MODEL_FLAG_DISABLE_CLIP", VMAF_MODEL_FLAG_DISABLE_CLIP);
    ROW("VMAF_MODEL_FLAG_ENABLE_TRANSFORM", VMAF_MODEL_FLAG_ENABLE_TRANSFORM);
    ROW("VMAF_MODEL_FLAG_DISABLE_TRANSFORM", VMAF_MODEL_FLAG_DISABLE_TRANSFORM);
    ROW("VMAF_MODEL_COLLECTION_SCORE_BOOTSTRAP", VMAF_MODEL_COLLECTION_SCORE_BOOTSTRAP);

    const char *ours = vmafx_abi_layout();
    if (strcmp(buf, ours) != 0) {
        printf("ABI MISMATCH\n--- these headers:\n%s--- the library:\n%s", buf, ours);
        return 1;
    }
    int rows = 0;
    for (const char *c = buf; *c; c++) rows += *c == '\n';
    printf("%s", buf);
    printf("ABI: %d sizes, offsets and enum values equal to the library's\n", rows);
    return 0;
}
