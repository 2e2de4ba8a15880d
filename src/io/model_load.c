/*
 * model_load.c - ffnn_model_load: an ffnn model from a safetensors file
 * (io/safetensors.h, docs/FORMATS.md). ffnn's tensors are layers.<i>.weight F32
 * [out, fan_in] ([out, in] for a dense layer, [out, R] for a local1d layer: the
 * arch string tells which), layers.<i>.bias F32 [out] and the optional
 * standardize.* tensors; the metadata holds format "ffnn-model", arch, loss and
 * ffnn_version (and class_names, table, interrupted).
 *
 * After the format's checks (ffnn_st_read_layout), what ffnn needs (metadata,
 * every tensor of the architecture present with its shape, F32, no zero
 * dimension, nothing extra), and only then it allocates the model and reads
 * the data.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/model.h"
#include "data/table.h"
#include "io/model_file.h"
#include "io/safetensors.h"

/* ------------------------------------------------------------ metadata */

/* The metadata values ffnn reads (pointers into the cJSON tree). */
typedef struct st_meta {
    const char *format, *arch, *loss, *version, *interrupted;
    const char *class_names; /* a JSON array of strings, as text, or NULL */
    const char *table;       /* the input encoding (data/table.h), JSON text, or NULL */
} st_meta;

/* The optional standardisation tensors (docs/FORMATS.md), stat 1-4 (model_file.h). */
const char *const ffnn_st_stat_names[5] = {
    NULL, "standardize.input.mean", "standardize.input.scale", "standardize.target.mean",
    "standardize.target.scale"};

/* Store value under its key; unknown keys are errors. */
static ffnn_status st_meta_field(const st_reader *r, const cJSON *c, st_meta *meta)
{
    char found[64];

    if (!cJSON_IsString(c)) {
        ffnn_st_describe(c, found, sizeof found);
        return ffnn_st_fail(r, "__metadata__ \"%s\": expected a string value, found %s",
                       c->string, found);
    }
    const struct {
        const char *key;
        const char **field;
    } keys[] = {{"format", &meta->format},           {"arch", &meta->arch},
                {"loss", &meta->loss},               {"ffnn_version", &meta->version},
                {"interrupted", &meta->interrupted}, {"class_names", &meta->class_names},
                {"table", &meta->table}};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (strcmp(c->string, keys[k].key) == 0) {
            *keys[k].field = c->valuestring;
            return FFNN_OK;
        }
    return ffnn_st_fail(r, "__metadata__: unknown key \"%s\" (expected format, arch, loss, "
                        "ffnn_version, interrupted, class_names, table)", c->string);
}

/* "__metadata__": format "ffnn-model", arch, loss (ce|bce|mse), optional
 * ffnn_version; *loss parsed. */
static ffnn_status st_read_metadata(const st_reader *r, st_meta *meta, ffnn_loss *loss)
{
    const cJSON *md = NULL;
    ffnn_status st = ffnn_st_metadata_object(r, "an ffnn model file records format \""
                                             ST_FORMAT "\", arch and loss there", &md);
    if (st != FFNN_OK)
        return st;
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(md, "format");
    if (cJSON_IsString(format) && strcmp(format->valuestring, "ffnn-checkpoint") == 0)
        return ffnn_st_fail(r, "__metadata__ \"format\": expected \"" ST_FORMAT "\", found "
                            "\"ffnn-checkpoint\" (a training checkpoint: load it with "
                            "ffnn_checkpoint_load; its weights are the layers.* tensors)");
    for (const cJSON *c = md->child; c; c = c->next)
        if ((st = st_meta_field(r, c, meta)) != FFNN_OK)
            return st;
    if (!meta->format || strcmp(meta->format, ST_FORMAT) != 0)
        return ffnn_st_fail(r, "__metadata__ \"format\": expected \"" ST_FORMAT "\", found %s%.40s%s",
                       meta->format ? "\"" : "", meta->format ? meta->format : "none",
                       meta->format ? "\"" : "");
    if (!meta->arch || !meta->loss)
        return ffnn_st_fail(r, "__metadata__: missing \"%s\"", meta->arch ? "loss" : "arch");
    if (meta->version && strlen(meta->version) >= ST_VERSION_MAX)
        return ffnn_st_fail(r, "__metadata__ \"ffnn_version\": expected at most %d characters, "
                       "found %zu", ST_VERSION_MAX - 1, strlen(meta->version));
    if (meta->interrupted && strlen(meta->interrupted) >= ST_INTERRUPTED_MAX)
        return ffnn_st_fail(r, "__metadata__ \"interrupted\": expected at most %d characters, "
                       "found %zu", ST_INTERRUPTED_MAX - 1, strlen(meta->interrupted));
    if (ffnn_loss_from_name(meta->loss, loss) != FFNN_OK) {
        char context[600];
        snprintf(context, sizeof context, "%s: header: __metadata__ \"loss\"", r->path);
        return ffnn_fail_context(FFNN_ERR_FORMAT, context);
    }
    return FFNN_OK;
}

