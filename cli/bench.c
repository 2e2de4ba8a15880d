#define _POSIX_C_SOURCE 200809L
/* bench.c - `ffnn bench SUITE`: dispatch to the benchmark suites. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bench.h"
#include "bench_barrier.h"
#include "bench_kernels.h"
#include "bench_seed000.h"
#include "bench_seed001.h"
#include "bench_seed002.h"
#include "bench_seed004.h"

const char *ffnn_cli_bench_usage =
    "usage: ffnn bench SUITE [options]\n"
    "\n"
    "Benchmark suites (each checks its results before timing them, prints a table and\n"
    "writes a CSV and a markdown table; 'ffnn bench SUITE --help' for its options):\n"
    "  seed000   784-256relu-10 on (Fashion-)MNIST: CPU reference / OpenMP / cuda,\n"
    "            batch, hidden, 1-D and 2-D launch shapes, lr, evaluation batch,\n"
    "            beside the seed's published T4 numbers\n"
    "  seed001   whole training runs of 32-Hrelu:nobias-1:nobias on synth:regression:\n"
    "            cuda naive / tiled and OpenMP, N = 256..25600 and H = 32..1024,\n"
    "            beside the seed's published T4 times\n"
    "  seed002   K-layer forward of a 1-D locally connected layer (R = 3, sigmoid):\n"
    "            cuda global / shared and OpenMP strong / weak scaling, unique and\n"
    "            reused weights, against the device's copy ceiling\n"
    "  seed004   seed 004's MLPs (2-D points, Fashion-MNIST 0/1 and 10 classes):\n"
    "            accuracy and training time on cuda and OpenMP, one training step op\n"
    "            by op with CUDA events, and the loss reduction by atomics / shared\n"
    "            tree / warp shuffles\n"
    "  kernels   the matmul kernel lab: a dense layer's forward, weight and input\n"
    "            gradient as naive / tiled / transposed / register-blocked / fused /\n"
    "            cuBLAS kernels, checked, timed against the FP32 ceiling\n";

typedef struct suite {
    const char *name;
    int (*run)(int argc, char **argv);
} suite;

static const suite suites[] = {
    {"seed000", ffnn_bench_seed000},
    {"seed001", ffnn_bench_seed001},
    {"seed002", ffnn_bench_seed002},
    {"seed004", ffnn_bench_seed004},
    {"kernels", ffnn_bench_kernels},
    {"barrier", ffnn_bench_barrier},
};

int ffnn_cli_bench(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(ffnn_cli_bench_usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
        if (strcmp(argv[1], suites[i].name) == 0) return suites[i].run(argc - 1, argv + 1);
    fprintf(stderr, "ffnn bench: unknown suite '%s'\n\n%s", argv[1], ffnn_cli_bench_usage);
    return 2;
}

/* ------------------------------------------------------------ shared helpers */

double ffnn_bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void ffnn_bench_cpu_model(char *buf, size_t size)
{
    snprintf(buf, size, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *p = strchr(line, ':');
            if (p) {
                p++;
                while (*p == ' ' || *p == '\t') p++;
                p[strcspn(p, "\n")] = '\0';
                snprintf(buf, size, "%s", p);
            }
            break;
        }
    }
    fclose(f);
}

int ffnn_bench_make_dirs(const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

int ffnn_bench_parse_int(const char *suite, const char *opt, const char *s, long lo, long hi,
                         int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "ffnn bench %s: %s expects an integer in [%ld, %ld], found '%s'\n",
                suite, opt, lo, hi, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int ffnn_bench_parse_list(const char *suite, const char *opt, const char *s, long lo,
                          long hi, int *out, int *n, int max)
{
    char buf[512];
    if (strlen(s) >= sizeof buf) {
        fprintf(stderr, "ffnn bench %s: %s: list too long\n", suite, opt);
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", s);
    *n = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*n == max) {
            fprintf(stderr, "ffnn bench %s: %s: at most %d values\n", suite, opt, max);
            return -1;
        }
        if (ffnn_bench_parse_int(suite, opt, t, lo, hi, &out[*n]) != 0) return -1;
        (*n)++;
    }
    if (*n == 0) {
        fprintf(stderr, "ffnn bench %s: %s: empty list\n", suite, opt);
        return -1;
    }
    return 0;
}

void ffnn_bench_csv_field(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\n") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void ffnn_bench_csv_num(FILE *f, double v)
{
    if (v == v) fprintf(f, "%.6g", v);
    fputc(',', f);
}

int ffnn_bench_save(const char *suite, const char *out, int (*write_csv)(const char *path),
                    ffnn_bench_table_fn table, const void *ctx, double seconds, int failed,
                    const char *fail_note)
{
    char path[1200];
    int rc = 0;
    if (ffnn_bench_make_dirs(out) != 0) {
        fprintf(stderr, "ffnn bench %s: cannot create %s: %s\n", suite, out, strerror(errno));
        rc = 1;
    } else {
        snprintf(path, sizeof path, "%s/%s.csv", out, suite);
        if (write_csv(path) != 0) {
            fprintf(stderr, "ffnn bench %s: cannot write %s\n", suite, path);
            rc = 1;
        }
        snprintf(path, sizeof path, "%s/%s_table.md", out, suite);
        FILE *f = fopen(path, "w");
        if (f == NULL) {
            fprintf(stderr, "ffnn bench %s: cannot write %s: %s\n", suite, path, strerror(errno));
            rc = 1;
        } else {
            table(f, ctx);
            if (fclose(f) != 0) rc = 1;
        }
    }
    table(stdout, ctx);
    printf("\nwrote %s/%s.csv and %s/%s_table.md (%.1f s)%s%s\n", out, suite, out, suite,
           seconds, failed || rc ? "; " : "", failed || rc ? fail_note : "");
    return rc;
}
