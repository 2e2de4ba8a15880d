/* config.h - the training configuration's check (config.c); its defaults and
 * limits are the option table's (core/train_options.def; public:
 * ffnn_train_config_default, ffnn_train_option_at, ffnn_train_config_limit), whose
 * accessors of the reserved options (ffnn_cfg_cuda_block_1d ...) come with this
 * header. */
#ifndef FFNN_TRAIN_CONFIG_H
#define FFNN_TRAIN_CONFIG_H

#include "ffnn.h"
#include "core/train_options.h"

/* Check cfg against the limits table and against the model m and the training
 * data: FFNN_ERR_INVALID_ARGUMENT with a message naming the field, the range and
 * the value found. Allocates nothing. */
/* The settings alone: every option in its range, then the rules between them
 * (cuda_block_1d a multiple of 32, cuda_block_2d 8, 16 or 32, lr_min below
 * learning_rate, multistep's milestones, nesterov only with momentum). */
ffnn_status ffnn_train_config_check_settings(const ffnn_train_config *c);

ffnn_status ffnn_train_config_check(const ffnn_model *m, const ffnn_dataset *train,
                                    const ffnn_train_config *c);

#endif