/* ------------------------------------------------------------ matching the model */

/* Layer index and kind of "layers.<i>.weight" / "layers.<i>.bias" (i in plain
 * decimal, no leading zeros); 0 when the name has another form. */
static int st_parse_name(const char *name, long *layer, int *is_bias)
{
    const char *p = name + 7;
    char *end;

    if (strncmp(name, "layers.", 7) != 0 || *p < '0' || *p > '9' || (*p == '0' && p[1] != '.'))
        return 0;
    errno = 0;
    *layer = strtol(p, &end, 10);
    if (errno || *end != '.')
        return 0;
    *is_bias = strcmp(end + 1, "bias") == 0;
    return *is_bias || strcmp(end + 1, "weight") == 0;
}

/* t has the dtype, shape and name of a tensor of m; records where it goes. */
ffnn_status ffnn_st_match_tensor(const st_reader *r, const ffnn_model *m, const char *arch,
                                   st_tensor *t, unsigned char *seen)
{
    char text[160], want[64];
    long i = 0;
    int bias = 0;

    if (!st_parse_name(t->name, &i, &bias) || i >= m->layer_count)
        return ffnn_st_fail(r, "unexpected tensor \"%s\": architecture %s has the tensors "
                       "layers.0.weight ... layers.%d.weight and their biases", t->name,
                       arch, m->layer_count - 1);
    const ffnn_layer *l = &m->layers[i];
    if (bias && !l->has_bias)
        return ffnn_st_fail(r, "unexpected tensor \"%s\": layer %ld has no bias in architecture "
                       "%s (':nobias')", t->name, i, arch);
    if (strcmp(t->dtype->name, "F32") != 0)
        return ffnn_st_fail(r, "tensor \"%s\": dtype %s, expected F32 (ffnn's parameters are "
                       "float32)", t->name, t->dtype->name);
    ffnn_st_shape_text(t->shape, text, sizeof text);
    if (t->zero_dim >= 0)
        return ffnn_st_fail(r, "tensor \"%s\": shape %s has a zero dimension (dimension %d); a "
                       "layer's weight and bias have none", t->name, text, t->zero_dim);
    size_t shape[2];
    const int rank = bias ? 1 : ffnn_layer_weight_shape(l, shape);
    if (bias)
        shape[0] = l->out;
    if (rank == 1)
        snprintf(want, sizeof want, "[%zu]", shape[0]);
    else
        snprintf(want, sizeof want, "[%zu, %zu]", shape[0], shape[1]);
    if ((int)t->rank != rank || t->dims[0] != shape[0] || (rank == 2 && t->dims[1] != shape[1]))
        return ffnn_st_fail(r, "tensor \"%s\": shape %s, expected %s for layer %ld of "
                       "architecture %s (%s)", t->name, text, want, i, arch,
                       l->kind == FFNN_LAYER_LOCAL1D ? "local1d: weight [out, R], bias [out]"
                       : l->kind == FFNN_LAYER_EMBEDDING
                           ? "embedding: weight [sum of levels x dims], the tables in order"
                           : "weight [out, in], bias [out]");
    t->param_offset = bias ? l->bias_offset : l->weight_offset;
    seen[2 * i + bias] = 1;
    return FFNN_OK;
}

