/* train_internal.h - trainer entry points for tests and tools, not in the public
 * API: exact gradients and parameter upload, used by the gradient check and the
 * cuda-vs-cpu parity tests; the optimizer state and the position in the run,
 * for checkpoints (io/checkpoint.c). */
#ifndef FFNN_TRAIN_INTERNAL_H
#define FFNN_TRAIN_INTERNAL_H

#include "core/schedule.h"
#include "ffnn.h"

/* Loss (the batch mean, accumulated in double over float32 rows) and gradient
 * of the current device parameters on training samples rows[0..batch) (host
 * indices). grads: host [parameter_count] or NULL. Parameters are not updated. */
ffnn_status ffnn_trainer_gradient(ffnn_trainer *t, const int32_t *rows, size_t batch,
                                  double *loss, float *grads);

/* The same with the dropout masks of optimizer step dropout_step (0: none, as
 * ffnn_trainer_gradient): the gradient of the loss with those masks fixed. */
ffnn_status ffnn_trainer_gradient_dropout(ffnn_trainer *t, const int32_t *rows, size_t batch,
                                          uint64_t dropout_step, double *loss, float *grads);

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

/* ---- checkpoints (io/checkpoint.c) ---- */

/* Where a trainer stands: with the parameters and the optimizer state, all that
 * continuing the run exactly needs. */
typedef struct ffnn_trainer_state {
    int epoch;                /* the epoch in progress or last finished, 1-based;
                                 0 before the first                             */
    size_t step;              /* steps of that epoch done (steps per epoch: finished) */
    uint64_t optimizer_steps; /* optimizer steps taken: (epoch - 1) * steps per
                                 epoch + step (0 at epoch 0)                    */
    uint64_t epoch_rng[4];    /* the shuffle generator's xoshiro256** state when
                                 that epoch began (at epoch 0: the seeded state) */
    const double *step_losses;/* [step] that epoch's per-step mean losses       */
    ffnn_plateau plateau;     /* reduce-on-plateau's state                     */
    int plateau_epoch;        /* the last epoch it has seen                    */
    int es_epoch;             /* early stopping: the last epoch it has seen,   */
    int es_best_epoch;        /* the best epoch (0: none yet),                 */
    double es_best_loss;      /* its metric                                    */
    const float *es_best;     /* and its weights [parameter_count] (NULL when
                                 es_best_epoch is 0 or early stopping is off)  */
} ffnn_trainer_state;

/* Read back the losses of the steps not read back yet, then fill *s
 * (step_losses and es_best owned by the trainer, valid until its next step).
 * Refuses with FFNN_ERR_NUMERIC, naming the epoch and step, when any loss of the
 * run so far was NaN or Inf. */
ffnn_status ffnn_trainer_get_state(ffnn_trainer *t, ffnn_trainer_state *s);

/* The EMA weights (ema_decay > 0) into host [parameter_count]. */
ffnn_status ffnn_trainer_download_ema(ffnn_trainer *t, float *host);

/* Continue from *s: params [parameter_count] to the device and into the model,
 * opt_state [state_count * parameter_count] (ignored for sgd), ema
 * [parameter_count] (ema_decay > 0; else ignored), the counters, the plateau state,
 * early stopping's state (with early_stopping > 0; else ignored: es_best_epoch 0
 * starts it afresh) and the epoch's permutation regenerated from epoch_rng.
 * Checks the counters against this trainer's steps per epoch
 * (FFNN_ERR_INVALID_ARGUMENT). */
ffnn_status ffnn_trainer_set_state(ffnn_trainer *t, const float *params, const float *opt_state,
                                   const float *ema, const ffnn_trainer_state *s);

/* The trainer's model, configuration and training data (owned elsewhere). */
ffnn_model *ffnn_trainer_model(const ffnn_trainer *t);
const ffnn_train_config *ffnn_trainer_config(const ffnn_trainer *t);
const ffnn_dataset *ffnn_trainer_train_data(const ffnn_trainer *t);

/* zlib's CRC-32 of the training set's bytes: features (uint8 images or float32
 * values) [count, features], then targets (uint8 labels [count] or float32
 * rows [count, target_width]); computed once per trainer. */
uint32_t ffnn_trainer_data_crc32(ffnn_trainer *t);

/* The device parameters into host [parameter_count] (the model is untouched). */
ffnn_status ffnn_trainer_download_parameters(ffnn_trainer *t, float *host);

#endif
