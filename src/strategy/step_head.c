/* step_head.c - the output layer and its loss as one op (step.h
 * ffnn_step_head_applies; backend.h softmax_ce_head), fp32 or bf16. */
#include <stdlib.h>

#include "core/error.h"
#include "strategy/head.h"
#include "strategy/mixed.h"
#include "strategy/step_phases.h"

int ffnn_step_head_applies(const ffnn_run *r)
{
    const ffnn_model *m = r->model;
    if (r->ops->head == NULL || !r->plan.fused || r->comm != NULL ||
        r->cfg->loss != FFNN_LOSS_SOFTMAX_CE || r->train.targets != NULL ||
        r->train.labels == NULL || r->train.weights != NULL || m->layer_count < 2)
        return 0;
    const ffnn_layer *top = &m->layers[m->layer_count - 1], *below = top - 1;
    return top->kind == FFNN_LAYER_DENSE && below->kind == FFNN_LAYER_DENSE &&
           top->act == FFNN_ACT_IDENTITY && !top->has_dropout && !below->has_dropout &&
           top->out <= FFNN_HEAD_CMAX && top->out * top->in <= FFNN_HEAD_MAX_WEIGHTS &&
           top->in % 4 == 0 && top->weight_offset % 4 == 0 &&
           (below->act == FFNN_ACT_IDENTITY || below->act == FFNN_ACT_RELU ||
            below->act == FFNN_ACT_SIGMOID || below->act == FFNN_ACT_TANH);
}

ffnn_status ffnn_step_head_create(ffnn_run *r)
{
    r->ext.head = NULL;
    if (!ffnn_step_head_applies(r))
        return FFNN_OK;
    const ffnn_layer *top = &r->model->layers[r->model->layer_count - 1];
    const size_t n = ffnn_head_scratch_floats(r->cfg->batch_size, top->in, top->out);
    ffnn_head *h = calloc(1, sizeof *h);
    if (!h)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    void *p = NULL;
    ffnn_status st = r->ops->alloc(r->ctx, n * sizeof(float), &p);
    if (st != FFNN_OK) {
        free(h);
        return st;
    }
    h->scratch = (float *)p;
    r->ext.head = h;
    return st;
}

void ffnn_step_head_free(ffnn_run *r)
{
    if (r->ext.head != NULL) {
        r->ops->release(r->ctx, r->ext.head->scratch);
        free(r->ext.head);
    }
    r->ext.head = NULL;
}

/* 1 when training step t runs the head op. */
int ffnn_step_head_runs(const ffnn_run *r, uint64_t t)
{
    return r->ext.head != NULL && t > 0;
}

/* 1 when the head's sums run apart (softmax_ce_head_sums, on the second stream). */
int ffnn_step_head_sums_apart(const ffnn_run *r)
{
    return r->ops->head && ffnn_step_has_side(r);
}

/* The head of step t over `batch` rows whose losses go to row `first` of the
 * epoch: the last layer's dW, db, the layer below's dz (into grad_buf[0], or
 * grad16[0] for a mixed step, rows of its width) and its db. Where the backend has
 * softmax_ce_head_sums and the second stream, the sums (dW, db and the layer below's
 * db, which only the update reads) go to the second stream, concurrently with the
 * layer below's backward: *side is then 1 and the caller joins before the update;
 * with sgd (r->plan.fused_sgd) they also update the last layer and the layer below's
 * bias (update_rest leaves those). */
ffnn_status ffnn_step_head(ffnn_run *r, size_t batch, uint64_t t, size_t first,
                            const ffnn_optimizer_step *sgd, int *side, int *xt_side)
{
    const ffnn_model *m = r->model;
    const ffnn_layer *top = &m->layers[m->layer_count - 1], *below = top - 1;
    const int bf16 = ffnn_mixed_step(r, t);
    const void *h = bf16 ? (const void *)r->ext.mixed->act16[m->layer_count - 2]
                         : (const void *)r->act[m->layer_count - 2];
    const void *W = bf16 ? (const void *)(r->ext.mixed->params16 + top->weight_offset)
                         : (const void *)(r->params + top->weight_offset);
    void *dh = bf16 ? (void *)r->ext.mixed->grad16[0] : (void *)r->grad_buf[0];
    float *dW = r->grads + top->weight_offset;
    float *db = top->has_bias ? r->grads + top->bias_offset : NULL;
    float *dh_db = below->has_bias ? r->grads + below->bias_offset : NULL;
    const int later = ffnn_step_head_sums_apart(r);
    ffnn_status st = r->ops->head->softmax_ce_head(
        r->ctx, bf16, h, W, top->has_bias ? r->params + top->bias_offset : NULL, r->y, batch,
        top->in, top->out, below->act, later ? NULL : dW, db, dh, dh_db,
        r->train.row_loss + first, r->train.row_correct + first, r->ext.head->scratch);
    if (st != FFNN_OK || !later)
        return st;
    /* the forward's transposes joined first, so the layers below do not wait for
     * the sums (the second stream is one queue) */
    if (*xt_side && (st = r->ops->side->side_join(r->ctx)) != FFNN_OK)
        return st;
    *xt_side = 0;
    if ((st = ffnn_step_side_open(r, side)) != FFNN_OK)
        return st;
    const ffnn_head_sgd update = {r->params + top->weight_offset,
                                  db ? r->params + top->bias_offset : NULL,
                                  dh_db ? r->params + below->bias_offset : NULL,
                                  sgd ? sgd->lr : 0.0f};
    st = r->ops->head->softmax_ce_head_sums(r->ctx, batch, top->in, top->out, dW, db, dh_db,
                                      r->ext.head->scratch, sgd ? &update : NULL);
    return ffnn_step_side_close(r, st);
}