/* The file's tensors are exactly those of m: none extra, none missing. */
static ffnn_status st_match_model(const st_reader *r, const ffnn_model *m)
{
    size_t arch_size = ffnn_arch_format_size(m->layer_count);
    char *arch = malloc(arch_size);
    unsigned char *seen = calloc(2 * (size_t)m->layer_count, 1);
    ffnn_status st = FFNN_OK;

    if (!seen || !arch) {
        free(seen);
        free(arch);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory", r->path);
    }
    ffnn_model_arch_string(m, arch, arch_size);
    int stats = 0; /* bit s: standardize tensor s seen */
    for (size_t k = 0; k < r->count && st == FFNN_OK; k++) {
        st_tensor *t = &r->tensors[k];
        t->stat = 0;
        for (int s = 1; s <= 4; s++)
            if (strcmp(t->name, ffnn_st_stat_names[s]) == 0)
                t->stat = s;
        if (!t->stat) {
            st = ffnn_st_match_tensor(r, m, arch, t, seen);
            continue;
        }
        size_t want = t->stat <= 2 ? m->input_size : m->layers[m->layer_count - 1].out;
        if (strcmp(t->dtype->name, "F32") != 0 || t->rank != 1 || t->dims[0] != want)
            st = ffnn_st_fail(r, "tensor \"%s\": expected F32 of shape [%zu] (the model's %s), "
                              "found %s of rank %d", t->name, want,
                              t->stat <= 2 ? "inputs" : "outputs", t->dtype->name, t->rank);
        stats |= 1 << t->stat;
    }
    for (int s = 1; s <= 3 && st == FFNN_OK; s += 2) /* a mean needs its scale and back */
        if (!(stats >> s & 1) != !(stats >> (s + 1) & 1))
            st = ffnn_st_fail(r, "tensor \"%s\" without \"%s\" (a standardisation needs "
                              "both)", ffnn_st_stat_names[stats >> s & 1 ? s : s + 1],
                              ffnn_st_stat_names[stats >> s & 1 ? s + 1 : s]);
    for (int i = 0; i < m->layer_count && st == FFNN_OK; i++) {
        if (!seen[2 * i])
            st = ffnn_st_fail(r, "missing tensor \"layers.%d.weight\" (architecture %s)", i, arch);
        else if (m->layers[i].has_bias && !seen[2 * i + 1])
            st = ffnn_st_fail(r, "missing tensor \"layers.%d.bias\" (architecture %s)", i, arch);
    }
    free(seen);
    free(arch);
    return st;
}

/* ------------------------------------------------------------ data */

