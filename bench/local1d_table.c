/*
 * local1d_table.c - the output of `ffnn bench local1d`: the CSV row and the Markdown
 * table (DIR/local1d_table.md) of report 002.
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
#include "local1d.h"
#include "suites.h"


#define SEED_L40_OUTPUTS 1.58e11 /* the seed's CUDA shared kernel, N = 2^21, K = 1000 */

/* ------------------------------------------------------------ output */

/* The CSV file's columns (the harness adds the last, "date"). */
const char *const l1d_csv_header =
    "part,variant,launch,regime,N,K,R,threads,outputs,bytes_per_output,seconds,"
    "seconds_min,seconds_max,outputs_per_s,bytes_per_s,pct_copy_ceiling,t_base_over_t,"
    "max_abs_err,status,bytes_needed,device";

void l1d_csv_row(FILE *f, const void *vr, const void *vs)
{
    (void)vs;
    const row *r = vr;
    fprintf(f, "%s,%s,%s,%s,%" PRIu64 ",%d,%d,%d,%" PRIu64 ",", r->part, r->variant,
            r->launch, r->regime, r->N, r->K, r->R, r->threads, r->outputs);
    FFNN_BENCH_CSV_NUMS(f, r->bytes_per_output, r->sec, r->sec_min, r->sec_max,
                        r->outputs_per_s, r->bytes_per_s, r->pct, r->scaling, r->err);
    ffnn_bench_csv_field(f, r->status);
    fputc(',', f);
    if (!isnan(r->bytes_needed)) fprintf(f, "%.0f", r->bytes_needed);
    fputc(',', f);
    ffnn_bench_csv_field(f, r->device);
}

static const row *find_gpu(const local1d_suite *s, const char *regime, const char *variant,
                           const char *launch, uint64_t N, int K)
{
    for (size_t i = 0; i < s->run.n_rows; i++) {
        const row *r = l1d_row_at(s, i);
        if (strcmp(r->part, "gpu") == 0 && strcmp(r->regime, regime) == 0 &&
            strcmp(r->variant, variant) == 0 && strcmp(r->launch, launch) == 0 && r->N == N &&
            r->K == K)
            return r;
    }
    return NULL;
}

static int is_ok(const row *r) { return r != NULL && ffnn_bench_ok(r->status); }

static void log2_label(uint64_t N, char *buf, size_t size)
{
    int e = 0;
    while (((uint64_t)1 << e) < N && e < 63) e++;
    if (((uint64_t)1 << e) == N)
        snprintf(buf, size, "2^%d", e);
    else
        snprintf(buf, size, "%" PRIu64, N);
}

/* The heading and the notes on the method: the GPU and CPU, the layer, the byte
 * model, the inputs and the checks. */
static void write_notes(FILE *f, const local1d_suite *s)
{
    const options *o = &s->o;
    const gpu_summary *gs = &s->gs;
    const cpu_summary *cs = &s->cs;
    size_t R = (size_t)o->R;
    ffnn_bench_md_heading(f, &s->run,
                          "Report 002: K-layer forward of a 1-D locally connected layer (R = %d)",
                          o->R);
    fputs("\n\n", f);
    if (gs->ran)
        fprintf(f,
                "- GPU: %s (%d SMs, L2 %.1f MB, %.1f GB). Copy ceiling (device-to-device "
                "cudaMemcpy, bytes read + written, median of 11): **%.3e B/s**.\n",
                gs->name, gs->info.sm_count, (double)gs->info.l2_bytes / 1e6,
                (double)gs->info.total_bytes / 1e9, gs->ceiling);
    else if (!o->gpu)
        fprintf(f, "- GPU part not run (--no-gpu).\n");
    else
        fprintf(f, "- GPU part not run: %s\n",
                s->run.n_rows ? l1d_row_at(s, 0)->status : "see the CSV");
    if (o->cpu) fprintf(f, "- CPU (the OpenMP part ran on this machine's CPU): %s.\n", cs->name);
    fprintf(f,
            "- Layer: valid padding as the seed's formula (layer k maps N-(k-1)(R-1) inputs "
            "to N-k(R-1) outputs), batch 1, sigmoid fused; outputs of a pass = "
            "sum_{k=1..K} (N - k(R-1)), counted in 64 bits. Two activation buffers swapped "
            "by pointer, no copies.\n"
            "- Byte model per output: **unique** weights 4(R+1) + 8 = %.0f B (R weights, "
            "bias, input, output); **reused** weights (one set for all layers, in L2) 8 B "
            "(input, output). %% = bytes/s over the copy ceiling; small N fit in L2 and can "
            "exceed 100%%.\n"
            "- Inputs U(0,1), weights and biases U(-0.5,0.5). Each configuration is checked "
            "before timing (first layers and the last layer against the CPU reference, "
            "tolerance %.0e) and again after (same bits); time: median of %d passes after a "
            "warm-up (GPU: CUDA events; CPU: host clock, median of %d).\n",
            bytes_per_output(R, 0), CHECK_TOL, o->repeats, o->cpu_repeats);

    if (gs->ran && o->regime[1] && o->n_nlog2 > 0) {
        int emax = o->nlog2[0];
        for (int ni = 1; ni < o->n_nlog2; ni++)
            if (o->nlog2[ni] > emax) emax = o->nlog2[ni];
        size_t N = (size_t)1 << emax;
        fprintf(f,
                "- Reused weights: the one weight set (W and bias) is %.1f MB at N = 2^%d, the "
                "two activation buffers %.1f MB; L2: %.1f MB.\n",
                4.0 * (double)(R + 1) * (double)out_width(N, R, 0) / 1e6, emax,
                8.0 * (double)N / 1e6, (double)gs->info.l2_bytes / 1e6);
    }
}

