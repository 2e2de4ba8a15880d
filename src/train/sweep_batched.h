/* sweep_batched.h - the sweep's batched engine (strategy batched, sweep.c): the
 * models of a sweep trained together on one GPU, one launch per op over the model
 * axis (backend.h ffnn_ops_models). Private to src/train. */
#ifndef FFNN_TRAIN_SWEEP_BATCHED_H
#define FFNN_TRAIN_SWEEP_BATCHED_H

#include <stddef.h>

#include "ffnn.h"

typedef struct ffnn_batched ffnn_batched;

/* FFNN_OK when the count models (configs[i] with strategy batched) can train
 * together: cuda, every model the same dense network (activations identity,
 * relu, sigmoid, tanh; no dropout), one training set with class labels and no
 * sample weights, one validation set (or none), loss ce, plain sgd (no weight
 * decay, clipping, EMA, warm-up), a constant learning rate, no early stopping, fp32,
 * one batch size and drop_last. Else FFNN_ERR_UNSUPPORTED naming the first
 * model and setting that cannot, and the way out (another strategy). */
ffnn_status ffnn_batched_check(ffnn_model *const *models, const ffnn_train_config *configs,
                               size_t count, const ffnn_dataset *const *train,
                               const ffnn_dataset *const *val);

/* The engine for models (ffnn_batched_check first): the models' parameters
 * uploaded into one arena, the training set (and val) once. The models stay the
 * caller's; each must outlive the engine. Errors: FFNN_ERR_UNSUPPORTED (no CUDA
 * module or GPU), FFNN_ERR_NO_MEMORY (the estimate against the device's free
 * memory, before allocating), FFNN_ERR_CUDA. */
ffnn_status ffnn_batched_create(ffnn_model *const *models, const ffnn_train_config *configs,
                                size_t count, const ffnn_dataset *train,
                                const ffnn_dataset *val, ffnn_batched **out);

/* One epoch of the models with training[i] != 0 (the others keep their weights),
 * each as its lone run's epoch `epoch` (0-based: its shuffle generator's
 * permutation, its learning rate): then their weights are copied into the models
 * and stats[i] filled (epoch, train_loss, val_loss and val_accuracy, NaN without a
 * validation set; seconds: the epoch's training time shared equally among the
 * models trained in it; images_per_second: theirs together). Errors: FFNN_ERR_CUDA, FFNN_ERR_NUMERIC (a NaN/Inf loss:
 * which model, which step). */
ffnn_status ffnn_batched_run_epoch(ffnn_batched *b, const int *training,
                                   ffnn_epoch_stats *stats);

void ffnn_batched_free(ffnn_batched *b);

#endif