/* Every tensor's data into the model's arena; NaN and Inf are refused. */
static ffnn_status st_read_data(st_reader *r, ffnn_model *m)
{
    char what[160];
    ffnn_status st;

    size_t in = m->input_size, out = m->layers[m->layer_count - 1].out;
    float *stat = calloc(2 * in + 2 * out, sizeof *stat); /* the standardize tensors */
    float *stat_at[5] = {NULL, stat, stat + in, stat + 2 * in, stat + 2 * in + out};
    int have[5] = {0, 0, 0, 0, 0};
    if (!stat)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory", r->path);
    st = FFNN_OK;
    for (size_t k = 0; k < r->count && st == FFNN_OK; k++) {
        const st_tensor *t = &r->tensors[k];
        float *dst = t->stat ? stat_at[t->stat] : m->params + t->param_offset; /* [n] */
        size_t n = (size_t)((t->end - t->begin) / 4), bad;
        uint64_t at = ffnn_st_data_start(r) + t->begin;
        snprintf(what, sizeof what, "tensor \"%.120s\"", t->name);
        if ((st = ffnn_st_read_at(r, at, dst, n * 4, what)) != FFNN_OK)
            break;
        if ((bad = ffnn_st_decode_f32(dst, n)) < n)
            st = ffnn_st_fail_at(r, at + 4 * bad, "tensor \"%s\" element %zu is %g: expected a "
                                 "finite number", t->name, bad, (double)dst[bad]);
        for (size_t j = 0; st == FFNN_OK && (t->stat == 2 || t->stat == 4) && j < n; j++)
            if (!(dst[j] > 0.0f))
                st = ffnn_st_fail_at(r, at + 4 * j, "tensor \"%s\" element %zu is %g: "
                                     "expected a positive scale", t->name, j, (double)dst[j]);
        have[t->stat] = 1;
    }
    if (st == FFNN_OK && (have[1] || have[3]))
        st = ffnn_model_set_standardization(m, have[1] ? stat_at[1] : NULL,
                                            have[1] ? stat_at[2] : NULL,
                                            have[3] ? stat_at[3] : NULL,
                                            have[3] ? stat_at[4] : NULL);
    free(stat);
    return st;
}

/* ------------------------------------------------------------ loading */

/* The loss must fit the last layer (ffnn_model_check_loss, the rule that
 * ffnn_model_save, ffnn_trainer_create and ffnn_model_predict apply too). */
static ffnn_status st_check_loss(const st_reader *r, const ffnn_model *m, ffnn_loss loss)
{
    if (ffnn_model_check_loss(m, loss) == FFNN_OK)
        return FFNN_OK;
    char why[512];
    snprintf(why, sizeof why, "%s", ffnn_last_error());
    return ffnn_st_fail(r, "__metadata__: %s", why);
}

/* __metadata__ "class_names": a JSON array of ffnn_model_class_count(m) distinct
 * strings, as text. */
static ffnn_status st_read_class_names(const st_reader *r, const char *text, ffnn_model *m)
{
    cJSON *a = cJSON_Parse(text);
    size_t out = ffnn_model_out(m);
    int classes = out == 1 ? 2 : (int)out; /* ffnn_model_class_count */
    int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
    const char **names = n == classes ? calloc((size_t)n, sizeof *names) : NULL;
    ffnn_status st = FFNN_OK;
    if (n != classes)
        st = ffnn_st_fail(r, "__metadata__ \"class_names\": expected a JSON array of %d "
                          "strings (the model's classes), found %s", classes,
                          n < 0 ? "something else" : "another count");
    else if (!names)
        st = ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory", r->path);
    int i = 0;
    for (const cJSON *c = a ? a->child : NULL; st == FFNN_OK && c; c = c->next, i++) {
        if (!cJSON_IsString(c))
            st = ffnn_st_fail(r, "__metadata__ \"class_names\": element %d is not a string", i);
        else
            names[i] = c->valuestring;
        for (int k = 0; st == FFNN_OK && k < i; k++)
            if (strcmp(names[k], names[i]) == 0)
                st = ffnn_st_fail(r, "__metadata__ \"class_names\": elements %d and %d are "
                                  "the same", k, i);
    }
    if (st == FFNN_OK)
        st = ffnn_model_set_class_names(m, names, classes);
    free(names);
    cJSON_Delete(a);
    return st;
}

/* __metadata__ "table": a fitted table encoding (data/table.h) whose width is
 * the model's input size. */
static ffnn_status st_read_table(const st_reader *r, const char *text, ffnn_model *m)
{
    ffnn_table *t = NULL;
    ffnn_status st = ffnn_table_from_json(text, &t);
    if (st != FFNN_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", ffnn_last_error());
        return ffnn_st_fail(r, "__metadata__ \"table\": %s", why);
    }
    size_t width = t->width;
    ffnn_table_free(t);
    if (width != m->input_size)
        return ffnn_st_fail(r, "__metadata__ \"table\": encodes %zu inputs, expected %zu (the "
                            "model's)", width, m->input_size);
    return ffnn_model_set_table_json(m, text);
}

