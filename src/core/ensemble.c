/* ensemble.c - ensemble models (include/ffnn.h "Ensembles"): K member models,
 * each a network of its own, whose prediction is the mean of the members'
 * (probabilities for ce and bce, outputs in the targets' units for mse). The
 * ensemble holds copies of its members; what they share (input size, output
 * width, loss, class names, table encoding) is checked here once. The readers
 * of models (predictor.c, predict.c, model_save.c, model_load.c, onnx_export.c)
 * treat an ensemble member by member. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/model.h"

ffnn_status ffnn_model_refuse_ensemble(const ffnn_model *m, const char *what)
{
    if (!m || !m->member_count)
        return FFNN_OK;
    return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: an ensemble model (%d members) has no "
                     "single network: it predicts, evaluates, saves and exports; train or "
                     "change its members before ffnn_model_ensemble", what, m->member_count);
}

/* A deep copy of the plain model src into *out (no trainer attached). */
static ffnn_status clone_model(const ffnn_model *src, ffnn_model **out)
{
    ffnn_model *m = calloc(1, sizeof *m);
    if (!m)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "ffnn_model_ensemble: out of memory");
    m->input_size = src->input_size;
    m->layer_count = src->layer_count;
    m->parameter_count = src->parameter_count;
    m->loss = src->loss;
    m->has_loss = src->has_loss;
    ffnn_status st = FFNN_OK;
    if (!(m->layers = malloc((size_t)src->layer_count * sizeof *m->layers)))
        st = ffnn_fail(FFNN_ERR_NO_MEMORY, "ffnn_model_ensemble: out of memory");
    else
        memcpy(m->layers, src->layers, (size_t)src->layer_count * sizeof *m->layers);
    if (st == FFNN_OK && (st = ffnn_model_alloc_params(m)) == FFNN_OK)
        memcpy(m->params, src->params, src->parameter_count * sizeof *m->params);
    if (st == FFNN_OK)
        st = ffnn_model_set_standardization(m, src->input_mean, src->input_scale,
                                            src->target_mean, src->target_scale);
    if (st == FFNN_OK)
        st = ffnn_model_set_class_names(m, (const char *const *)src->class_names,
                                        src->class_name_count);
    if (st == FFNN_OK)
        st = ffnn_model_set_table_json(m, src->table);
    if (st != FFNN_OK) {
        ffnn_model_free(m);
        return st;
    }
    *out = m;
    return FFNN_OK;
}

static int same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Member i fits member 0: a plain model with a loss, fresh, of the same input
 * size, output width, loss, class names and table. */
static ffnn_status check_member(const ffnn_model *const *members, int i)
{
    const ffnn_model *m = members[i], *first = members[0];
    ffnn_status st;
    if (!m)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_ensemble: member %d is NULL", i);
    if (m->member_count)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_ensemble: member %d is an "
                         "ensemble itself (give its members)", i);
    if ((st = ffnn_model_fresh(m)) != FFNN_OK)
        return ffnn_fail_context(st, "ffnn_model_ensemble");
    if (!m->has_loss)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_ensemble: member %d has no "
                         "loss yet (ffnn_model_set_loss)", i);
    if (m->input_size != first->input_size || ffnn_model_out(m) != ffnn_model_out(first))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_ensemble: member %d takes %zu "
                         "inputs and gives %zu outputs, member 0 %zu and %zu (the members' "
                         "hidden layers may differ, their inputs and outputs may not)", i,
                         m->input_size, ffnn_model_out(m), first->input_size,
                         ffnn_model_out(first));
    if (m->loss != first->loss)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_ensemble: member %d has loss "
                         "%s, member 0 %s", i, ffnn_loss_name(m->loss),
                         ffnn_loss_name(first->loss));
    int names = m->class_name_count == first->class_name_count;
    for (int c = 0; names && c < m->class_name_count; c++)
        names = strcmp(m->class_names[c], first->class_names[c]) == 0;
    if (!names)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_ensemble: member %d's class "
                         "names differ from member 0's", i);
    if (!same_text(m->table, first->table))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_ensemble: member %d's table "
                         "encoding differs from member 0's (or only one has one)", i);
    return FFNN_OK;
}

ffnn_status ffnn_model_ensemble(const ffnn_model *const *members, int count, ffnn_model **out)
{
    if (!members || !out || count < 1 || count > FFNN_ENSEMBLE_MAX_MEMBERS)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_ensemble: members, out and a "
                         "count in [1, %d] are needed (count %d)", FFNN_ENSEMBLE_MAX_MEMBERS,
                         count);
    ffnn_status st = FFNN_OK;
    for (int i = 0; i < count && st == FFNN_OK; i++)
        st = check_member(members, i);
    if (st != FFNN_OK)
        return st;
    ffnn_model *e = calloc(1, sizeof *e);
    if (!e || !(e->members = calloc((size_t)count, sizeof *e->members))) {
        free(e);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "ffnn_model_ensemble: out of memory");
    }
    e->member_count = count;
    for (int i = 0; i < count && st == FFNN_OK; i++) {
        st = clone_model(members[i], &e->members[i]);
        e->parameter_count += st == FFNN_OK ? members[i]->parameter_count : 0;
    }
    e->input_size = members[0]->input_size;
    e->output_width = ffnn_model_out(members[0]);
    e->loss = members[0]->loss;
    e->has_loss = 1;
    if (st == FFNN_OK)
        st = ffnn_model_set_class_names(e, (const char *const *)members[0]->class_names,
                                        members[0]->class_name_count);
    if (st == FFNN_OK)
        st = ffnn_model_set_table_json(e, members[0]->table);
    if (st != FFNN_OK) {
        ffnn_model_free(e);
        return st;
    }
    *out = e;
    return FFNN_OK;
}

int ffnn_model_member_count(const ffnn_model *m)
{
    return m ? m->member_count : 0;
}

const ffnn_model *ffnn_model_member(const ffnn_model *m, int i)
{
    return m && i >= 0 && i < m->member_count ? m->members[i] : NULL;
}

/* "ensemble of K: ARCH0, ARCH1, ..." into buf [buf_size], as snprintf. */
size_t ffnn_ensemble_arch_string(const ffnn_model *m, char *buf, size_t buf_size)
{
    size_t n = 0;
    char head[48];
    int h = snprintf(head, sizeof head, "ensemble of %d: ", m->member_count);
    for (int i = 0; i < h; i++, n++)
        if (n + 1 < buf_size)
            buf[n] = head[i];
    for (int i = 0; i < m->member_count; i++) {
        if (i) {
            if (n + 1 < buf_size)
                buf[n] = ',';
            if (n + 2 < buf_size)
                buf[n + 1] = ' ';
            n += 2;
        }
        size_t room = n < buf_size ? buf_size - n : 0;
        n += ffnn_model_arch_string(m->members[i], room ? buf + n : NULL, room);
    }
    if (buf_size)
        buf[n < buf_size ? n : buf_size - 1] = '\0';
    return n;
}
