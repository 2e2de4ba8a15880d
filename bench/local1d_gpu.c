/*
 * local1d_gpu.c - the GPU part of `ffnn bench local1d` (local1d.c has the method): the
 * device-to-device copy ceiling, then every (regime, N, K, variant, launch)
 * configuration checked against the CPU reference and timed.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/local1d.h"
#include "ffnn.h"
#include "harness.h"
#if FFNN_HAVE_CUDA
#include "../lab/local1d_stream.h"
#endif
#include "local1d.h"
#include "suites.h"


/* ------------------------------------------------------------ GPU part */

#if FFNN_HAVE_CUDA

typedef struct gpu_net {
    size_t N, R;
    int reused;
    float *x0, *buf[2], *W, *b; /* device */
    float *hx0;                 /* x0 on the host */
    void *stream;
    int ref_k;  /* layers the reference covers (0: none yet) */
    float *ref; /* output of the first ref_k layers on the CPU */
} gpu_net;

static const float *gpu_W(const gpu_net *g, int k)
{
    return g->W + (g->reused ? 0 : (size_t)g->R * prefix_outputs(g->N, g->R, k));
}
static const float *gpu_b(const gpu_net *g, int k)
{
    return g->b + (g->reused ? 0 : prefix_outputs(g->N, g->R, k));
}

/* The K-layer forward: layer 0 reads x0, layer k writes buf[k % 2]; no copies. */
static ffnn_status gpu_pass(const gpu_net *g, ffnn_local1d_variant v, int K)
{
    const float *in = g->x0;
    size_t n = g->N;
    for (int k = 0; k < K; k++) {
        float *out = g->buf[k & 1];
        ffnn_status st = ffnn_lab_local1d_forward_stream(v, g->stream, in, gpu_W(g, k), gpu_b(g, k),
                                                   out, 1, n, g->R, FFNN_LOCAL1D_VALID,
                                                   FFNN_ACT_SIGMOID);
        if (st != FFNN_OK) return st;
        in = out;
        n -= g->R - 1;
    }
    return FFNN_OK;
}

typedef struct gpu_run {
    const gpu_net *g;
    ffnn_local1d_variant v;
    int K, graph;
    void *exec; /* graph mode: the instantiated K-layer pass */
} gpu_run;

static ffnn_status run_prepare(gpu_run *r)
{
    if (!r->graph) return FFNN_OK;
    ffnn_status st = ffnn_lab_capture_begin(r->g->stream);
    if (st != FFNN_OK) return st;
    st = gpu_pass(r->g, r->v, r->K);
    if (st != FFNN_OK) {
        ffnn_lab_capture_abort(r->g->stream);
        return st;
    }
    return ffnn_lab_capture_end(r->g->stream, &r->exec);
}

/* One K-layer pass (arg: a gpu_run), also for ffnn_lab_time. */
static ffnn_status run_launch(void *arg)
{
    const gpu_run *r = arg;
    return r->graph ? ffnn_lab_graph_launch(r->exec, r->g->stream)
                    : gpu_pass(r->g, r->v, r->K);
}

static void run_release(gpu_run *r)
{
    ffnn_lab_graph_destroy(r->exec);
    r->exec = NULL;
}

static ffnn_status run_sync(const gpu_run *r, ffnn_status st)
{
    if (st != FFNN_OK) return st;
    return ffnn_lab_stream_sync(r->g->stream);
}

