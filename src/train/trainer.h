/* trainer.h - the trainer's state, private to src/train. The files, each calling
 * only those below it:
 *   create.c      ffnn_trainer_create: one strategy, or tune's measurement
 *   tune.c        the measured choice (the candidates: strategy/strategy.h)
 *   trainer.c     lifecycle: backend, strategy (through the registry), buffers
 *   checkpoint.c  checkpoint files
 *   state.c       run state for checkpoints, optimizer state, early stopping
 *   epoch.c       steps, epochs and loss read-back
 *   eval.c        evaluation, the gradient hook, the model's sync
 *   base.c        device memory, the data on the device, accessors, row means */
#ifndef FFNN_TRAIN_TRAINER_H
#define FFNN_TRAIN_TRAINER_H

#include <stddef.h>
#include <stdint.h>

#include "core/rng.h"
#include "ffnn.h"
#include "strategy/strategy.h"

struct ffnn_trainer {
    ffnn_run run;             /* model, backend context, device buffers, data:
                                 what the strategy runs steps over            */
    ffnn_train_config cfg;    /* run.cfg points here                          */
    ffnn_comm *comm;          /* the caller's communicator, or NULL; run.comm is
                                 it only for a group of more than one rank (a
                                 group of one trains as a plain run)          */
    ffnn_device device;
    const ffnn_strategy_impl *strategy; /* cfg.strategy with auto resolved (cpu: tiled) */
    void *strategy_state;     /* the strategy's own (graph cache), or NULL    */
    char strategy_note[320];  /* tune's measurement (tune.c), else ""         */
    uint64_t opt_steps;       /* optimizer steps taken (Adam's t of the last step) */
    ffnn_plateau plateau;     /* reduce-on-plateau's state (run.plateau points here) */
    int plateau_epoch;        /* the last epoch the plateau state has seen        */
    int es_epoch;             /* early stopping (cfg.early_stopping > 0): the last
                                 epoch it has seen                              */
    int es_best_epoch;        /*   the best epoch so far (0: none yet)          */
    double es_best_loss;      /*   its metric                                   */
    float *es_best;           /*   [parameter_count] host: its weights (the model's
                                 view: the EMA weights with ema_decay), or NULL
                                 with early stopping off                        */

    ffnn_device_data eval;    /* the last data set evaluated (cached)         */
    const ffnn_dataset *val;  /* the validation set (ffnn_trainer_set_validation) or NULL */

    int32_t *perm;            /* [train count] host permutation               */
    double *step_loss;        /* [steps per epoch] the last epoch's per-step losses */
    size_t step_loss_count;   /* steps of the last completed epoch (0 before) */
    double *epoch_loss;       /* [steps per epoch] the current epoch's per-step losses,
                                 read back for steps [0, epoch_loss_known)     */
    size_t epoch_loss_known;  /* steps of the current epoch read back         */
    float *step_norm;         /* [steps per epoch] the last epoch's clipping norms */
    float *epoch_norm;        /* [steps per epoch] the current epoch's, read back
                                 with the losses (clip_grad_norm > 0; else 0)  */
    ffnn_rng shuffle_rng;
    ffnn_rng epoch_rng;       /* shuffle_rng as it was when the current epoch began
                                 (a checkpoint regenerates the permutation from it) */
    int epoch;                /* epochs started (1-based once started)        */
    size_t step;              /* next step within the current epoch           */
    int diverged_epoch;       /* > 0: the first NaN/Inf loss seen, at this epoch */
    size_t diverged_step;     /*       and step (1-based)                     */
    double diverged_loss;     /*       and its value                          */
    uint32_t data_crc;        /* CRC-32 of the training data (once data_crc_known) */
    int data_crc_known;
};

/* base.c: device memory of the trainer's backend (count * elem bytes,
 * overflow-checked); dev_free ignores NULL. */
ffnn_status ffnn_trainer_alloc(ffnn_trainer *t, void *ptr_out, size_t count, size_t elem);
void ffnn_trainer_release(ffnn_trainer *t, void *ptr);
/* base.c: upload a data set once (features, labels or targets, per-row metric
 * buffers, index 0..n-1) into *d; free it again. */
ffnn_status ffnn_device_data_upload(ffnn_trainer *t, const ffnn_dataset *ds,
                                    ffnn_device_data *d);
void ffnn_device_data_free(ffnn_trainer *t, ffnn_device_data *d);

/* epoch.c: the permutation of the current epoch from epoch_rng, uploaded; the
 * losses of the steps not read back yet (FFNN_ERR_NUMERIC at the first NaN/Inf);
 * the batch size of step s. base.c: the mean of n floats (in double). */
ffnn_status ffnn_trainer_make_permutation(ffnn_trainer *t);

/* One epoch of a whole run (ffnn_train, ffnn_sweep; fit.c): the epoch, then *done
 * when it was the last (epochs_done + 1 = cfg->epochs) or early stopping's
 * patience ran out; at that end, with early stopping on, the best epoch's weights
 * go into the model (ffnn_trainer_restore_best). *done is 1 after an error. */
ffnn_status ffnn_train_epoch(ffnn_trainer *t, const ffnn_train_config *cfg, int epochs_done,
                             ffnn_epoch_stats *stats, int *done);
ffnn_status ffnn_trainer_read_back_losses(ffnn_trainer *t);
size_t ffnn_trainer_batch_of_step(const ffnn_trainer *t, size_t s);
double ffnn_mean_of(const float *v, size_t n);
/* The weighted mean sum_i w[index[i]] v[i] / sum_i w[index[i]] of v [n] (weights
 * NULL: ffnn_mean_of; a zero sum: 0), in double: a step's loss with sample weights. */
double ffnn_weighted_mean_of(const float *v, const int32_t *index, const float *weights,
                             size_t n);

/* trainer.c: ffnn_trainer_create_parallel for one strategy choice: cfg.strategy
 * as it is (tune resolved as auto, by the rule, without measuring). */
ffnn_status ffnn_trainer_create_one(ffnn_model *m, const ffnn_dataset *train,
                                    const ffnn_train_config *cfg, ffnn_comm *comm,
                                    ffnn_trainer **out);
/* tune.c: ffnn_trainer_create with cfg.strategy tune (one process): on cuda each
 * candidate strategy timed on a copy of m, then the trainer of the fastest with
 * the measurement in strategy_note; elsewhere as auto. */
ffnn_status ffnn_trainer_create_tuned(ffnn_model *m, const ffnn_dataset *train,
                                      const ffnn_train_config *cfg, ffnn_trainer **out);

/* eval.c: the model's sync hook (core/model.h): ffnn_trainer_sync_model(trainer). */
ffnn_status ffnn_trainer_sync_hook(void *trainer);

#endif
