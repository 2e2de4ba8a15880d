/* config.h - the training configuration's check (config.c); its defaults and
 * limits are public (ffnn_train_config_default, ffnn_train_config_limit). */
#ifndef FFNN_TRAIN_CONFIG_H
#define FFNN_TRAIN_CONFIG_H

#include "ffnn.h"

/* Check cfg against the limits table and against the model m and the training
 * data: FFNN_ERR_INVALID_ARGUMENT with a message naming the field, the range and
 * the value found. Allocates nothing. */
ffnn_status ffnn_train_config_check(const ffnn_model *m, const ffnn_dataset *train,
                                    const ffnn_train_config *c);

#endif