/* The model of the metadata, matched against the tensors, then filled in. */
static ffnn_status st_build_model(st_reader *r, ffnn_model **out, ffnn_model_file_info *info)
{
    st_meta meta = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    ffnn_status st = st_read_metadata(r, &meta, &info->loss);
    char context[600];

    if (st != FFNN_OK)
        return st;
    snprintf(info->ffnn_version, sizeof info->ffnn_version, "%s",
             meta.version ? meta.version : "");
    snprintf(info->interrupted, sizeof info->interrupted, "%s",
             meta.interrupted ? meta.interrupted : "");
    if (ffnn_model_create_layout(meta.arch, out) != FFNN_OK) {
        snprintf(context, sizeof context, "%s: header: __metadata__ \"arch\"", r->path);
        return ffnn_fail_context(FFNN_ERR_FORMAT, context);
    }
    /* the tensors tile the file's data section: matched, the parameters are
     * bounded by the file's size before they are allocated */
    if ((st = st_match_model(r, *out)) != FFNN_OK ||
        (meta.class_names && (st = st_read_class_names(r, meta.class_names, *out)) != FFNN_OK))
        return st;
    if ((st = st_check_loss(r, *out, info->loss)) != FFNN_OK ||
        (meta.table && (st = st_read_table(r, meta.table, *out)) != FFNN_OK))
        return st;
    (*out)->loss = info->loss; /* the model remembers how its outputs are read */
    (*out)->has_loss = 1;
    if ((st = ffnn_model_alloc_params(*out)) != FFNN_OK)
        return ffnn_fail_context_at(st, r->path, "");
    return st_read_data(r, *out);
}

/* ------------------------------------------------------------ ensembles */

/* An ensemble file's metadata (docs/FORMATS.md "Ensemble model files"):
 * format, members K, member.<i>.arch for i < K, loss, and the optional keys of
 * a model file but arch. */
typedef struct st_ensemble_meta {
    st_meta common;          /* format, loss, version, interrupted, class names, table */
    int members;
    const char **arch;       /* [members] */
} st_ensemble_meta;

/* i of "PREFIX<i>SUFFIX..." (plain decimal, no leading zero, < limit), the rest after
 * it in *rest; -1 when name has another form. */
static long st_member_index(const char *name, const char *prefix, long limit, const char **rest)
{
    size_t n = strlen(prefix);
    const char *p = name + n;
    char *end;
    if (strncmp(name, prefix, n) != 0 || *p < '0' || *p > '9' || (*p == '0' && p[1] != '.'))
        return -1;
    errno = 0;
    long i = strtol(p, &end, 10);
    if (errno || *end != '.' || i >= limit)
        return -1;
    *rest = end + 1;
    return i;
}

