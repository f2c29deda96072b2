/* vmafx: libvmaf 3.2-compatible C API. Contexts, scoring and results.
 *
 * Every function returns 0 or a negative errno (-EINVAL for bad arguments
 * or calls in the wrong order); vmafx_error_message() (vmafx.h) says what
 * was wrong. A context is used by one thread at a time; pictures may be
 * unreferenced from any thread.
 * SPDX-License-Identifier: BSD-2-Clause-Patent */
#ifndef VMAFX_LIBVMAF_H
#define VMAFX_LIBVMAF_H

#include <stdint.h>
#include <stdio.h>

#include "libvmaf/feature.h"
#include "libvmaf/model.h"
#include "libvmaf/picture.h"

#ifdef __cplusplus
extern "C" {
#endif

enum VmafLogLevel {
    VMAF_LOG_LEVEL_NONE = 0,
    VMAF_LOG_LEVEL_ERROR = 1,
    VMAF_LOG_LEVEL_WARNING = 2,
    VMAF_LOG_LEVEL_INFO = 3,
    VMAF_LOG_LEVEL_DEBUG = 4,
};

enum VmafOutputFormat {
    VMAF_OUTPUT_FORMAT_NONE = 0,
    VMAF_OUTPUT_FORMAT_XML = 1,
    VMAF_OUTPUT_FORMAT_JSON = 2,
    VMAF_OUTPUT_FORMAT_CSV = 3,
    VMAF_OUTPUT_FORMAT_SUB = 4,
};

enum VmafPoolingMethod {
    VMAF_POOL_METHOD_UNKNOWN = 0,
    VMAF_POOL_METHOD_MIN = 1,
    VMAF_POOL_METHOD_MAX = 2,
    VMAF_POOL_METHOD_MEAN = 3,
    VMAF_POOL_METHOD_HARMONIC_MEAN = 4,
    VMAF_POOL_METHOD_NB
};

/* n_threads: worker threads (0: the calling thread). n_subsample: score
 * every Nth frame. cpumask: instruction sets not to use (8: AVX2, 16 and
 * 32: AVX-512; scores do not depend on it). gpumask: nonzero keeps work
 * off the GPU. */
typedef struct VmafConfiguration {
    enum VmafLogLevel log_level;
    unsigned n_threads;
    unsigned n_subsample;
    uint64_t cpumask;
    uint64_t gpumask;
} VmafConfiguration;

typedef struct VmafContext VmafContext;

int vmaf_init(VmafContext **vmaf, VmafConfiguration cfg);

/* Registration: before the first vmaf_read_pictures. */
int vmaf_use_features_from_model(VmafContext *vmaf, VmafModel *model);
int vmaf_use_features_from_model_collection(VmafContext *vmaf,
                                            VmafModelCollection *model_collection);
/* Takes ownership of opts_dict on success. */
int vmaf_use_feature(VmafContext *vmaf, const char *feature_name,
                     VmafFeatureDictionary *opts_dict);

int vmaf_import_feature_score(VmafContext *vmaf, const char *feature_name,
                              double value, unsigned index);

/* Takes both pictures (do not unref them after a successful call) as frame
 * index: 0, 1, 2, ... in order. ref and dist both NULL: flush. */
int vmaf_read_pictures(VmafContext *vmaf, VmafPicture *ref, VmafPicture *dist,
                       unsigned index);

int vmaf_score_at_index(VmafContext *vmaf, VmafModel *model, double *score,
                        unsigned index);
int vmaf_score_at_index_model_collection(VmafContext *vmaf,
                                         VmafModelCollection *model_collection,
                                         VmafModelCollectionScore *score,
                                         unsigned index);
int vmaf_feature_score_at_index(VmafContext *vmaf, const char *feature_name,
                                double *score, unsigned index);

/* Pooled over index_low..index_high (inclusive). */
int vmaf_score_pooled(VmafContext *vmaf, VmafModel *model,
                      enum VmafPoolingMethod pool_method, double *score,
                      unsigned index_low, unsigned index_high);
int vmaf_score_pooled_model_collection(VmafContext *vmaf,
                                       VmafModelCollection *model_collection,
                                       enum VmafPoolingMethod pool_method,
                                       VmafModelCollectionScore *score,
                                       unsigned index_low, unsigned index_high);
int vmaf_feature_score_pooled(VmafContext *vmaf, const char *feature_name,
                              enum VmafPoolingMethod pool_method, double *score,
                              unsigned index_low, unsigned index_high);

typedef struct VmafPictureConfiguration {
    struct {
        unsigned w, h;
        unsigned bpc;
        enum VmafPixelFormat pix_fmt;
    } pic_params;
    unsigned pic_cnt;
} VmafPictureConfiguration;

/* A pool of pic_cnt pictures; fetched pictures go back when unreferenced
 * unread (a read picture is replaced by a new one). */
int vmaf_preallocate_pictures(VmafContext *vmaf, VmafPictureConfiguration cfg);
int vmaf_fetch_preallocated_picture(VmafContext *vmaf, VmafPicture *pic);

int vmaf_close(VmafContext *vmaf);

/* Writes every frame's scores, pooled scores and aggregates as the vmaf
 * tool does. Numbers as libvmaf prints them; the environment variable
 * VMAFX_OUTPUT_PRECISION=max prints every double losslessly (%.17g). */
int vmaf_write_output(VmafContext *vmaf, const char *output_path,
                      enum VmafOutputFormat fmt);

/* "3.2.0": the libvmaf release whose API and scores this implements. */
const char *vmaf_version(void);

#ifdef __cplusplus
}
#endif

#endif
