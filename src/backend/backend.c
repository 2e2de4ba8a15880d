/* backend.c - checks on backend tables. */
#include "backend/backend.h"

/* The core entries (backend.h); the extensions may be NULL. */
int ffnn_backend_ops_complete(const ffnn_backend_ops *ops)
{
    return ops && ops->name && ops->create && ops->destroy && ops->threads && ops->alloc &&
           ops->release && ops->upload && ops->download && ops->synchronize && ops->gather &&
           ops->dense_forward && ops->dense_backward && ops->local1d_forward &&
           ops->local1d_backward && ops->embedding_forward && ops->embedding_backward &&
           ops->activation_forward && ops->activation_backward &&
           ops->loss && ops->optimizer_update && ops->grad_clip && ops->dropout &&
           ops->ema_update;
}
