/* train_internal.h - trainer entry points for tests and tools, not in the public
 * API: exact gradients and parameter upload, used by the gradient check and the
 * cuda-vs-cpu parity tests. */
#ifndef FFNN_TRAIN_INTERNAL_H
#define FFNN_TRAIN_INTERNAL_H

#include "ffnn.h"

/* Loss (the batch mean, accumulated in double over float32 rows) and gradient
 * of the current device parameters on training samples rows[0..batch) (host
 * indices). grads: host [parameter_count] or NULL. Parameters are not updated. */
ffnn_status ffnn_trainer_gradient(ffnn_trainer *t, const int32_t *rows, size_t batch,
                                  double *loss, float *grads);

/* Copy the model's (host) parameters to the device, e.g. after editing them. */
ffnn_status ffnn_trainer_upload_model(ffnn_trainer *t);

#endif