/* GPU: outputs/s (% of the copy ceiling) per regime, K, variant and launch over N. */
static void write_gpu_table(FILE *f, const local1d_suite *s)
{
    const options *o = &s->o;
    fprintf(f, "\n### GPU: outputs/s (%% of the copy ceiling)\n\n| regime | variant | launch | K |");
    for (int ni = 0; ni < o->n_nlog2; ni++) fprintf(f, " N=2^%d |", o->nlog2[ni]);
    fprintf(f, "\n|---|---|---|---|");
    for (int ni = 0; ni < o->n_nlog2; ni++) fprintf(f, "---|");
    fputc('\n', f);
    for (int reg = 0; reg < 2; reg++) {
        if (!o->regime[reg]) continue;
        for (int ki = 0; ki < o->n_ks; ki++)
            for (int v = 0; v < 2; v++)
                for (int l = 0; l < 2; l++) {
                    if (!o->variant[v] || !o->launch[l]) continue;
                    fprintf(f, "| %s | %s | %s | %d |", l1d_regime_names[reg], l1d_variant_names[v],
                            l1d_launch_names[l], o->ks[ki]);
                    for (int ni = 0; ni < o->n_nlog2; ni++) {
                        const row *r = find_gpu(s, l1d_regime_names[reg], l1d_variant_names[v],
                                                l1d_launch_names[l],
                                                (uint64_t)1 << o->nlog2[ni], o->ks[ki]);
                        if (is_ok(r))
                            fprintf(f, " %.3g (%.0f%%) |", r->outputs_per_s, r->pct);
                        else if (r && strncmp(r->status, "skipped", 7) == 0)
                            fprintf(f, " skipped |");
                        else
                            fprintf(f, " FAILED |");
                    }
                    fputc('\n', f);
                }
    }
    fputc('\n', f);
}

/* The skipped and failed GPU configurations, once per (regime, N, K). */
static void write_not_measured(FILE *f, const local1d_suite *s)
{
    int header = 0;
    for (size_t i = 0; i < s->run.n_rows; i++) {
        const row *r = l1d_row_at(s, i);
        if (strcmp(r->part, "gpu") != 0 || is_ok(r)) continue;
        int dup = 0;
        for (size_t j = 0; j < i && ffnn_bench_skipped(r->status); j++) {
            const row *q = l1d_row_at(s, j);
            if (strcmp(q->part, "gpu") == 0 && q->N == r->N && q->K == r->K &&
                strcmp(q->regime, r->regime) == 0 && strcmp(q->status, r->status) == 0)
                dup = 1;
        }
        if (dup) continue;
        if (!header) {
            fprintf(f, "Not measured:\n\n");
            header = 1;
        }
        char nl[32];
        log2_label(r->N, nl, sizeof nl);
        if (strncmp(r->status, "skipped", 7) == 0)
            fprintf(f, "- %s weights, N = %s, K = %d: %s\n", r->regime, nl, r->K, r->status);
        else
            fprintf(f, "- %s weights, %s/%s, N = %s, K = %d: %s\n", r->regime, r->variant,
                    r->launch, nl, r->K, r->status);
    }
    if (header) fputc('\n', f);
}

/* The summary: the target (shared kernel, unique weights) and seed 002's figure. */
static void write_gpu_summary(FILE *f, const local1d_suite *s)
{
    const row *best = NULL;
    for (size_t i = 0; i < s->run.n_rows; i++) {
        const row *r = l1d_row_at(s, i);
        if (strcmp(r->part, "gpu") == 0 && is_ok(r) && strcmp(r->variant, "shared") == 0 &&
            strcmp(r->regime, "unique") == 0 && (best == NULL || r->pct > best->pct))
            best = r;
    }
    if (best) {
        char nl[32];
        log2_label(best->N, nl, sizeof nl);
        fprintf(f,
                "- Target (shared kernel, unique weights, >= 80%% of the copy ceiling): best "
                "%.1f%% (%s launch, N = %s, K = %d: %.3e outputs/s, %.3e B/s) - **%s**.\n",
                best->pct, best->launch, nl, best->K, best->outputs_per_s, best->bytes_per_s,
                best->pct >= 80.0 ? "met" : "not met");
    }
    const row *s21 = find_gpu(s, "unique", "shared", "stream", (uint64_t)1 << 21, 1000);
    const row *g21 = find_gpu(s, "unique", "shared", "graph", (uint64_t)1 << 21, 1000);
    for (int l = 0; l < 2; l++) {
        const row *r = l == 0 ? s21 : g21;
        if (is_ok(r))
            fprintf(f,
                    "- Seed 002 (L40, shared kernel, N = 2^21, K = 1000): 1.58e11 outputs/s. "
                    "Here, shared, unique weights, %s launch: %.3e outputs/s = %.2fx.\n",
                    r->launch, r->outputs_per_s, r->outputs_per_s / SEED_L40_OUTPUTS);
    }
}

