/* train_defaults.c - ffnn_train_config_default (ffnn.h): the training
 * configuration's defaults, in the core layer because the checkpoint reader
 * (io/checkpoint.c) fills the settings an older file does not record from them;
 * the limits and the check are train/config.c's. */
#include <string.h>

#include "ffnn.h"

ffnn_train_config ffnn_train_config_default(void)
{
    ffnn_train_config c;
    memset(&c, 0, sizeof c);
    c.epochs = 10;
    c.batch_size = 64;
    c.learning_rate = 0.01f;
    c.seed = 1;
    c.shuffle = 1;
    c.loss = FFNN_LOSS_SOFTMAX_CE;
    c.device = FFNN_DEVICE_AUTO;
    c.strategy = FFNN_STRATEGY_AUTO;
    c.precision = FFNN_PRECISION_FP32;
    c.eval_batch_size = 1024;
    c.threads = 0; /* the OpenMP backend on all cores (the reference: strategy reference) */
    c.optimizer = FFNN_OPT_SGD;
    c.momentum = 0.9f;
    c.nesterov = 0;
    c.beta1 = 0.9f;
    c.beta2 = 0.999f;
    c.epsilon = 1e-8f;
    c.weight_decay = 0.0f;
    c.decay_bias = 1;
    c.lr_schedule = FFNN_LR_CONSTANT;
    c.lr_step_size = 1;
    c.lr_gamma = 0.1f;
    c.lr_patience = 10;
    c.lr_factor = 0.1f;
    c.lr_threshold = 1e-4f;
    c.early_stopping = 0; /* off */
    return c;
}
