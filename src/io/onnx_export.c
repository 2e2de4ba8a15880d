/* onnx_export.c - a model as an ONNX file (ffnn_model_export_onnx), written
 * with protobuf-c over the onnx project's schema (src/io/onnx/onnx.proto; the
 * Makefile generates its onnx.pb-c.c/h into build/gen/ with protoc-c). Opset 17 (ai.onnx), IR version
 * 8. The graph, input "x" [batch, in] float32 -> output "y" [batch, out]:
 *   Sub(input_mean), Div(input_scale)          the stored standardisation
 *   per layer: dense   Gemm(x, W [out, in], b, transB = 1)
 *              local1d [Pad] -> Gather(axis 1, indices [M, R]) -> Mul(W [M, R])
 *                      -> ReduceSum(axis 2) -> Add(b)
 *              embedding  Slice (the passed columns); per table: Slice (its code),
 *                      Where(a level? code : n) -> Cast(int64) -> Gather(table
 *                      [n + 1, d] with a zero last row, axis 0) -> Flatten;
 *                      Concat(axis 1)
 *              then its activation: Relu, Sigmoid, Tanh, LeakyRelu(alpha),
 *              Elu(alpha), Softplus, HardSwish; the ones without an op in opset
 *              17 as their definitions: gelu x (1 + Erf(x / sqrt 2)) / 2,
 *              gelu_tanh x (1 + Tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2,
 *              silu x Sigmoid(x), mish x Tanh(Softplus(x))
 *   the head: Softmax(axis 1) (ce), Sigmoid (bce), Mul(target_scale),
 *             Add(target_mean) (mse with target standardisation)
 * An ensemble model: each member's graph as above on "x" (its own standardisation
 * and head: probabilities, or outputs in the targets' units), then Mean of the
 * members' outputs.
 * metadata_props: ffnn_version, arch, loss, class_names (a JSON array). */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/local1d.h"
#include "core/model.h"
#include "io/atomic_file.h"
#include "io/onnx/onnx.pb-c.h"

#define OPSET 17
#define IR_VERSION 8

/* The graph being built; every allocation is recorded and freed at the end. */
typedef struct onnx_builder {
    void **blocks;
    size_t n_blocks, cap_blocks;
    Onnx__NodeProto **nodes;
    size_t n_nodes, cap_nodes;
    Onnx__TensorProto **inits;
    size_t n_inits, cap_inits;
    int names;   /* the next value's number */
    int failed;  /* an allocation failed   */
} onnx_builder;

static void *ob_alloc(onnx_builder *b, size_t bytes)
{
    void *p = b->failed ? NULL : calloc(1, bytes ? bytes : 1);
    if (p && b->n_blocks == b->cap_blocks) {
        size_t cap = b->cap_blocks ? 2 * b->cap_blocks : 256;
        void **grown = realloc(b->blocks, cap * sizeof *grown);
        if (!grown) {
            free(p);
            p = NULL;
        } else {
            b->blocks = grown, b->cap_blocks = cap;
        }
    }
    if (!p) {
        b->failed = 1;
        return NULL;
    }
    b->blocks[b->n_blocks++] = p;
    return p;
}

static char *ob_printf(onnx_builder *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    char *s = ob_alloc(b, strlen(tmp) + 1);
    if (s)
        strcpy(s, tmp);
    return s;
}

static int ob_push(onnx_builder *b, void ***arr, size_t *n, size_t *cap, void *item)
{
    if (!item || b->failed)
        return b->failed = 1, 0;
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        void **grown = realloc(*arr, c * sizeof *grown);
        if (!grown)
            return b->failed = 1, 0;
        *arr = grown, *cap = c;
    }
    (*arr)[(*n)++] = item;
    return 1;
}