/* CPU reference of the first kc layers of g (kept in g->ref). */
static ffnn_status gpu_reference(gpu_net *g, int kc)
{
    if (g->ref_k == kc) return FFNN_OK;
    size_t N = g->N, R = g->R;
    float *a = malloc(N * sizeof *a), *z = malloc(N * sizeof *z);
    float *hW = malloc(N * R * sizeof *hW), *hb = malloc(N * sizeof *hb);
    ffnn_status st = FFNN_OK;
    if (!a || !z || !hW || !hb) st = FFNN_ERR_NO_MEMORY;
    if (st == FFNN_OK) memcpy(a, g->hx0, N * sizeof *a);
    size_t n = N;
    for (int k = 0; k < kc && st == FFNN_OK; k++) {
        size_t m = out_width(N, R, k);
        st = ffnn_lab_download(hW, gpu_W(g, k), m * R * sizeof *hW);
        if (st == FFNN_OK) st = ffnn_lab_download(hb, gpu_b(g, k), m * sizeof *hb);
        if (st != FFNN_OK) break;
        ffnn_cpu_local1d_forward(a, hW, hb, z, 1, n, R, FFNN_LOCAL1D_VALID, FFNN_ACT_SIGMOID);
        float *t = a;
        a = z;
        z = t;
        n = m;
    }
    free(z);
    free(hW);
    free(hb);
    if (st != FFNN_OK) {
        free(a);
        return st;
    }
    free(g->ref);
    g->ref = a;
    g->ref_k = kc;
    return FFNN_OK;
}

/* Check one configuration (first layers, then the full pass) and leave its final
 * output in *final (malloc'ed, out_width(K-1) floats). Returns 0, or -1 with why
 * (a failed check) or with *st set (a CUDA error). */
static int gpu_validate(gpu_run *r, gpu_net *g, double *err, float **final, ffnn_status *st,
                        char *why, size_t why_size)
{
    size_t N = g->N, R = g->R;
    int K = r->K, kc = K < 3 ? K : 3;
    *final = NULL;
    *st = gpu_reference(g, kc);
    if (*st != FFNN_OK) return -1;
    size_t mc = out_width(N, R, kc - 1), m = out_width(N, R, K - 1), n_in = m + R - 1;
    float *got = malloc(N * sizeof *got), *in = malloc(N * sizeof *in);
    float *ref = malloc(N * sizeof *ref), *hW = malloc(m * R * sizeof *hW);
    float *hb = malloc(m * sizeof *hb);
    int rc = -1;
    if (!got || !in || !ref || !hW || !hb) {
        *st = FFNN_ERR_NO_MEMORY;
        goto done;
    }
    /* 1. the first kc layers, through the same launch path, outputs poisoned */
    gpu_run first = {g, r->v, kc, r->graph, NULL};
    *st = ffnn_lab_memset(g->buf[0], 0xff, N * sizeof(float));
    if (*st == FFNN_OK) *st = ffnn_lab_memset(g->buf[1], 0xff, N * sizeof(float));
    if (*st == FFNN_OK) *st = run_prepare(&first);
    if (*st == FFNN_OK) *st = run_sync(&first, run_launch(&first));
    run_release(&first);
    if (*st == FFNN_OK) *st = ffnn_lab_download(got, g->buf[(kc - 1) & 1], mc * sizeof *got);
    if (*st != FFNN_OK) goto done;
    char what[64];
    snprintf(what, sizeof what, "first %d layer%s", kc, kc > 1 ? "s" : "");
    if (l1d_compare_outputs(got, g->ref, mc, err, what, why, why_size) != 0) goto done;
    /* 2. the full pass; its last layer again on the CPU from the pass's own input */
    *st = ffnn_lab_memset(g->buf[0], 0xff, N * sizeof(float));
    if (*st == FFNN_OK) *st = ffnn_lab_memset(g->buf[1], 0xff, N * sizeof(float));
    if (*st == FFNN_OK) *st = run_sync(r, run_launch(r));
    const float *d_in = K == 1 ? g->x0 : g->buf[(K - 2) & 1];
    if (*st == FFNN_OK) *st = ffnn_lab_download(in, d_in, n_in * sizeof *in);
    if (*st == FFNN_OK) *st = ffnn_lab_download(got, g->buf[(K - 1) & 1], m * sizeof *got);
    if (*st == FFNN_OK) *st = ffnn_lab_download(hW, gpu_W(g, K - 1), m * R * sizeof *hW);
    if (*st == FFNN_OK) *st = ffnn_lab_download(hb, gpu_b(g, K - 1), m * sizeof *hb);
    if (*st != FFNN_OK) goto done;
    for (size_t i = 0; i < n_in; i++)
        if (!isfinite(in[i]) || in[i] < 0.0f || in[i] > 1.0f) {
            snprintf(why, why_size, "input of layer %d: element %zu of %zu is %.9g", K, i,
                     n_in, (double)in[i]);
            goto done;
        }
    ffnn_cpu_local1d_forward(in, hW, hb, ref, 1, n_in, R, FFNN_LOCAL1D_VALID,
                             FFNN_ACT_SIGMOID);
    snprintf(what, sizeof what, "layer %d of %d", K, K);
    if (l1d_compare_outputs(got, ref, m, err, what, why, why_size) != 0) goto done;
    *final = got;
    got = NULL;
    rc = 0;
done:
    free(got);
    free(in);
    free(ref);
    free(hW);
    free(hb);
    return rc;
}

