/* train_options.h - the library's side of the training-option table
 * (train_options.def, train_options.c): reading and writing one option of a
 * config by its descriptor, the range check, and the accessors of the options
 * kept in ffnn_train_config.reserved (the cuda launch knobs). The public side
 * (ffnn_train_option_at, ffnn_train_config_set/_get) is in ffnn.h. */
#ifndef FFNN_CORE_TRAIN_OPTIONS_H
#define FFNN_CORE_TRAIN_OPTIONS_H

#include <stddef.h>

#include "ffnn.h"

/* Room for one option's text (ffnn_train_config_get) but an INT_LIST's. */
enum { FFNN_OPTION_TEXT_MAX = 64, FFNN_OPTION_LIST_TEXT_MAX = 8 * FFNN_LR_MILESTONES_MAX + 1 };

/* Option o of c as a number (INT_LIST: its count). */
double ffnn_option_value(const ffnn_train_config *c, const ffnn_train_option *o);

/* 1 when option o has the same value in a and b (INT_LIST: count and elements). */
int ffnn_option_equal(const ffnn_train_config *a, const ffnn_train_config *b,
                      const ffnn_train_option *o);

/* 1 when option o of c is its default (ffnn_train_config_default's). */
int ffnn_option_is_default(const ffnn_train_config *c, const ffnn_train_option *o);

/* Option o of c as text into buf [size] (ffnn_train_config_get's form); 0 when
 * it does not fit. */
int ffnn_option_format(const ffnn_train_config *c, const ffnn_train_option *o, char *buf,
                       size_t size);

/* Parse text into option o of c, range-checked (ffnn_train_config_set's rules).
 * FFNN_OK, or FFNN_ERR_INVALID_ARGUMENT with "NAME: expected ..., found '...'"
 * (without a prefix: the caller adds its context). c is unchanged on failure. */
ffnn_status ffnn_option_parse(ffnn_train_config *c, const ffnn_train_option *o,
                              const char *text);

/* Every option of c inside its limit (INT_LIST: count in [0, max], elements
 * increasing inside the limit): FFNN_ERR_INVALID_ARGUMENT "NAME must be in
 * [MIN, MAX], found V" for the first that is not (in table order). */
ffnn_status ffnn_train_options_check(const ffnn_train_config *c);

/* The options kept in c->reserved (ffnn.h; row HIDDEN_k of train_options.def). */
static inline int ffnn_cfg_cuda_block_1d(const ffnn_train_config *c)
{
    return c->reserved[0];
}
static inline int ffnn_cfg_cuda_block_2d(const ffnn_train_config *c)
{
    return c->reserved[1];
}

#endif