/* An initializer: float32 [dims] from data (copied), or int64 from idata. */
static const char *ob_tensor(onnx_builder *b, const char *what, const int64_t *dims, size_t nd,
                             const float *data, const int64_t *idata, size_t count)
{
    Onnx__TensorProto *t = ob_alloc(b, sizeof *t);
    int64_t *d = ob_alloc(b, (nd ? nd : 1) * sizeof *d);
    void *copy = ob_alloc(b, (count ? count : 1) * (data ? sizeof(float) : sizeof(int64_t)));
    char *name = ob_printf(b, "%s_%d", what, b->names++);
    if (!t || !d || !copy || !name)
        return NULL;
    onnx__tensor_proto__init(t);
    if (nd) /* a scalar has no dims */
        memcpy(d, dims, nd * sizeof *d);
    t->n_dims = nd, t->dims = d, t->name = name;
    t->has_data_type = 1;
    if (data) {
        memcpy(copy, data, count * sizeof(float));
        t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
        t->n_float_data = count, t->float_data = copy;
    } else {
        memcpy(copy, idata, count * sizeof(int64_t));
        t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
        t->n_int64_data = count, t->int64_data = copy;
    }
    ob_push(b, (void ***)&b->inits, &b->n_inits, &b->cap_inits, t);
    return name;
}

/* A float32 scalar initializer (shape []). */
static const char *ob_scalar(onnx_builder *b, float v)
{
    return ob_tensor(b, "c", NULL, 0, &v, NULL, 1);
}

/* A node op(inputs) -> a new value (or `output` when not NULL); returns the
 * node (attributes are added to it) and *out its output's name. */
static Onnx__NodeProto *ob_node(onnx_builder *b, const char *op, const char *const *inputs,
                                size_t n_in, const char *output, const char **out)
{
    Onnx__NodeProto *n = ob_alloc(b, sizeof *n);
    char **in = ob_alloc(b, n_in * sizeof *in), **o = ob_alloc(b, sizeof *o);
    const char *name = output ? output : ob_printf(b, "v%d", b->names++);
    for (size_t i = 0; in && i < n_in; i++) /* before *out is set: inputs may be out */
        if (!(in[i] = (char *)inputs[i]))
            b->failed = 1;
    *out = NULL;
    if (!n || !in || !o || !name || b->failed)
        return b->failed = 1, NULL;
    onnx__node_proto__init(n);
    n->op_type = (char *)op;
    n->name = ob_printf(b, "%s_%d", op, b->names++);
    n->n_input = n_in, n->input = in;
    o[0] = (char *)name;
    n->n_output = 1, n->output = o;
    ob_push(b, (void ***)&b->nodes, &b->n_nodes, &b->cap_nodes, n);
    *out = name;
    return n;
}

static const char *ob_op1(onnx_builder *b, const char *op, const char *x)
{
    const char *out;
    ob_node(b, op, &x, 1, NULL, &out);
    return out;
}

static const char *ob_op2(onnx_builder *b, const char *op, const char *x, const char *y)
{
    const char *in[2] = {x, y}, *out;
    ob_node(b, op, in, 2, NULL, &out);
    return out;
}

/* An attribute of type f (float) or i (int64) on node n. */
static void ob_attr(onnx_builder *b, Onnx__NodeProto *n, const char *name, int is_float, float f,
                    int64_t i)
{
    Onnx__AttributeProto *a = ob_alloc(b, sizeof *a);
    Onnx__AttributeProto **list = ob_alloc(b, (n ? n->n_attribute + 1 : 1) * sizeof *list);
    if (!a || !list || !n)
        return (void)(b->failed = 1);
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1;
    if (is_float)
        a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, a->has_f = 1, a->f = f;
    else
        a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, a->has_i = 1, a->i = i;
    if (n->n_attribute)
        memcpy(list, n->attribute, n->n_attribute * sizeof *list);
    list[n->n_attribute++] = a;
    n->attribute = list;
}

