/* strategy.h - which cuda training strategy (ffnn_strategy) a trainer runs:
 * what each strategy accepts, and the auto rule (docs/PERFORMANCE.md has the
 * measurements behind it). */
#ifndef FFNN_STRATEGY_H
#define FFNN_STRATEGY_H

#include "ffnn.h"
#include "core/model.h"

/* 1 when the persistent kernel's network family covers m and cfg: two dense
 * layers (in -> hidden with any activation -> out, identity), softmax_ce (class
 * labels) or mse (float targets: checked with the data), plain sgd, fp32; else 0 with the reason in ffnn_last_error(). The kernel's own
 * size limits are checked on the device (ffnn_cuda_persistent_supported). */
int ffnn_strategy_persistent_fits(const ffnn_model *m, const ffnn_train_config *cfg);

/* 1 when the fused ops can replace the per-op dense path for m (every layer
 * dense); the SGD update is fused only for plain sgd. */
int ffnn_strategy_fused_fits(const ffnn_model *m);

/* cfg->strategy with auto resolved for m and cfg (any other value is returned
 * as it is). */
ffnn_strategy ffnn_strategy_resolve(const ffnn_model *m, const ffnn_train_config *cfg);

#endif
