/*
 * config.c - the training configuration: the ONE table of limits
 * (ffnn_train_config_limit, read by the command line too) and the check that
 * ffnn_trainer_create runs before anything is allocated. Its defaults:
 * core/train_defaults.c (the checkpoint reader needs them too).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "core/model.h"
#include "data/dataset.h"
#include "strategy/strategy.h"
#include "train/config.h"

/* The limits of ffnn_train_config's numeric fields (ffnn.h documents them). */
static const ffnn_config_limit limits[] = {
    {"epochs", 0, 1000000, 0, 0},
    {"batch_size", 1, 1 << 24, 0, 0},     /* above the training set: the whole set */
    {"learning_rate", 0, 1e6, 1, 0},
    {"threads", 0, 1024, 0, 0},
    {"eval_batch_size", 1, 1 << 20, 0, 0},
    {"steps_per_launch", 0, INT32_MAX, 0, 0},
    {"momentum", 0, 1, 0, 1},
    {"beta1", 0, 1, 0, 1},
    {"beta2", 0, 1, 0, 1},
    {"epsilon", 0, 1, 1, 0},
    {"weight_decay", 0, 1e6, 0, 0},
    {"lr_step_size", 1, 1000000, 0, 0},
    {"lr_gamma", 0, 1, 1, 0},
    {"lr_milestone", 1, 1000000, 0, 0},   /* each of lr_milestones, increasing      */
    {"lr_t_max", 0, 1000000, 0, 0},
    {"lr_min", 0, 1e6, 0, 0},             /* and below learning_rate              */
    {"lr_end_factor", 0, 1, 0, 0},
    {"lr_total_iters", 0, 1000000, 0, 0},
    {"lr_patience", 0, 1000000, 0, 0},
    {"lr_factor", 0, 1, 1, 1},
    {"lr_threshold", 0, 1, 0, 1},
    {"warmup_steps", 0, INT32_MAX, 0, 0},
    {"clip_grad_norm", 0, 1e12, 0, 0},     /* 0: off                            */
    {"clip_grad_value", 0, 1e12, 0, 0},    /* 0: off                            */
    {"ema_decay", 0, 1, 0, 1},             /* 0: off                            */
    {"early_stopping", 0, 1000000, 0, 0}, /* patience in epochs; 0: off        */
    {"cuda_block_1d", 0, 1024, 0, 0},     /* and 0 or a multiple of 32 >= 32    */
    {"cuda_block_2d", 0, 32, 0, 0},       /* and 0, 8, 16 or 32                 */
};

const ffnn_config_limit *ffnn_train_config_limit(const char *field)
{
    for (size_t i = 0; field && i < sizeof limits / sizeof limits[0]; i++)
        if (strcmp(limits[i].field, field) == 0)
            return &limits[i];
    return NULL;
}

#define LIMIT(field) (*ffnn_train_config_limit(#field))

/* 1 when v is a number inside the named field's range (NaN never is). */
static int within(const char *field, double v)
{
    const ffnn_config_limit *l = ffnn_train_config_limit(field);
    if (!(v == v)) /* NaN */
        return 0;
    return (l->min_open ? v > l->min : v >= l->min) && (l->max_open ? v < l->max : v <= l->max);
}

/* The learning-rate schedule's settings (every one range-checked, whichever
 * schedule is chosen). */
static ffnn_status check_schedule(const ffnn_train_config *c)
{
    if ((int)c->lr_schedule < FFNN_LR_CONSTANT || (int)c->lr_schedule > FFNN_LR_PLATEAU)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "unknown learning-rate schedule %d",
                         (int)c->lr_schedule);
    const struct { const char *field; double v; } v[] = {
        {"lr_step_size", c->lr_step_size}, {"lr_gamma", c->lr_gamma},
        {"lr_t_max", c->lr_t_max},         {"lr_min", c->lr_min},
        {"lr_end_factor", c->lr_end_factor}, {"lr_total_iters", c->lr_total_iters},
        {"lr_patience", c->lr_patience},   {"lr_factor", c->lr_factor},
        {"lr_threshold", c->lr_threshold}, {"warmup_steps", c->warmup_steps},
        {"clip_grad_norm", c->clip_grad_norm}, {"clip_grad_value", c->clip_grad_value},
        {"ema_decay", c->ema_decay},
        {"early_stopping", c->early_stopping},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!within(v[i].field, v[i].v)) {
            const ffnn_config_limit *l = ffnn_train_config_limit(v[i].field);
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s must be in %c%g, %g%c, found %g",
                             v[i].field, l->min_open ? '(' : '[', l->min, l->max,
                             l->max_open ? ')' : ']', v[i].v);
        }
    if (c->lr_min >= c->learning_rate && c->lr_min != 0.0f)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "lr_min (eta_min, min_lr) must be below the learning rate %g, found %g",
                         (double)c->learning_rate, (double)c->lr_min);
    if (c->lr_schedule == FFNN_LR_MULTISTEP &&
        (c->lr_milestone_count < 1 || c->lr_milestone_count > FFNN_LR_MILESTONES_MAX))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "multistep needs 1 to %d milestones, found %d", FFNN_LR_MILESTONES_MAX,
                         c->lr_milestone_count);
    for (int i = 0; i < c->lr_milestone_count && i < FFNN_LR_MILESTONES_MAX; i++)
        if (!within("lr_milestone", c->lr_milestones[i]) ||
            (i > 0 && c->lr_milestones[i] <= c->lr_milestones[i - 1]))
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                             "milestone %d: expected increasing epochs >= 1, found %d", i + 1,
                             c->lr_milestones[i]);
    return FFNN_OK;
}