/* The activation act(param) of x, as ONNX ops (the file's comment). */
static const char *emit_activation(onnx_builder *b, ffnn_activation act, float param,
                                   const char *x)
{
    const char *out;
    Onnx__NodeProto *n;
    switch (act) {
    case FFNN_ACT_IDENTITY: return x;
    case FFNN_ACT_RELU: return ob_op1(b, "Relu", x);
    case FFNN_ACT_SIGMOID: return ob_op1(b, "Sigmoid", x);
    case FFNN_ACT_TANH: return ob_op1(b, "Tanh", x);
    case FFNN_ACT_SOFTPLUS: return ob_op1(b, "Softplus", x);
    case FFNN_ACT_LEAKY_RELU:
    case FFNN_ACT_ELU:
        n = ob_node(b, act == FFNN_ACT_ELU ? "Elu" : "LeakyRelu", &x, 1, NULL, &out);
        ob_attr(b, n, "alpha", 1, param, 0);
        return out;
    case FFNN_ACT_HARDSWISH: return ob_op1(b, "HardSwish", x); /* x max(0, min(1, x/6 + 1/2)) */
    case FFNN_ACT_SILU: return ob_op2(b, "Mul", x, ob_op1(b, "Sigmoid", x));
    case FFNN_ACT_MISH: return ob_op2(b, "Mul", x, ob_op1(b, "Tanh", ob_op1(b, "Softplus", x)));
    case FFNN_ACT_GELU: { /* x (1 + erf(x / sqrt 2)) / 2 */
        const char *e = ob_op1(b, "Erf", ob_op2(b, "Mul", x, ob_scalar(b, 0.707106781186547524f)));
        const char *h = ob_op2(b, "Mul", x, ob_op2(b, "Add", e, ob_scalar(b, 1.0f)));
        return ob_op2(b, "Mul", h, ob_scalar(b, 0.5f));
    }
    case FFNN_ACT_GELU_TANH: { /* x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2 */
        const char *cube = ob_op2(b, "Mul", ob_op2(b, "Mul", x, x), x);
        const char *u = ob_op2(b, "Add", x, ob_op2(b, "Mul", cube, ob_scalar(b, 0.044715f)));
        const char *t = ob_op1(b, "Tanh", ob_op2(b, "Mul", u, ob_scalar(b, 0.797884560802865356f)));
        const char *h = ob_op2(b, "Mul", x, ob_op2(b, "Add", t, ob_scalar(b, 1.0f)));
        return ob_op2(b, "Mul", h, ob_scalar(b, 0.5f));
    }
    }
    b->failed = 1;
    return NULL;
}

/* A local1d layer l on x [batch, N] -> [batch, M] (before its activation). */
static const char *emit_local1d(onnx_builder *b, const ffnn_model *m, const ffnn_layer *l,
                                const char *x)
{
    const size_t N = l->in, M = l->out, R = l->spec.local1d.R;
    const size_t pad = ffnn_local1d_pad(R, l->spec.local1d.padding);
    int64_t *idx = malloc(M * R * sizeof *idx); /* [M, R]: input m + r of the padded row */
    if (!idx)
        return b->failed = 1, NULL;
    for (size_t i = 0; i < M; i++)
        for (size_t r = 0; r < R; r++)
            idx[i * R + r] = (int64_t)(i + r);
    const int64_t dims[2] = {(int64_t)M, (int64_t)R};
    const char *indices = ob_tensor(b, "local_index", dims, 2, NULL, idx, M * R);
    free(idx);
    if (pad) { /* zeros either side: [batch, N + 2 pad] */
        const int64_t pads[4] = {0, (int64_t)pad, 0, (int64_t)pad}, four = 4;
        x = ob_op2(b, "Pad", x, ob_tensor(b, "pads", &four, 1, NULL, pads, 4));
    }
    (void)N;
    const char *in[2] = {x, indices}, *windows;
    Onnx__NodeProto *g = ob_node(b, "Gather", in, 2, NULL, &windows); /* [batch, M, R] */
    ob_attr(b, g, "axis", 0, 0.0f, 1);
    const char *W = ob_tensor(b, "weight", dims, 2, m->params + l->weight_offset, NULL, M * R);
    const int64_t one = 1, axis2 = 2;
    const char *prod = ob_op2(b, "Mul", windows, W);
    const char *rin[2] = {prod, ob_tensor(b, "axes", &one, 1, NULL, &axis2, 1)}, *z;
    Onnx__NodeProto *rs = ob_node(b, "ReduceSum", rin, 2, NULL, &z); /* [batch, M] */
    ob_attr(b, rs, "keepdims", 0, 0.0f, 0);
    if (l->has_bias) {
        const int64_t bd = (int64_t)M;
        z = ob_op2(b, "Add", z, ob_tensor(b, "bias", &bd, 1, m->params + l->bias_offset, NULL, M));
    }
    return z;
}

