/* pool.h - the fork-join pool of the train layer (sweeps, predictors): core/pool.h's,
 * which the omp backend runs its ops on too. */
#ifndef FFNN_TRAIN_POOL_H
#define FFNN_TRAIN_POOL_H

#include "core/pool.h"

#endif