/* Record a CUDA error in r; an error that left the context unusable stops the GPU part. */
static void note_cuda_error(local1d_suite *s, row *r, const char *stage)
{
    const char *msg = ffnn_last_error();
    snprintf(r->status, sizeof r->status, "failed: %s: %s", stage, msg);
    if (strstr(msg, "unusable") != NULL) s->gpu_dead = 1;
}

/* One configuration: check, time, check again; fills r. */
static void gpu_config(local1d_suite *s, gpu_net *g, int v, int launch, int K, row *r)
{
    gpu_run run = {g, (ffnn_local1d_variant)v, K, launch, NULL};
    float *final = NULL, *again = NULL;
    ffnn_status st = run_prepare(&run);
    if (st != FFNN_OK) {
        note_cuda_error(s, r, launch ? "graph capture" : "launch");
        goto done;
    }
    char why[256] = "";
    double err = NAN;
    if (gpu_validate(&run, g, &err, &final, &st, why, sizeof why) != 0) {
        if (st != FFNN_OK)
            note_cuda_error(s, r, "check");
        else
            snprintf(r->status, sizeof r->status, "failed: check: %s", why);
        goto done;
    }
    r->err = err;
    /* one warm-up pass, then each pass between two events */
    const ffnn_lab_timing timing = {1, s->o.repeats, 1, 0.0, 1, 0.0};
    ffnn_lab_times t;
    st = ffnn_lab_time(g->stream, run_launch, &run, &timing, &t);
    if (st != FFNN_OK) {
        note_cuda_error(s, r, "timing");
        goto done;
    }
    size_t m = out_width(g->N, g->R, K - 1);
    again = malloc(m * sizeof *again);
    st = again ? ffnn_lab_download(again, g->buf[(K - 1) & 1], m * sizeof *again)
               : FFNN_ERR_NO_MEMORY;
    if (st != FFNN_OK) {
        note_cuda_error(s, r, "check after timing");
        goto done;
    }
    if (memcmp(again, final, m * sizeof *again) != 0) {
        snprintf(r->status, sizeof r->status,
                 "failed: the final output changed between passes on the same input");
        goto done;
    }
    r->sec = 1e-6 * t.median_us, r->sec_min = 1e-6 * t.min_us, r->sec_max = 1e-6 * t.max_us;
    l1d_set_rates(r, s->gs.ceiling);
done:
    run_release(&run);
    free(final);
    free(again);
}

static void gpu_free_net(gpu_net *g)
{
    ffnn_lab_free(g->x0);
    ffnn_lab_free(g->buf[0]);
    ffnn_lab_free(g->buf[1]);
    ffnn_lab_free(g->W);
    ffnn_lab_free(g->b);
    free(g->hx0);
    free(g->ref);
    g->x0 = g->buf[0] = g->buf[1] = g->W = g->b = g->hx0 = g->ref = NULL;
    g->ref_k = 0;
}