/* x[:, from : to] of x [batch, in] (Slice on axis 1). */
static const char *emit_columns(onnx_builder *b, const char *x, size_t from, size_t to)
{
    const int64_t one = 1, start = (int64_t)from, end = (int64_t)to;
    const char *in[4] = {x, ob_tensor(b, "starts", &one, 1, NULL, &start, 1),
                         ob_tensor(b, "ends", &one, 1, NULL, &end, 1),
                         ob_tensor(b, "axes", &one, 1, NULL, &one, 1)}, *out;
    ob_node(b, "Slice", in, 4, NULL, &out);
    return out;
}

/* An embedding layer l (core/embedding.h) on x [batch, in] -> [batch, out]: the
 * passed columns, then per table j, its code c = x[:, P + j] made row n_j (a zero
 * row appended to the table) unless 0 <= c < n_j and c == Floor(c) (NaN fails
 * every test), Cast to int64, Gather(table [n_j + 1, d_j], axis 0) -> [batch, 1,
 * d_j], Flatten(axis 1); all Concat(axis 1). */
static const char *emit_embedding(onnx_builder *b, const ffnn_model *m, const ffnn_layer *l,
                                  const char *x)
{
    const ffnn_embedding_spec *e = &l->spec.embedding;
    const char **parts = ob_alloc(b, (e->count + 1) * sizeof *parts);
    size_t n_parts = 0;
    if (!parts)
        return NULL;
    if (e->passed)
        parts[n_parts++] = emit_columns(b, x, 0, e->passed);
    for (size_t j = 0; j < e->count && !b->failed; j++) {
        const ffnn_embedding_table *t = &e->table[j];
        const char *c = emit_columns(b, x, e->passed + j, e->passed + j + 1); /* [batch, 1] */
        const char *n = ob_scalar(b, (float)t->levels);
        const char *valid = ob_op2(b, "And", ob_op2(b, "GreaterOrEqual", c, ob_scalar(b, 0.0f)),
                                   ob_op2(b, "Less", c, n));
        valid = ob_op2(b, "And", valid, ob_op2(b, "Equal", c, ob_op1(b, "Floor", c)));
        const char *win[3] = {valid, c, n}, *row, *idx, *rows;
        ob_node(b, "Where", win, 3, NULL, &row);
        Onnx__NodeProto *cast = ob_node(b, "Cast", &row, 1, NULL, &idx);
        ob_attr(b, cast, "to", 0, 0.0f, ONNX__TENSOR_PROTO__DATA_TYPE__INT64);
        float *table = ob_alloc(b, (t->levels + 1) * t->dim * sizeof *table); /* zeroed */
        if (!table)
            return NULL;
        memcpy(table, m->params + l->weight_offset + t->weight_at,
               t->levels * t->dim * sizeof *table);
        const int64_t dims[2] = {(int64_t)t->levels + 1, (int64_t)t->dim};
        const char *gin[2] = {ob_tensor(b, "embedding", dims, 2, table, NULL,
                                        (t->levels + 1) * t->dim), idx};
        Onnx__NodeProto *g = ob_node(b, "Gather", gin, 2, NULL, &rows); /* [batch, 1, d] */
        ob_attr(b, g, "axis", 0, 0.0f, 0);
        Onnx__NodeProto *f = ob_node(b, "Flatten", &rows, 1, NULL, &parts[n_parts++]);
        ob_attr(b, f, "axis", 0, 0.0f, 1);
    }
    const char *out;
    Onnx__NodeProto *cat = ob_node(b, "Concat", parts, n_parts, NULL, &out);
    ob_attr(b, cat, "axis", 0, 0.0f, 1);
    return out;
}

/* A dense layer l: Gemm(x, W, b, transB = 1). */
static const char *emit_dense(onnx_builder *b, const ffnn_model *m, const ffnn_layer *l,
                              const char *x)
{
    const int64_t dims[2] = {(int64_t)l->out, (int64_t)l->in}, bd = (int64_t)l->out;
    const char *in[3] = {x, ob_tensor(b, "weight", dims, 2, m->params + l->weight_offset, NULL,
                                      l->out * l->in),
                         l->has_bias ? ob_tensor(b, "bias", &bd, 1, m->params + l->bias_offset,
                                                 NULL, l->out)
                                     : NULL};
    const char *z;
    Onnx__NodeProto *n = ob_node(b, "Gemm", in, l->has_bias ? 3 : 2, NULL, &z);
    ob_attr(b, n, "transB", 0, 0.0f, 1);
    return z;
}

