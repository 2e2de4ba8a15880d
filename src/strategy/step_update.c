/* step_update.c - the optimizer stage of the step (step.h, step_phases.h):
 * after the backward (fp32, or bf16 writing the shadow), early on the second
 * stream, and what the fused sgd ops leave to the step. */
#include "core/optim.h"
#include "strategy/mixed.h"
#include "strategy/step_phases.h"

/* One optimizer_update call over [off, off + n) of the arenas; with the bf16
 * pipeline, optimizer_update_bf16, which writes the shadow in the same pass. */
static ffnn_status update_range(ffnn_run *r, const ffnn_optimizer_step *update, size_t off,
                                size_t n)
{
    float *state = r->opt_state ? r->opt_state + off : NULL;
    if (r->ext.mixed)
        return r->ops->bf16->optimizer_update_bf16(r->ctx, update, r->params + off, r->grads + off,
                                             state, n, r->ext.mixed->params16 + off);
    return r->ops->optimizer_update(r->ctx, update, r->params + off, r->grads + off, state, n);
}

/* The optimizer stage over layers [lo, hi): one update over their parameters (one
 * range of the arena: layer by layer, each weight then bias); with weight decay
 * and decay_bias 0, one call per weight (decayed) and per bias (not). The state's
 * arenas are addressed through state_stride (v = m + the arena's size). */
ffnn_status ffnn_step_update_layers(ffnn_run *r, const ffnn_optimizer_step *update, int lo,
                                    int hi)
{
    const ffnn_model *m = r->model;
    const size_t n = m->parameter_count;
    if (lo >= hi)
        return FFNN_OK;
    if (r->cfg->decay_bias || r->cfg->weight_decay == 0.0f) {
        const size_t off = m->layers[lo].weight_offset;
        const size_t end = hi == m->layer_count ? n : m->layers[hi].weight_offset;
        ffnn_optimizer_step u = *update;
        u.state_stride = n;
        return update_range(r, &u, off, end - off);
    }
    ffnn_optimizer_step decayed = *update, plain = ffnn_optimizer_step_no_decay(*update);
    decayed.state_stride = plain.state_stride = n;
    ffnn_status st = FFNN_OK;
    for (int i = lo; i < hi && st == FFNN_OK; i++) {
        const ffnn_layer *l = &m->layers[i];
        const size_t off[2] = {l->weight_offset, l->bias_offset};
        const size_t len[2] = {ffnn_layer_weights(l), l->has_bias ? l->out : 0};
        for (int k = 0; k < 2 && st == FFNN_OK; k++)
            if (len[k])
                st = update_range(r, k ? &plain : &decayed, off[k], len[k]);
    }
    return st;
}

ffnn_status ffnn_step_update(ffnn_run *r, const ffnn_optimizer_step *update)
{
    return ffnn_step_update_layers(r, update, 0, r->model->layer_count);
}

/* Plain SGD inside the backward (r->plan.fused_sgd): what the layers' ops leave
 * to the step - the head's layer (its dW, db summed by the head), every bias whose
 * gradient an op above summed (ffnn_step_db_from_above) - but for what the head's
 * sums update themselves (ffnn_step_head, ffnn_step_head_sums_apart).
 * ffnn_step_rest_to_update: 1 when there is any; update_rest queues it, once
 * those gradients are written (after the op of layer 1). */
static int rest_param(const ffnn_run *r, int i, int head)
{
    const int top = r->model->layer_count - 1;
    if (head && ffnn_step_head_sums_apart(r) && i >= top - 1)
        return 0; /* updated by the head's sums */
    return (head && i == top) || ffnn_step_db_from_above(r, i, head);
}

int ffnn_step_rest_to_update(const ffnn_run *r, int head)
{
    for (int i = 0; i < r->model->layer_count; i++)
        if (rest_param(r, i, head))
            return 1;
    return 0;
}

static ffnn_status update_rest(ffnn_run *r, const ffnn_optimizer_step *sgd, int head)
{
    const ffnn_model *m = r->model;
    ffnn_status st = FFNN_OK;
    for (int i = 0; i < m->layer_count && st == FFNN_OK; i++) {
        const ffnn_layer *l = &m->layers[i];
        const size_t nw = ffnn_layer_weights(l);
        if (!rest_param(r, i, head))
            continue;
        if (head && i == m->layer_count - 1) { /* W and b: one range where adjacent */
            const int joined = l->has_bias && l->bias_offset == l->weight_offset + nw;
            st = update_range(r, sgd, l->weight_offset, nw + (joined ? l->out : 0));
            if (st == FFNN_OK && l->has_bias && !joined)
                st = update_range(r, sgd, l->bias_offset, l->out);
        } else {
            st = update_range(r, sgd, l->bias_offset, l->out);
        }
    }
    return st;
}

/* After layer i's backward op: queue the update of layers [i, e->from) on the side
 * queue (layer 0: left to the caller). */
ffnn_status ffnn_step_queue_early(ffnn_run *r, ffnn_early_plan *e, int i)
{
    if (e == NULL || e->update == NULL || i == 0)
        return FFNN_OK;
    ffnn_status st = ffnn_step_side_open(r, e->side);
    if (st != FFNN_OK)
        return st;
    st = ffnn_step_update_layers(r, e->update, i, e->from);
    e->from = i;
    return ffnn_step_side_close(r, st);
}

/* The parameters the layers' ops leave to the step under sgd (update_rest):
 * queued before layer 0's op, on the second stream where the backend has one (*side
 * then 1: the caller joins before the step ends; side NULL: the ops' queue). */
ffnn_status ffnn_step_queue_rest(ffnn_run *r, const ffnn_optimizer_step *sgd, int head, int *side)
{
    if (side == NULL || !ffnn_step_has_side(r))
        return update_rest(r, sgd, head);
    ffnn_status st = ffnn_step_side_open(r, side);
    if (st != FFNN_OK)
        return st;
    return ffnn_step_side_close(r, update_rest(r, sgd, head));
}