static ffnn_status gpu_alloc_net(gpu_net *g, int kalloc, uint64_t seed)
{
    size_t N = g->N, R = g->R;
    uint64_t wf = w_floats(N, R, kalloc, g->reused), bf = b_floats(N, R, kalloc, g->reused);
    ffnn_status st = ffnn_lab_malloc((void **)&g->x0, N * sizeof(float));
    if (st == FFNN_OK) st = ffnn_lab_malloc((void **)&g->buf[0], N * sizeof(float));
    if (st == FFNN_OK) st = ffnn_lab_malloc((void **)&g->buf[1], N * sizeof(float));
    if (st == FFNN_OK) st = ffnn_lab_malloc((void **)&g->W, wf * sizeof(float));
    if (st == FFNN_OK) st = ffnn_lab_malloc((void **)&g->b, bf * sizeof(float));
    if (st == FFNN_OK) st = ffnn_lab_fill_uniform(g->x0, N, seed * 16 + 1, 0.0f, 1.0f);
    if (st == FFNN_OK) st = ffnn_lab_fill_uniform(g->W, wf, seed * 16 + 2, -0.5f, 0.5f);
    if (st == FFNN_OK) st = ffnn_lab_fill_uniform(g->b, bf, seed * 16 + 3, -0.5f, 0.5f);
    if (st == FFNN_OK) {
        g->hx0 = malloc(N * sizeof(float));
        st = g->hx0 ? ffnn_lab_download(g->hx0, g->x0, N * sizeof(float))
                    : FFNN_ERR_NO_MEMORY;
    }
    return st;
}