/* The plain model m's nodes on "x": standardisation, layers, head; returns the
 * head's output. */
static const char *emit_network(onnx_builder *b, const ffnn_model *m)
{
    const char *x = "x";
    const size_t in = m->input_size, out = m->layers[m->layer_count - 1].out;
    if (m->input_mean) {
        const int64_t d = (int64_t)in;
        x = ob_op2(b, "Sub", x, ob_tensor(b, "input_mean", &d, 1, m->input_mean, NULL, in));
        x = ob_op2(b, "Div", x, ob_tensor(b, "input_scale", &d, 1, m->input_scale, NULL, in));
    }
    for (int i = 0; i < m->layer_count && !b->failed; i++) {
        const ffnn_layer *l = &m->layers[i];
        x = l->kind == FFNN_LAYER_DENSE       ? emit_dense(b, m, l, x)
            : l->kind == FFNN_LAYER_EMBEDDING ? emit_embedding(b, m, l, x)
                                              : emit_local1d(b, m, l, x);
        x = emit_activation(b, l->act, l->act_param, x);
    }
    if (m->loss == FFNN_LOSS_SOFTMAX_CE) {
        Onnx__NodeProto *n = ob_node(b, "Softmax", &x, 1, NULL, &x);
        ob_attr(b, n, "axis", 0, 0.0f, 1);
    } else if (m->loss == FFNN_LOSS_SIGMOID_BCE) {
        x = ob_op1(b, "Sigmoid", x);
    } else if (m->target_mean) {
        const int64_t d = (int64_t)out;
        x = ob_op2(b, "Mul", x, ob_tensor(b, "target_scale", &d, 1, m->target_scale, NULL, out));
        x = ob_op2(b, "Add", x, ob_tensor(b, "target_mean", &d, 1, m->target_mean, NULL, out));
    }
    return x;
}

/* The whole graph's nodes, the last node's output named "y": the model's
 * network, or each member's (its own standardisation, layers and head) and the
 * Mean of their outputs. */
static void emit_graph(onnx_builder *b, const ffnn_model *m)
{
    const char *x;
    if (!m->member_count) {
        x = emit_network(b, m);
    } else {
        const char **heads = ob_alloc(b, (size_t)m->member_count * sizeof *heads);
        for (int i = 0; heads && i < m->member_count && !b->failed; i++)
            heads[i] = emit_network(b, m->members[i]);
        if (!heads || b->failed)
            return (void)(b->failed = 1);
        ob_node(b, "Mean", heads, (size_t)m->member_count, NULL, &x);
    }
    ob_node(b, "Identity", &x, 1, "y", &x);
}

/* A graph input or output: float32 [batch, width] with a symbolic batch. */
static Onnx__ValueInfoProto *ob_value_info(onnx_builder *b, const char *name, size_t width)
{
    Onnx__ValueInfoProto *v = ob_alloc(b, sizeof *v);
    Onnx__TypeProto *t = ob_alloc(b, sizeof *t);
    Onnx__TypeProto__Tensor *tt = ob_alloc(b, sizeof *tt);
    Onnx__TensorShapeProto *s = ob_alloc(b, sizeof *s);
    Onnx__TensorShapeProto__Dimension *d = ob_alloc(b, 2 * sizeof *d);
    Onnx__TensorShapeProto__Dimension **dl = ob_alloc(b, 2 * sizeof *dl);
    if (!v || !t || !tt || !s || !d || !dl)
        return NULL;
    onnx__value_info_proto__init(v);
    onnx__type_proto__init(t);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(s);
    for (int i = 0; i < 2; i++) {
        onnx__tensor_shape_proto__dimension__init(&d[i]);
        dl[i] = &d[i];
    }
    d[0].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
    d[0].dim_param = "batch";
    d[1].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    d[1].dim_value = (int64_t)width;
    s->n_dim = 2, s->dim = dl;
    tt->has_elem_type = 1, tt->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, tt->shape = s;
    t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE, t->tensor_type = tt;
    v->name = (char *)name, v->type = t;
    return v;
}

