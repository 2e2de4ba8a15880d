/* test_backend_ctx.h - a backend context for the op tests: the backend options a
 * strategy would create it with (its matmul variant), fp32, default launches. */
#ifndef FFNN_TEST_BACKEND_CTX_H
#define FFNN_TEST_BACKEND_CTX_H

#include "backend/backend.h"
#include "strategy/strategy.h"

static inline ffnn_status test_ctx(const ffnn_backend_ops *ops, ffnn_strategy strategy,
                                   int threads, void **ctx)
{
    const ffnn_backend_options o = {threads, ffnn_strategy_get(strategy)->matmul,
                                     FFNN_PRECISION_FP32, 0, 0};
    return ops->create(&o, ctx);
}

#endif
