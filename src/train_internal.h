/* train_internal.h - trainer entry points for tests and tools, not in the public
 * API: exact gradients and parameter upload, used by the gradient check and the
 * cuda-vs-cpu parity tests; the optimizer state, for checkpoints. */
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

/* The optimizer state (what a checkpoint must save besides the parameters):
 * ffnn_optimizer_state_count(cfg.optimizer) * parameter_count floats, laid out
 * like the parameter arena, state after state (sgd: none; momentum: buf; adam:
 * m then v). *count: in, the room at host_state; out, the floats of the state.
 * host_state NULL: only *count is set. FFNN_ERR_INVALID_ARGUMENT when the room
 * is too small. */
ffnn_status ffnn_trainer_optimizer_state(ffnn_trainer *t, float *host_state, size_t *count);

/* Optimizer steps taken so far (Adam's t; momentum's buffer is live once > 0). */
uint64_t ffnn_trainer_optimizer_steps(const ffnn_trainer *t);

#endif