static ffnn_status st_read_ensemble_metadata(const st_reader *r, st_ensemble_meta *em,
                                             ffnn_loss *loss)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(r->root, "__metadata__");
    const cJSON *members = cJSON_GetObjectItemCaseSensitive(md, "members");
    ffnn_status st = ffnn_st_check_unique_keys(r, md, "__metadata__");
    char *end = NULL;
    long k = cJSON_IsString(members) ? strtol(members->valuestring, &end, 10) : 0;
    if (st != FFNN_OK)
        return st;
    if (!end || *end || members->valuestring[0] < '1' || members->valuestring[0] > '9' || k < 1 ||
        k > FFNN_ENSEMBLE_MAX_MEMBERS)
        return ffnn_st_fail(r, "__metadata__ \"members\": expected the member count as a "
                            "decimal string in [1, %d]", FFNN_ENSEMBLE_MAX_MEMBERS);
    em->members = (int)k;
    if (!(em->arch = calloc((size_t)k, sizeof *em->arch)))
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory", r->path);
    for (const cJSON *c = md->child; c && st == FFNN_OK; c = c->next) {
        const char *rest = NULL;
        long i = st_member_index(c->string, "member.", k, &rest);
        if (i >= 0 && strcmp(rest, "arch") == 0 && cJSON_IsString(c))
            em->arch[i] = c->valuestring;
        else if (strcmp(c->string, "members") == 0)
            continue;
        else if (strcmp(c->string, "arch") == 0)
            st = ffnn_st_fail(r, "__metadata__: \"arch\" in an ensemble file (each member's "
                              "is member.<i>.arch)");
        else if (!cJSON_IsString(c))
            st = st_meta_field(r, c, &em->common); /* its message: not a string */
        else if ((st = st_meta_field(r, c, &em->common)) != FFNN_OK)
            st = ffnn_st_fail(r, "__metadata__: unknown key \"%s\" (an ensemble file has "
                              "format, members, member.<i>.arch for i < %ld, loss, "
                              "ffnn_version, interrupted, class_names, table)", c->string, k);
    }
    for (long i = 0; i < k && st == FFNN_OK; i++)
        if (!em->arch[i])
            st = ffnn_st_fail(r, "__metadata__: missing \"member.%ld.arch\" (%ld members)", i, k);
    if (st == FFNN_OK && !em->common.loss)
        st = ffnn_st_fail(r, "__metadata__: missing \"loss\"");
    if (st == FFNN_OK && em->common.version && strlen(em->common.version) >= ST_VERSION_MAX)
        st = ffnn_st_fail(r, "__metadata__ \"ffnn_version\": expected at most %d characters",
                          ST_VERSION_MAX - 1);
    if (st == FFNN_OK && em->common.interrupted &&
        strlen(em->common.interrupted) >= ST_INTERRUPTED_MAX)
        st = ffnn_st_fail(r, "__metadata__ \"interrupted\": expected at most %d characters",
                          ST_INTERRUPTED_MAX - 1);
    if (st == FFNN_OK && ffnn_loss_from_name(em->common.loss, loss) != FFNN_OK) {
        char context[600];
        snprintf(context, sizeof context, "%s: header: __metadata__ \"loss\"", r->path);
        st = ffnn_fail_context(FFNN_ERR_FORMAT, context);
    }
    return st;
}

/* Member i of the ensemble file r: its tensors ("members.<i>." stripped) matched
 * against its architecture and read, as a model file's are; its messages name
 * "PATH (member i)". */
static ffnn_status st_read_member(st_reader *r, const char *arch, int i, ffnn_loss loss,
                                  ffnn_model **out)
{
    char path[600], prefix[32];
    snprintf(path, sizeof path, "%s (member %d)", r->path, i);
    snprintf(prefix, sizeof prefix, "members.%d.", i);
    st_reader sub = *r;
    sub.path = path;
    sub.count = 0;
    if (!(sub.tensors = calloc(r->count ? r->count : 1, sizeof *sub.tensors)))
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory", r->path);
    for (size_t k = 0; k < r->count; k++)
        if (strncmp(r->tensors[k].name, prefix, strlen(prefix)) == 0) {
            sub.tensors[sub.count] = r->tensors[k];
            sub.tensors[sub.count++].name += strlen(prefix);
        }
    ffnn_status st = FFNN_OK;
    if (ffnn_model_create_layout(arch, out) != FFNN_OK) {
        char context[700];
        snprintf(context, sizeof context, "%s: header: __metadata__ \"member.%d.arch\"",
                 r->path, i);
        st = ffnn_fail_context(FFNN_ERR_FORMAT, context);
    }
    if (st == FFNN_OK && (st = st_match_model(&sub, *out)) == FFNN_OK &&
        (st = st_check_loss(&sub, *out, loss)) == FFNN_OK &&
        (st = ffnn_model_alloc_params(*out)) == FFNN_OK)
        st = st_read_data(&sub, *out);
    if (st == FFNN_OK)
        (*out)->loss = loss, (*out)->has_loss = 1;
    free(sub.tensors);
    return st;
}

/* An ensemble file: every tensor a member's, each member read, the members of
 * one input and output width; class names and table given to each member. */
