/* dataset.h - the in-memory layout of ffnn_dataset (private to the library). */
#ifndef FFNN_DATASET_H
#define FFNN_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "ffnn.h"

/* Features are either uint8 (images, fed to a network as value/255) or float32;
 * targets are either uint8 class labels or float32 rows. Exactly one pointer of
 * each pair is set. */
struct ffnn_dataset {
    size_t count;        /* samples                                      */
    size_t features;     /* values per sample (rows * cols for images)   */
    size_t rows, cols;   /* image shape; rows = 1, cols = features for flat data */
    int classes;         /* labels: max label + 1; float targets: 0      */
    uint8_t *images;     /* [count, features] uint8 features, owned; or NULL */
    float *values;       /* [count, features] float32 features, owned; or NULL */
    int32_t *labels;     /* [count] class labels in [0, classes), owned; or NULL */
    float *targets;      /* [count, target_width] float32 targets, owned; or NULL */
    size_t target_width; /* floats per target row; 0 with class labels  */
    char **class_names;  /* [classes] the original text of each class (CSV), owned;
                            or NULL: the labels are the classes' own numbers */
    struct ffnn_table *table; /* the columns behind the features (data/table.h),
                            owned, or NULL: plain numbers                        */
    float *weights;      /* [count] per-sample weights >= 0, owned; or NULL: all 1 */
    void *map;           /* a read-only file mapping (mmap PROT_READ, MAP_PRIVATE) that
                            values points into (npy.c: float32 .npy read in place),
                            owned: munmap'd on free, values not free'd; or NULL      */
    size_t map_size;     /* bytes of map                                      */
};

/* Make ds's float features an owned malloc'd copy when they point into a
 * read-only mapping (before writing to them); a no-op otherwise.
 * Errors: FFNN_ERR_NO_MEMORY (ds unchanged). */
ffnn_status ffnn_dataset_own_values(ffnn_dataset *ds);

/* Give ds the class names names[0..count) (copied, sanitised for printing);
 * count must be ds->classes. Errors: FFNN_ERR_NO_MEMORY. */
ffnn_status ffnn_dataset_set_class_names(ffnn_dataset *ds, const char *const *names,
                                         size_t count);

/* Copy the printable part of the untrusted text s[0..n) into out (size out_size,
 * NUL-terminated): bytes outside 0x20-0x7e become '?', and more than max bytes
 * end in "...". Used wherever a field of a file goes into a message. */
void ffnn_printable(const char *s, size_t n, size_t max, char *out, size_t out_size);

/* npz.c: the first of names[] (NULL-terminated) that the .npz (zip) file at path
 * holds, into *out [*out_size] (malloc'd) and *found; *out NULL when none is
 * there. Errors: FFNN_ERR_IO, FFNN_ERR_FORMAT (a damaged or ZIP64 archive, a
 * method other than stored or deflate, a CRC-32 mismatch), FFNN_ERR_NO_MEMORY. */
ffnn_status ffnn_npz_member(const char *path, const char *const *names, unsigned char **out,
                            size_t *out_size, const char **found);

/* Allocate an empty data set of the given shape with uint8 images and uint8
 * labels (contents uninitialised, classes 0). Errors: FFNN_ERR_NO_MEMORY,
 * FFNN_ERR_INVALID_ARGUMENT on a zero size or overflow. */
ffnn_status ffnn_dataset_alloc(size_t count, size_t rows, size_t cols,
                               ffnn_dataset **out);

/* The general form: float_features 1 for float32 features (rows = 1, cols =
 * features), 0 for uint8; target_width 0 for uint8 labels, else float32 targets
 * [count, target_width]. */
ffnn_status ffnn_dataset_alloc_kind(size_t count, size_t rows, size_t cols,
                                    int float_features, size_t target_width,
                                    ffnn_dataset **out);

/* The noise-free function of synth:regression (synth.c) at one sample x [32],
 * in double; exposed for the tests. */
double ffnn_synth_regression_function(const float *x);

#endif
