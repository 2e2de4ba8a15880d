/* test_backend_table.c - the backend tables' shape (src/backend/backend.h): every
 * core entry set and checked by ffnn_backend_ops_complete (a table missing any one
 * of them is refused), every extension either NULL or with all its entries set, and
 * which backend offers which extension (the capability queries the strategies
 * make). No device is needed: the cuda table is a static table in a CUDA build. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "check.h"

/* The core function entries, as offsets into ffnn_backend_ops. */
#define CORE(m) {#m, offsetof(ffnn_backend_ops, m)}
static const struct {
    const char *name;
    size_t offset;
} core[] = {
    CORE(create),          CORE(destroy),           CORE(threads),
    CORE(alloc),           CORE(release),           CORE(upload),
    CORE(download),        CORE(synchronize),       CORE(gather),
    CORE(dense_forward),   CORE(dense_backward),    CORE(local1d_forward),
    CORE(local1d_backward), CORE(activation_forward), CORE(activation_backward),
    CORE(loss),            CORE(optimizer_update),  CORE(grad_clip),
    CORE(dropout),         CORE(ema_update),        CORE(embedding_forward),
    CORE(embedding_backward),
};
#undef CORE

/* 1 when every entry of each non-NULL extension is set; names the first gap. */
static int extensions_whole(const ffnn_backend_ops *o, char *gap, size_t gap_size)
{
#define NEED(ext, m)                                                                  \
    if (o->ext && !o->ext->m) {                                                       \
        snprintf(gap, gap_size, "%s: %s set without %s", o->name, #ext, #m);          \
        return 0;                                                                     \
    }
    NEED(fused, dense_act_forward) NEED(fused, dense_backward_fused)
    NEED(xt, dense_backward_wants_xt) NEED(xt, prepare_xt)
    NEED(graph, capture_begin) NEED(graph, capture_end) NEED(graph, graph_launch)
    NEED(graph, graph_free)
    NEED(persistent, train_persistent) NEED(persistent, persistent_supported)
    NEED(device, set_precision) NEED(device, memory_available) NEED(device, native_stream)
    NEED(bf16, to_bf16) NEED(bf16, gather_bf16) NEED(bf16, optimizer_update_bf16)
    NEED(bf16, dense_act_forward_bf16) NEED(bf16, dense_backward_bf16)
    NEED(head, softmax_ce_head) NEED(head, softmax_ce_head_sums)
    NEED(side, side_begin) NEED(side, side_end) NEED(side, side_join)
    NEED(packed, dense_pack_floats) NEED(packed, dense_pack) NEED(packed, dense_forward_packed)
    NEED(packed, dense_forward_packed_part)
    NEED(weights, loss_weights)
#undef NEED
    return 1;
}

/* The extensions a table offers, as a string of their names ("packed weights"). */
static void offered(const ffnn_backend_ops *o, char *buf, size_t size)
{
    buf[0] = '\0';
#define HAS(ext)                                                                      \
    if (o->ext)                                                                       \
        snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", buf[0] ? " " : "", #ext);
    HAS(fused) HAS(xt) HAS(graph) HAS(persistent) HAS(device) HAS(bf16) HAS(head)
    HAS(side) HAS(packed) HAS(weights)
#undef HAS
}

/* ops complete, refused with any one core entry cleared, extensions whole, and the
 * extensions offered equal to `want`. */
static test_result check_table(const ffnn_backend_ops *ops, const char *want)
{
    char gap[160], got[160];
    CHECK(ffnn_backend_ops_complete(ops), "%s: a core entry is missing", ops->name);
    for (size_t i = 0; i < sizeof core / sizeof core[0]; i++) {
        ffnn_backend_ops copy = *ops;
        memset((char *)&copy + core[i].offset, 0, sizeof(void (*)(void)));
        CHECK(!ffnn_backend_ops_complete(&copy), "%s without %s is accepted", ops->name,
              core[i].name);
    }
    ffnn_backend_ops unnamed = *ops;
    unnamed.name = NULL;
    CHECK(!ffnn_backend_ops_complete(&unnamed), "a table without a name is accepted");
    CHECK(extensions_whole(ops, gap, sizeof gap), "%s", gap);
    offered(ops, got, sizeof got);
    CHECK(strcmp(got, want) == 0, "%s offers \"%s\", expected \"%s\"", ops->name, got, want);
    printf("    %s: %zu core entries, extensions: %s\n", ops->name,
           sizeof core / sizeof core[0], got);
    return TEST_PASS;
}

TEST("backend_table_host_core_and_extensions", test_backend_table_host)
{
    test_result r = check_table(&ffnn_cpu_backend, "weights");
    if (r != TEST_PASS)
        return r;
    return check_table(&ffnn_omp_backend, "packed weights");
}

TEST("backend_table_cuda_core_and_extensions", test_backend_table_cuda)
{
    const ffnn_backend_ops *cuda = ffnn_cuda_backend();
    if (!cuda)
        SKIP("build has no CUDA");
    return check_table(cuda, "fused xt graph persistent device bf16 head side");
}