static ffnn_status st_build_ensemble(st_reader *r, ffnn_model **out, ffnn_model_file_info *info)
{
    st_ensemble_meta em;
    memset(&em, 0, sizeof em);
    ffnn_status st = st_read_ensemble_metadata(r, &em, &info->loss);
    for (size_t k = 0; k < r->count && st == FFNN_OK; k++) {
        const char *rest = NULL;
        if (st_member_index(r->tensors[k].name, "members.", em.members, &rest) < 0)
            st = ffnn_st_fail(r, "unexpected tensor \"%s\": an ensemble file of %d members "
                              "has the tensors members.<i>.* for i < %d", r->tensors[k].name,
                              em.members, em.members);
    }
    ffnn_model *e = st == FFNN_OK ? calloc(1, sizeof *e) : NULL;
    if (st == FFNN_OK && (!e || !(e->members = calloc((size_t)em.members, sizeof *e->members))))
        st = ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory", r->path);
    for (int i = 0; st == FFNN_OK && i < em.members; i++) {
        e->member_count = i + 1;
        st = st_read_member(r, em.arch[i], i, info->loss, &e->members[i]);
        const ffnn_model *m = e->members[i], *first = e->members[0];
        if (st == FFNN_OK && (m->input_size != first->input_size ||
                              ffnn_model_out(m) != ffnn_model_out(first)))
            st = ffnn_st_fail(r, "__metadata__ \"member.%d.arch\": %zu inputs and %zu outputs, "
                              "member 0 has %zu and %zu (an ensemble's members share them)",
                              i, m->input_size, ffnn_model_out(m), first->input_size,
                              ffnn_model_out(first));
        e->parameter_count += st == FFNN_OK ? m->parameter_count : 0;
    }
    if (e && st == FFNN_OK) {
        e->input_size = e->members[0]->input_size;
        e->output_width = ffnn_model_out(e->members[0]);
        e->loss = info->loss, e->has_loss = 1;
    }
    for (int i = -1; st == FFNN_OK && i < em.members; i++) { /* the ensemble, then each member */
        ffnn_model *m = i < 0 ? e : e->members[i];
        if (em.common.class_names)
            st = st_read_class_names(r, em.common.class_names, m);
        if (st == FFNN_OK && em.common.table)
            st = st_read_table(r, em.common.table, m);
    }
    if (st == FFNN_OK) {
        snprintf(info->ffnn_version, sizeof info->ffnn_version, "%s",
                 em.common.version ? em.common.version : "");
        snprintf(info->interrupted, sizeof info->interrupted, "%s",
                 em.common.interrupted ? em.common.interrupted : "");
    }
    free(em.arch);
    *out = e;
    return st;
}

/* The format named by __metadata__, or NULL. */
static const char *st_format(const st_reader *r)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(r->root, "__metadata__");
    const cJSON *f = cJSON_IsObject(md) ? cJSON_GetObjectItemCaseSensitive(md, "format") : NULL;
    return cJSON_IsString(f) ? f->valuestring : NULL;
}

ffnn_status ffnn_model_load(const char *path, ffnn_model **out, ffnn_model_file_info *info)
{
    st_reader r;
    ffnn_model *m = NULL;
    ffnn_model_file_info meta;
    ffnn_status st;

    if (!path || !out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_load: NULL argument");
    memset(&r, 0, sizeof r);
    memset(&meta, 0, sizeof meta);
    r.path = path;
    st = ffnn_st_read_layout(&r);
    if (st == FFNN_OK) {
        const char *format = st_format(&r);
        st = format && strcmp(format, ST_ENSEMBLE_FORMAT) == 0 ? st_build_ensemble(&r, &m, &meta)
                                                              : st_build_model(&r, &m, &meta);
    }
    ffnn_st_close(&r);
    if (st != FFNN_OK) {
        ffnn_model_free(m);
        return st;
    }
    *out = m;
    if (info)
        *info = meta;
    return FFNN_OK;
}
