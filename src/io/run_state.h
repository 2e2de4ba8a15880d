/* run_state.h - what a checkpoint file holds (io/checkpoint.c writes and reads
 * it; docs/FORMATS.md, "Checkpoints"): a run's model, configuration, training-set
 * identity, position and optimizer state, as plain data. io knows nothing of the
 * trainer: the trainer fills one to save and consumes one to resume
 * (train/checkpoint.c). Private to the library. */
#ifndef FFNN_IO_RUN_STATE_H
#define FFNN_IO_RUN_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "ffnn.h"
#include "core/model.h"
#include "core/schedule.h"

/* The longest ffnn_version a checkpoint may record, NUL included (the room of
 * ffnn_checkpoint_info.ffnn_version). */
enum { FFNN_RUN_STATE_VERSION_MAX = 64 };

typedef struct ffnn_run_state {
    /* the model: its architecture (layers, parameter_count; model->params is
     * not read by ffnn_checkpoint_write) and the parameters to save */
    const ffnn_model *model;
    const float *params;        /* [model->parameter_count]; read: model->params   */

    /* the configuration a run must share to continue exactly; a file records
     * loss, optimizer, learning_rate, batch_size, seed, shuffle, epochs, and
     * momentum + nesterov (momentum) or beta1 + beta2 + epsilon (adam) */
    ffnn_train_config cfg;

    /* the training set, as checked on resume */
    size_t train_count;         /* samples                                          */
    uint32_t train_crc32;       /* zlib CRC-32 of its features, then its targets    */
    size_t steps_per_epoch;     /* ceil(train_count / cfg.batch_size); floor with drop_last */

    /* the position */
    int epoch;                  /* in progress or last finished, 1-based; 0 before
                                   the first                                        */
    size_t step;                /* steps of that epoch done                         */
    uint64_t optimizer_steps;   /* (epoch - 1) * steps_per_epoch + step; 0 at epoch 0 */
    uint64_t epoch_rng[4];      /* xoshiro256** state of the shuffle generator when
                                   that epoch began                                 */
    const double *step_losses;  /* [step] that epoch's per-step mean losses         */

    /* the optimizer state: ffnn_optimizer_state_count(cfg.optimizer) arenas laid
     * out like the parameters, state after state (momentum: buf; adam: m, v) */
    const float *opt_state;     /* [state_count * model->parameter_count]; NULL for sgd */
    const float *ema;           /* [model->parameter_count] the EMA weights when
                                   cfg.ema_decay > 0 (tensors ema.layers.<i>.<weight|bias>);
                                   read: after opt_state in its allocation       */

    /* reduce-on-plateau's state (recorded with lr_schedule plateau) */
    ffnn_plateau plateau;
    int plateau_epoch;          /* the last epoch the plateau state has seen        */

    /* early stopping's state (recorded with cfg.early_stopping > 0; read: zero
     * when the file has none) */
    int es_epoch;               /* the last epoch it has seen                       */
    int es_best_epoch;          /* the best epoch so far, 0: none yet               */
    double es_best_loss;        /* its metric (finite; ignored when es_best_epoch 0) */
    const float *es_best;       /* [model->parameter_count] its weights (tensors
                                   early_stopping.best.layers.<i>.<weight|bias>) when
                                   es_best_epoch > 0, else NULL; read: after ema in
                                   opt_state's allocation                        */

    /* read: the writer's version ("" when the file has none); write: ignored,
     * FFNN_VERSION is written */
    char ffnn_version[FFNN_RUN_STATE_VERSION_MAX];
} ffnn_run_state;

/* Write s to path atomically (io/atomic_file.c: on failure path is left as it
 * was). Refuses NaN/Inf in s->params, s->opt_state, s->ema or s->es_best
 * (FFNN_ERR_NUMERIC, naming the tensor and element; nothing written). Errors: FFNN_ERR_IO,
 * FFNN_ERR_NO_MEMORY, FFNN_ERR_NUMERIC. */
ffnn_status ffnn_checkpoint_write(const char *path, const ffnn_run_state *s);

/* Read the checkpoint at path into *s, with every check of docs/FORMATS.md
 * (safetensors layout, metadata keys and values, a reachable position, every
 * tensor and its shape, finite values) before any allocation sized from the
 * file. On success s owns a new model (parameters filled in, s->params ==
 * s->model->params), step_losses and one block holding those of opt_state, ema
 * and es_best the file has, in that order: release them with
 * ffnn_run_state_free. s->cfg: base (NULL: all zero) with the fields the file
 * records. On failure *s is left empty (nothing to free). */
ffnn_status ffnn_checkpoint_read(const char *path, const ffnn_train_config *base,
                                 ffnn_run_state *s);

/* Free what ffnn_checkpoint_read allocated and empty *s (NULL or empty: no-op).
 * Only for a state filled by ffnn_checkpoint_read. */
void ffnn_run_state_free(ffnn_run_state *s);

/* The shortest decimal that reads back as f (strtof), e.g. 0.01f -> "0.01": how
 * a checkpoint writes its float settings. size: 16 is always enough. */
void ffnn_checkpoint_float_text(float f, char *buf, size_t size);

#endif
