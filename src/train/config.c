/*
 * config.c - the check that ffnn_trainer_create runs on its configuration before
 * anything is allocated: every option inside its range (the option table,
 * core/train_options.def, through ffnn_train_options_check), then by hand the
 * rules between options and those against the model and the data.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "core/model.h"
#include "core/train_options.h"
#include "data/dataset.h"
#include "strategy/strategy.h"
#include "train/config.h"

ffnn_status ffnn_train_config_check_settings(const ffnn_train_config *c)
{
    ffnn_status st = ffnn_train_options_check(c);
    if (st != FFNN_OK)
        return st;
    const int block_1d = ffnn_cfg_cuda_block_1d(c), block_2d = ffnn_cfg_cuda_block_2d(c);
    if (block_1d != 0 && (block_1d < 32 || block_1d % 32 != 0))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda_block_1d (cuda 1-D block) must be 0 "
                         "(default) or a multiple of 32 in [32, 1024], found %d", block_1d);
    if (block_2d != 0 && block_2d != 8 && block_2d != 16 && block_2d != 32)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda_block_2d (cuda 2-D block) must be 0 "
                         "(default), 8, 16 or 32, found %d", block_2d);
    if (c->lr_min >= c->learning_rate && c->lr_min != 0.0f)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "lr_min (eta_min, min_lr) must be below the learning rate %g, found %g",
                         (double)c->learning_rate, (double)c->lr_min);
    if (c->lr_schedule == FFNN_LR_MULTISTEP && c->lr_milestone_count < 1)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "multistep needs 1 to %d milestones, found %d", FFNN_LR_MILESTONES_MAX,
                         c->lr_milestone_count);
    if (c->nesterov && (c->optimizer != FFNN_OPT_MOMENTUM || c->momentum == 0.0f))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "nesterov needs the momentum optimizer with a momentum > 0 "
                         "(found optimizer %s, momentum %g)",
                         ffnn_optimizer_name(c->optimizer), (double)c->momentum);
    return FFNN_OK;
}

ffnn_status ffnn_train_config_check(const ffnn_model *m, const ffnn_dataset *train,
                                const ffnn_train_config *c)
{
    ffnn_status st = ffnn_train_config_check_settings(c);
    if (st != FFNN_OK)
        return st;
    if (train->count > (size_t)INT32_MAX)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "training set larger than 2^31-1 samples");
    if (m->input_size != train->features)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "the network takes %zu inputs but the data has %zu features per sample",
                         m->input_size, train->features);
    const ffnn_layer *last = &m->layers[m->layer_count - 1];
    ffnn_status loss_ok = ffnn_model_check_loss(m, c->loss);
    if (loss_ok != FFNN_OK)
        return loss_ok;
    if (train->target_width) { /* float targets: mse or bce, one per output */
        if (c->loss == FFNN_LOSS_SOFTMAX_CE)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                             "loss ce takes class labels, but the data has float targets (%zu "
                             "per sample): use mse or bce", train->target_width);
        if (train->target_width != last->out)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                             "the data has %zu float target%s per sample but the network has "
                             "%zu output%s", train->target_width,
                             train->target_width == 1 ? "" : "s", last->out,
                             last->out == 1 ? "" : "s");
        return FFNN_OK;
    }
    /* a continuous target, a missing label or one class: refused (ffnn.h) */
    st = ffnn_dataset_check_task(train, c->loss, FFNN_TASK_ALLOW_MANY_CLASSES);
    if (st != FFNN_OK)
        return st;
    size_t classes_fit = last->out == 1 ? 2 : last->out;
    if (c->loss != FFNN_LOSS_MSE || last->out > 1) {
        if ((size_t)train->classes > classes_fit)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                             "the data has labels up to %d but the network has %zu output%s "
                             "(at most %zu classes)",
                             train->classes - 1, last->out, last->out == 1 ? "" : "s",
                             classes_fit);
    }
    return FFNN_OK;
}

