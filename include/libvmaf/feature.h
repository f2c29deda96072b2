/* vmafx: libvmaf 3.2-compatible C API. Feature option dictionaries.
 * SPDX-License-Identifier: BSD-2-Clause-Patent */
#ifndef VMAFX_LIBVMAF_FEATURE_H
#define VMAFX_LIBVMAF_FEATURE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Options for one feature extractor: key/value strings. */
typedef struct VmafFeatureDictionary VmafFeatureDictionary;

/* Sets key to val, creating *dict when it is NULL. 0 or -errno. */
int vmaf_feature_dictionary_set(VmafFeatureDictionary **dict, const char *key,
                                const char *val);

/* Frees *dict and sets it to NULL. 0 or -errno. */
int vmaf_feature_dictionary_free(VmafFeatureDictionary **dict);

#ifdef __cplusplus
}
#endif

#endif
