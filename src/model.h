/* model.h - the in-memory layout of ffnn_model (private to the library). */
#ifndef FFNN_MODEL_H
#define FFNN_MODEL_H

#include <stddef.h>

#include "ffnn.h"

/* One dense layer: y = act(x W^T + b). Offsets index the model's parameter arena. */
typedef struct ffnn_dense_layer {
    size_t in, out;          /* fan_in, width                                  */
    ffnn_activation act;
    int has_bias;
    size_t weight_offset;    /* W [out, in] at params + weight_offset           */
    size_t bias_offset;      /* b [out]     at params + bias_offset (if has_bias) */
} ffnn_dense_layer;

struct ffnn_model {
    size_t input_size;       /* features per sample                            */
    int layer_count;
    ffnn_dense_layer *layers;/* [layer_count], owned                           */
    size_t parameter_count;
    float *params;           /* [parameter_count], owned: per layer W then b    */
};

/* Parse an architecture string into input_size and a layer array (offsets
 * filled in; *layers owned by the caller). Errors: FFNN_ERR_PARSE with the
 * 1-based column and token; FFNN_ERR_NO_MEMORY. */
ffnn_status ffnn_arch_parse(const char *arch, size_t *input_size,
                            ffnn_dense_layer **layers, int *layer_count,
                            size_t *parameter_count);

/* Print the canonical form of an architecture (inverse of ffnn_arch_parse). */
void ffnn_arch_format(size_t input_size, const ffnn_dense_layer *layers,
                      int layer_count, char *buf, size_t buf_size);

#endif