void l1d_gpu_part(local1d_suite *s)
{
    const options *o = &s->o;
    gpu_summary *gs = &s->gs;
    ffnn_lab_gpu_info *info = &gs->info;
    if (ffnn_lab_gpu_query(info) != FFNN_OK) {
        row *r = l1d_new_row(s, "gpu", "", "", "", "");
        snprintf(r->status, sizeof r->status, "skipped: %s", ffnn_last_error());
        fprintf(stderr, "GPU part skipped: %s\n", ffnn_last_error());
        return;
    }
    snprintf(gs->name, sizeof gs->name, "%s", info->name);
    gs->ran = 1;
    fprintf(stderr, "GPU: %s (sm_%d%d, %d SMs, L2 %.1f MB, memory %.1f GB, free %.1f GB)\n",
            info->name, info->cc_major, info->cc_minor, info->sm_count,
            (double)info->l2_bytes / 1e6, (double)info->total_bytes / 1e9,
            (double)info->free_bytes / 1e9);

    /* the copy ceiling */
    size_t copy_bytes = (size_t)(o->copy_mib * 1048576.0);
    if (copy_bytes > info->free_bytes / 4) copy_bytes = info->free_bytes / 4;
    double med = 0.0, bps = 0.0;
    row *c = l1d_new_row(s, "copy", "memcpy_d2d", "", "", info->name);
    c->bytes_needed = 2.0 * (double)copy_bytes;
    if (ffnn_lab_copy_ceiling(copy_bytes, 11, &med, &bps) != FFNN_OK) {
        note_cuda_error(s, c, "copy ceiling");
        fprintf(stderr, "copy ceiling: %s\n", c->status);
        return;
    }
    c->sec = med;
    c->bytes_per_s = bps;
    c->pct = 100.0;
    gs->ceiling = bps;
    fprintf(stderr,
            "copy ceiling: cudaMemcpy device-to-device of %.0f MiB: %.4f ms median of 11, "
            "%.3e B/s (read + written)\n",
            (double)copy_bytes / 1048576.0, 1e3 * med, bps);

    gpu_net g;
    memset(&g, 0, sizeof g);
    g.R = (size_t)o->R;
    if (ffnn_lab_stream_create(&g.stream) != FFNN_OK) {
        row *r = l1d_new_row(s, "gpu", "", "", "", info->name);
        note_cuda_error(s, r, "stream/events");
        goto out;
    }
    for (int reg = 0; reg < 2; reg++) {
        if (!o->regime[reg]) continue;
        for (int ni = 0; ni < o->n_nlog2; ni++) {
            size_t N = (size_t)1 << o->nlog2[ni];
            g.N = N;
            g.reused = reg;
            size_t free_b = 0, total_b = 0;
            if (!s->gpu_dead && ffnn_lab_mem_info(&free_b, &total_b) != FFNN_OK) s->gpu_dead = 1;
            double avail = (double)free_b - (1.0 * 1073741824.0 + 0.01 * (double)total_b);
            int kalloc = 0;
            for (int ki = 0; ki < o->n_ks; ki++) {
                int K = o->ks[ki];
                if (valid_depth(N, g.R, K) && bytes_needed(N, g.R, K, reg) <= avail &&
                    K > kalloc)
                    kalloc = K;
            }
            int allocated = 0;
            ffnn_status ast = FFNN_OK;
            char bb[64], fb[64], alloc_why[256] = "";
            for (int ki = 0; ki < o->n_ks; ki++) {
                int K = o->ks[ki];
                for (int v = 0; v < 2; v++) {
                    if (!o->variant[v]) continue;
                    for (int l = 0; l < 2; l++) {
                        if (!o->launch[l]) continue;
                        row *r = l1d_new_row(s, "gpu", l1d_variant_names[v], l1d_launch_names[l],
                                             l1d_regime_names[reg], info->name);
                        r->N = N;
                        r->K = K;
                        r->R = o->R;
                        r->threads = 0;
                        r->bytes_per_output = bytes_per_output(g.R, reg);
                        if (valid_depth(N, g.R, K)) {
                            r->outputs = prefix_outputs(N, g.R, K);
                            r->bytes_needed = bytes_needed(N, g.R, K, reg);
                        }
                        if (s->gpu_dead) {
                            snprintf(r->status, sizeof r->status,
                                     "skipped: an earlier CUDA error left the context unusable");
                        } else if (!valid_depth(N, g.R, K)) {
                            snprintf(r->status, sizeof r->status,
                                     "skipped: N = %zu is too narrow for %d valid layers of "
                                     "R = %d",
                                     N, K, o->R);
                        } else if (r->bytes_needed > avail) {
                            snprintf(r->status, sizeof r->status,
                                     "skipped: needs %s of GPU memory; %s free (less a "
                                     "reserve of 1 GiB + 1%%)",
                                     l1d_fmt_bytes(r->bytes_needed, bb, sizeof bb),
                                     l1d_fmt_bytes((double)free_b, fb, sizeof fb));
                        } else if (l1d_budget_spent(s)) {
                            snprintf(r->status, sizeof r->status,
                                     "skipped: time budget (--max-seconds %.0f) spent",
                                     o->max_seconds);
                        } else {
                            /* weights for the deepest K that fits, once per N; when
                             * cudaMalloc refuses, the next smaller K of the list */
                            while (!allocated) {
                                ast = gpu_alloc_net(&g, kalloc, o->seed);
                                if (ast == FFNN_OK) {
                                    allocated = 1;
                                    break;
                                }
                                fprintf(stderr, "allocation for K = %d failed: %s\n", kalloc,
                                        ffnn_last_error());
                                snprintf(alloc_why, sizeof alloc_why, "%s", ffnn_last_error());
                                gpu_free_net(&g);
                                if (strstr(alloc_why, "unusable")) {
                                    s->gpu_dead = 1;
                                    allocated = 1;
                                    break;
                                }
                                int next = 0;
                                for (int kj = 0; kj < o->n_ks; kj++)
                                    if (o->ks[kj] < kalloc && o->ks[kj] > next &&
                                        valid_depth(N, g.R, o->ks[kj]))
                                        next = o->ks[kj];
                                kalloc = next;
                                if (kalloc == 0) allocated = 1;
                            }
                            if (ast != FFNN_OK || K > kalloc)
                                snprintf(r->status, sizeof r->status,
                                         "skipped: allocating %s of GPU memory failed: %s",
                                         l1d_fmt_bytes(r->bytes_needed, bb, sizeof bb), alloc_why);
                            else
                                gpu_config(s, &g, v, l, K, r);
                        }
                        l1d_print_row_progress(r);
                    }
                }
            }
            gpu_free_net(&g);
        }
    }
out:
    gpu_free_net(&g);
    ffnn_lab_stream_destroy(g.stream);
}

#else /* no CUDA: the GPU part is one skipped row */

void l1d_gpu_part(local1d_suite *s)
{
    const char *why = "this build has no CUDA (nvcc was not found)";
    row *r = l1d_new_row(s, "gpu", "", "", "", "");
    snprintf(r->status, sizeof r->status, "skipped: %s", why);
    fprintf(stderr, "GPU part skipped: %s\n", why);
}

#endif /* FFNN_HAVE_CUDA */

