/* dataset.h - the in-memory layout of ffnn_dataset (private to the library). */
#ifndef FFNN_DATASET_H
#define FFNN_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "ffnn.h"

struct ffnn_dataset {
    size_t count;     /* samples                                   */
    size_t features;  /* values per sample (rows * cols for images) */
    size_t rows, cols;/* image shape; rows = 1, cols = features for flat data */
    int classes;      /* max label + 1                             */
    uint8_t *images;  /* [count, features], owned                  */
    uint8_t *labels;  /* [count], owned                            */
};

/* Allocate an empty data set of the given shape (images/labels uninitialised,
 * classes 0). Errors: FFNN_ERR_NO_MEMORY, FFNN_ERR_INVALID_ARGUMENT on overflow. */
ffnn_status ffnn_dataset_alloc(size_t count, size_t rows, size_t cols,
                               ffnn_dataset **out);

#endif