/* metadata_props: ffnn_version, arch, loss, class_names (a JSON array). */
static Onnx__StringStringEntryProto **ob_metadata(onnx_builder *b, const ffnn_model *m, size_t *n)
{
    Onnx__StringStringEntryProto *e = ob_alloc(b, 4 * sizeof *e);
    Onnx__StringStringEntryProto **list = ob_alloc(b, 4 * sizeof *list);
    size_t arch_size = ffnn_model_arch_string(m, NULL, 0) + 1;
    char *arch = ob_alloc(b, arch_size);
    if (!e || !list || !arch)
        return NULL;
    ffnn_model_arch_string(m, arch, arch_size);
    const char *keys[4] = {"ffnn_version", "arch", "loss", "class_names"};
    const char *values[4] = {FFNN_VERSION, arch, ffnn_loss_name(m->loss), NULL};
    *n = m->class_names ? 4 : 3;
    if (m->class_names) {
        cJSON *a = cJSON_CreateArray();
        for (int c = 0; a && c < m->class_name_count; c++)
            if (!cJSON_AddItemToArray(a, cJSON_CreateString(m->class_names[c]))) {
                cJSON_Delete(a);
                a = NULL;
            }
        char *text = a ? cJSON_PrintUnformatted(a) : NULL;
        cJSON_Delete(a);
        char *copy = text ? ob_alloc(b, strlen(text) + 1) : NULL;
        if (!copy) {
            free(text);
            return b->failed = 1, NULL;
        }
        strcpy(copy, text);
        free(text);
        values[3] = copy;
    }
    for (size_t i = 0; i < *n; i++) {
        onnx__string_string_entry_proto__init(&e[i]);
        e[i].key = (char *)keys[i], e[i].value = (char *)values[i];
        list[i] = &e[i];
    }
    return list;
}

static void ob_free(onnx_builder *b)
{
    for (size_t i = 0; i < b->n_blocks; i++)
        free(b->blocks[i]);
    free(b->blocks);
    free(b->nodes);
    free(b->inits);
}

ffnn_status ffnn_model_export_onnx(const ffnn_model *m, const char *path)
{
    ffnn_status st;
    if (!m || !path)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_export_onnx: NULL argument");
    if (!m->has_loss)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_model_export_onnx: the model has no "
                         "loss (it says how the outputs are read): ffnn_model_set_loss");
    if ((st = ffnn_model_fresh(m)) != FFNN_OK)
        return st;
    onnx_builder b;
    memset(&b, 0, sizeof b);
    emit_graph(&b, m);
    Onnx__ModelProto model;
    Onnx__GraphProto graph;
    Onnx__OperatorSetIdProto opset, *opsets[1] = {&opset};
    Onnx__ValueInfoProto *input = ob_value_info(&b, "x", m->input_size);
    Onnx__ValueInfoProto *output = ob_value_info(&b, "y", ffnn_model_out(m));
    size_t n_meta = 0;
    Onnx__StringStringEntryProto **meta = ob_metadata(&b, m, &n_meta);
    onnx__model_proto__init(&model);
    onnx__graph_proto__init(&graph);
    onnx__operator_set_id_proto__init(&opset);
    opset.domain = "", opset.has_version = 1, opset.version = OPSET;
    graph.name = "ffnn";
    graph.n_node = b.n_nodes, graph.node = b.nodes;
    graph.n_initializer = b.n_inits, graph.initializer = b.inits;
    graph.n_input = 1, graph.input = &input;
    graph.n_output = 1, graph.output = &output;
    model.has_ir_version = 1, model.ir_version = IR_VERSION;
    model.n_opset_import = 1, model.opset_import = opsets;
    model.producer_name = "ffnn", model.producer_version = FFNN_VERSION;
    model.graph = &graph;
    model.n_metadata_props = n_meta, model.metadata_props = meta;
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (b.failed || !input || !output || !meta ||
        !(bytes = malloc((size = onnx__model_proto__get_packed_size(&model)) ? size : 1)))
        st = ffnn_fail(FFNN_ERR_NO_MEMORY, "ffnn_model_export_onnx: out of memory");
    else if (onnx__model_proto__pack(&model, bytes) != size)
        st = ffnn_fail(FFNN_ERR_IO, "ffnn_model_export_onnx: protobuf-c packed a size other "
                       "than it measured");
    else
        st = ffnn_atomic_write_buffer(path, bytes, size);
    free(bytes);
    ob_free(&b);
    return st;
}
