/* step_common.c - what the phases of the step share (step_phases.h): a layer's
 * dropout, the second stream, where a dense layer's bias gradient is summed. */
#include "core/dropout.h"
#include "strategy/step_phases.h"

/* Layer i's dropout on n values of in into out at step t (the same call drops
 * the forward's outputs and the backward's gradients). */
ffnn_status ffnn_step_dropout(ffnn_run *r, int i, uint64_t t, const float *in, float *out,
                                 size_t n)
{
    const double p = r->model->layers[i].dropout;
    /* a rank's rows start at row dropout_row0 of the step's batch: its elements are
     * the single-process run's elements from dropout_row0 * width on */
    const uint64_t key = ffnn_dropout_key_at(ffnn_dropout_key(r->cfg->seed, t, i),
                                             (uint64_t)r->dropout_row0 * r->model->layers[i].out);
    return r->ops->dropout(r->ctx, in, out, n, key, ffnn_dropout_threshold(p),
                           ffnn_dropout_scale(p));
}

/* 1 when the backend has a second stream (backend.h side_begin, side_end, side_join). */
int ffnn_step_has_side(const ffnn_run *r)
{
    return r->ops->side != NULL;
}

/* The ops queued after ffnn_step_side_open go to the second stream (*pending set to 1: the
 * caller joins it) until ffnn_step_side_close, which returns st, or side_end's error. */
ffnn_status ffnn_step_side_open(ffnn_run *r, int *pending)
{
    const ffnn_status st = r->ops->side->side_begin(r->ctx);
    if (st == FFNN_OK)
        *pending = 1;
    return st;
}

ffnn_status ffnn_step_side_close(ffnn_run *r, ffnn_status st)
{
    const ffnn_status end = r->ops->side->side_end(r->ctx);
    return st != FFNN_OK ? st : end;
}

/* Where layer i's backward op writes the bias gradient of the layer below, summed
 * over the dx it writes (r->plan.bias_grad_from_dx; that layer's own op then skips its
 * db), or NULL: no such layer, no bias, or the op does not. */
float *ffnn_step_below_db(const ffnn_run *r, int i)
{
    const ffnn_layer *below = i > 0 ? &r->model->layers[i - 1] : NULL;
    if (!r->plan.bias_grad_from_dx || !r->plan.fused || below == NULL || !below->has_bias ||
        below->kind != FFNN_LAYER_DENSE)
        return NULL;
    return r->grads + below->bias_offset;
}

/* 1 when layer i's bias gradient is summed by an op above it: the head's (layer
 * L-2 of a head step) or layer i + 1's fused dense op (its dx_db: ffnn_step_below_db). */
int ffnn_step_db_from_above(const ffnn_run *r, int i, int head)
{
    const ffnn_model *m = r->model;
    if (i + 1 >= m->layer_count || !m->layers[i].has_bias)
        return 0;
    if (head && i == m->layer_count - 2)
        return 1;
    return r->plan.fused && m->layers[i + 1].kind == FFNN_LAYER_DENSE &&
           ffnn_step_below_db(r, i + 1) != NULL;
}