/* OpenMP strong and weak scaling. */
static void write_cpu_tables(FILE *f, const local1d_suite *s)
{
    const options *o = &s->o;
    const cpu_summary *cs = &s->cs;
    for (int part = 0; part < 2; part++) {
        const char *pname = part == 0 ? "omp_strong" : "omp_weak";
        if (part == 0)
            fprintf(f,
                    "\n### OpenMP strong scaling (N = 2^%d, K = %d), %s\n\n"
                    "| regime | threads | seconds | outputs/s | bytes/s | speedup | "
                    "efficiency |\n|---|---|---|---|---|---|---|\n",
                    o->cpu_nlog2, o->cpu_k, cs->name);
        else
            fprintf(f,
                    "\n### OpenMP weak scaling (N = 2^%d per thread, K = %d), %s\n\n"
                    "| regime | threads | N | seconds | outputs/s | bytes/s | efficiency "
                    "|\n|---|---|---|---|---|---|---|\n",
                    o->cpu_weak_nlog2, o->cpu_k, cs->name);
        for (size_t i = 0; i < s->run.n_rows; i++) {
            const row *r = l1d_row_at(s, i);
            if (strcmp(r->part, pname) != 0) continue;
            if (!is_ok(r)) {
                fprintf(f, "| %s | %d | %s |\n", r->regime, r->threads, r->status);
                continue;
            }
            if (part == 0)
                fprintf(f, "| %s | %d | %.4f | %.3e | %.3e | %.2f | %.0f%% |\n", r->regime,
                        r->threads, r->sec, r->outputs_per_s, r->bytes_per_s, r->scaling,
                        100.0 * r->scaling * (double)o->threads[0] / (double)r->threads);
            else {
                char nl[32];
                log2_label(r->N, nl, sizeof nl);
                fprintf(f, "| %s | %d | %s | %.4f | %.3e | %.3e | %.0f%% |\n", r->regime,
                        r->threads, nl, r->sec, r->outputs_per_s, r->bytes_per_s,
                        100.0 * r->scaling);
            }
        }
    }
    fprintf(f, "\nSpeedup and efficiency are relative to %d thread%s.\n", o->threads[0],
            o->threads[0] > 1 ? "s" : "");
}

/* GPU vs CPU, as the seed's figure 6 (per-output throughput): the seed compared with
 * 8 threads; also the fastest thread count. */
static void write_gpu_vs_cpu(FILE *f, const local1d_suite *s)
{
    const options *o = &s->o;
    const row *cpu_best = NULL, *cpu8 = NULL;
    for (size_t i = 0; i < s->run.n_rows; i++) {
        const row *r = l1d_row_at(s, i);
        if (strcmp(r->part, "omp_strong") != 0 || strcmp(r->regime, "unique") != 0 ||
            !is_ok(r))
            continue;
        if (cpu_best == NULL || r->outputs_per_s > cpu_best->outputs_per_s) cpu_best = r;
        if (r->threads == 8) cpu8 = r;
    }
    const row *g20 = find_gpu(s, "unique", "shared", "stream", (uint64_t)1 << o->cpu_nlog2,
                              o->n_ks ? o->ks[0] : 0);
    for (int w = 0; w < 2 && is_ok(g20); w++) {
        const row *c = w == 0 ? cpu8 : cpu_best;
        if (c == NULL || (w == 1 && c == cpu8)) continue;
        fprintf(f,
                "\nGPU shared (stream, unique, N = 2^%d, K = %d) over OpenMP with %d "
                "threads (unique, K = %d%s): %.1fx in outputs/s (seed 002: 210-383x "
                "over 8 threads).\n",
                o->cpu_nlog2, g20->K, c->threads, c->K, w == 1 ? ", the fastest" : "",
                g20->outputs_per_s / c->outputs_per_s);
    }
}

void l1d_write_table(FILE *f, const void *vs)
{
    const local1d_suite *s = vs;
    write_notes(f, s);
    if (s->gs.ran) {
        write_gpu_table(f, s);
        write_not_measured(f, s);
        write_gpu_summary(f, s);
    }
    if (s->o.cpu) {
        write_cpu_tables(f, s);
        if (s->gs.ran)
            write_gpu_vs_cpu(f, s);
    }
}