ffnn_status ffnn_train_config_check(const ffnn_model *m, const ffnn_dataset *train,
                                const ffnn_train_config *c)
{
    ffnn_status st;
    if (!within("epochs", c->epochs))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "epochs must be in [0, %.0f], found %d",
                         LIMIT(epochs).max, c->epochs);
    if (!within("threads", c->threads))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "threads must be in [0, %.0f] (0: all cores, 1: the reference), "
                         "found %d", LIMIT(threads).max, c->threads);
    if (!within("batch_size", (double)c->batch_size))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "batch size must be in [1, %.0f], found %zu",
                         LIMIT(batch_size).max, c->batch_size);
    if ((int)c->strategy < 0 || (int)c->strategy >= FFNN_STRATEGY_COUNT)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "unknown strategy value %d", (int)c->strategy);
    if ((int)c->precision < 0 || (int)c->precision > (int)FFNN_PRECISION_TF32X3)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "unknown precision value %d",
                         (int)c->precision);
    if (!within("steps_per_launch", c->steps_per_launch))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "steps per launch must be >= 0 (0: the strategy's default), found %d",
                         c->steps_per_launch);
    if (!within("cuda_block_1d", c->cuda_block_1d) ||
        (c->cuda_block_1d != 0 && (c->cuda_block_1d < 32 || c->cuda_block_1d % 32 != 0)))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda 1-D block must be 0 (default) or a multiple of 32 in "
                         "[32, 1024], found %d", c->cuda_block_1d);
    if (!within("cuda_block_2d", c->cuda_block_2d) ||
        (c->cuda_block_2d != 0 && c->cuda_block_2d != 8 && c->cuda_block_2d != 16 &&
         c->cuda_block_2d != 32))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda 2-D block must be 0 (default), 8, 16 or 32, found %d",
                         c->cuda_block_2d);
    if (!within("eval_batch_size", (double)c->eval_batch_size))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "evaluation batch size must be in [1, %.0f], found %zu",
                         LIMIT(eval_batch_size).max, c->eval_batch_size);
    if (!within("learning_rate", c->learning_rate))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "learning rate must be positive, finite and at most %g, found %g",
                         LIMIT(learning_rate).max, (double)c->learning_rate);
    if ((int)c->optimizer < FFNN_OPT_SGD || (int)c->optimizer > FFNN_OPT_ADAMW)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "unknown optimizer %d (expected sgd, momentum, adam or adamw)",
                         (int)c->optimizer);
    if (!within("weight_decay", c->weight_decay))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "weight decay must be in [0, %g], found %g",
                         LIMIT(weight_decay).max, (double)c->weight_decay);
    if ((st = check_schedule(c)) != FFNN_OK)
        return st;
    if (!within("momentum", c->momentum))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "momentum must be in [0, 1), found %g",
                         (double)c->momentum);
    if (c->nesterov && (c->optimizer != FFNN_OPT_MOMENTUM || c->momentum == 0.0f))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "nesterov needs the momentum optimizer with a momentum > 0 "
                         "(found optimizer %s, momentum %g)",
                         ffnn_optimizer_name(c->optimizer), (double)c->momentum);
    if (!within("beta1", c->beta1))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "adam beta1 must be in [0, 1), found %g",
                         (double)c->beta1);
    if (!within("beta2", c->beta2))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "adam beta2 must be in [0, 1), found %g",
                         (double)c->beta2);
    if (!within("epsilon", c->epsilon))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "adam epsilon must be in (0, 1], found %g",
                         (double)c->epsilon);
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

