/*
 * test_bench.c - the benchmark suites (bench/, ffnn bench ...) and their harnesses:
 *   - the shared helpers of bench/harness.h (option table, integer lists, CSV and
 *     markdown cells) and of lab/harness.h (median, the check against a reference:
 *     tolerance, range, the first fault, stop after 10);
 *   - the suites run as a user would: `ffnn bench mnist-mlp|regression-mlp|local1d|modular
 *     --quick --no-gpu` (cut down) must run on any machine (their CPU parts check
 *     every configuration before timing it) and write a CSV with one ok row per
 *     measurement plus the markdown table; usage errors exit with 2; --help exits 0.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../bench/harness.h"
#include "check.h"
#include "cli_run.h"

#define CLI (cli_binary())

/* Run CLI with args (NULL-terminated), stdout and stderr into log; exit status or -1. */
static int run_cli(const char *log, const char *const *args) { return cli_run(args, log, NULL); }

/* ------------------------------------------------------------ the harnesses */

/* The option table: every kind, the defaults kept, --help, errors exit 2. */
static test_result test_bench_options(char *why, size_t why_size)
{
    (void)why, (void)why_size;
    static const char *const names[] = {"unique", "reused", NULL};
    int quick = 0, gpu = 1, n = -1, list[4], count = 0, flags[2] = {0, 0};
    const char *out = NULL;
    double secs = -1.0;
    const ffnn_bench_option opts[] = {
        FFNN_BENCH_OPT_FLAG("quick", &quick, 1),
        FFNN_BENCH_OPT_FLAG("no-gpu", &gpu, 0),
        FFNN_BENCH_OPT_INT("n", &n, 1, 10),
        FFNN_BENCH_OPT_LIST("list", list, &count, 4, 0, 99),
        FFNN_BENCH_OPT_TEXT("out", &out),
        FFNN_BENCH_OPT_POSITIVE("max-seconds", &secs),
        FFNN_BENCH_OPT_NAMES("regimes", flags, names),
        FFNN_BENCH_OPT_END,
    };
    ffnn_bench_run run;
    ffnn_bench_begin(&run, "unit", 1, 0);
    char *ok[] = {"unit", "--quick", "--no-gpu", "--n", "7", "--list", "3,0,99", "--out", "d",
                  "--max-seconds", "2.5", "--regimes", "reused", NULL};
    CHECK(ffnn_bench_parse_options(&run, "usage\n", opts, 13, ok) == 0, "a good command line");
    CHECK(quick == 1 && gpu == 0 && n == 7 && count == 3 && list[2] == 99 && out != NULL &&
              strcmp(out, "d") == 0 && secs == 2.5 && flags[0] == 0 && flags[1] == 1,
          "values: quick %d gpu %d n %d count %d secs %g flags %d %d", quick, gpu, n, count,
          secs, flags[0], flags[1]);
    CHECK(strcmp(run.command_line, "ffnn bench unit --quick --no-gpu --n 7 --list 3,0,99 --out d "
                                   "--max-seconds 2.5 --regimes reused") == 0,
          "command line '%s'", run.command_line);
    char *bad[][3] = {{"unit", "--n", "11"},          {"unit", "--list", "1,100"},
                      {"unit", "--list", "1,2,3,4,5"}, {"unit", "--max-seconds", "0"},
                      {"unit", "--regimes", "other"}, {"unit", "--bogus", "1"},
                      {"unit", "stray", "x"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(ffnn_bench_parse_options(&run, "usage\n", opts, 3, bad[i]) == 2, "%s %s accepted",
              bad[i][1], bad[i][2]);
    char *help[] = {"unit", "--help", NULL};
    fflush(stdout);
    CHECK(ffnn_bench_parse_options(&run, "", opts, 2, help) == 1, "--help");
    int v = 0, vals[3], nv = 0;
    CHECK(ffnn_bench_parse_int("unit", "--x", "-3", -5, 5, &v) == 0 && v == -3, "parse_int");
    CHECK(ffnn_bench_parse_int("unit", "--x", "3x", -5, 5, &v) != 0, "3x accepted");
    CHECK(ffnn_bench_parse_list("unit", "--x", ",", 0, 5, vals, &nv, 3) != 0, "empty list");
    ffnn_bench_end(&run);
    return TEST_PASS;
}

/* The row table, statuses, CSV and markdown cells. */
static test_result test_bench_cells(char *why, size_t why_size)
{
    (void)why, (void)why_size;
    typedef struct urow {
        int k;
        char status[24];
    } urow;
    ffnn_bench_run run;
    ffnn_bench_begin(&run, "unit", sizeof(urow), offsetof(urow, status));
    for (int i = 0; i < 100; i++) { /* grows past the first allocation */
        urow *r = ffnn_bench_add_row(&run);
        CHECK(r->k == 0 && strcmp(r->status, "ok") == 0, "a new row is zeroed and ok");
        r->k = i;
        if (i % 10 == 3) snprintf(r->status, sizeof r->status, "failed: %d", i);
    }
    CHECK(run.n_rows == 100 && FFNN_BENCH_ROW(&run, urow, 42)->k == 42, "rows kept");
    CHECK(ffnn_bench_failed_rows(&run) == 10, "%zu failed rows", ffnn_bench_failed_rows(&run));
    CHECK(ffnn_bench_ok("ok") && !ffnn_bench_ok(NULL) && ffnn_bench_skipped("skipped: x") &&
              ffnn_bench_failed("failed: y") && !ffnn_bench_failed("ok"),
          "statuses");
    ffnn_bench_end(&run);

    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    CHECK(f != NULL, "open_memstream");
    ffnn_bench_csv_field(f, "plain");
    fputc('|', f);
    ffnn_bench_csv_field(f, "a,\"b\"");
    fputc('|', f);
    ffnn_bench_csv_quoted(f, "ok");
    fputc('|', f);
    ffnn_bench_csv_num(f, 0.5);
    ffnn_bench_csv_num(f, NAN);
    ffnn_bench_md_cell(f, NULL, 1.0, "%.1f");
    ffnn_bench_md_cell(f, "skipped: x", 1.0, "%.1f");
    ffnn_bench_md_cell(f, "failed: y", 1.0, "%.1f");
    ffnn_bench_md_cell(f, "ok", 1.25, "%.2f");
    ffnn_bench_md_num(f, NAN, "%.2f");
    fclose(f);
    const char *want = "plain|\"a,\"\"b\"\"\"|\"ok\"|0.5,, - | skipped | **failed** | 1.25 | - |";
    const int same = strcmp(buf, want) == 0;
    CHECK(same, "cells '%s', expected '%s'", buf, want);
    free(buf);
    return TEST_PASS;
}

/* The lab's median and check: tolerance (absolute + normwise relative), range, the
 * first fault, the scan stops after FFNN_LAB_MAX_FAULTS. */
static test_result test_lab_check(char *why, size_t why_size)
{
    (void)why, (void)why_size;
    double v[] = {5, 1, 4, 2, 3}, lo = 0, hi = 0;
    CHECK(ffnn_lab_median(v, 5, &lo, &hi) == 3 && lo == 1 && hi == 5, "odd median");
    double w[] = {4, 1, 3, 2};
    CHECK(ffnn_lab_median(w, 4, NULL, NULL) == 2.5, "even median");
    CHECK(isnan(ffnn_lab_rate(1.0, 0.0)) && ffnn_lab_rate(6.0, 2.0) == 3.0 &&
              ffnn_lab_pct(5.0, 20.0) == 25.0 && isnan(ffnn_lab_pct(1.0, 0.0)),
          "rates");

    enum { N = 64 };
    float want[N], got[N];
    for (int i = 0; i < N; i++) want[i] = got[i] = (float)(i - 32) / 8.0f; /* max |want| 4 */
    const ffnn_lab_tolerance rel = {0.0, 1e-3, 1.0, 0.0};
    ffnn_lab_check_result res;
    CHECK(ffnn_lab_check("x", got, want, NULL, N, &rel, &res) == 0 && res.max_abs == 0.0,
          "equal values");
    got[5] += 0.003f; /* within 1e-3 * 4 */
    CHECK(ffnn_lab_check("x", got, want, NULL, N, &rel, &res) == 0 &&
              fabs(res.max_rel - 0.003 / 4.0) < 1e-6,
          "a difference within the normwise tolerance (max_rel %g)", res.max_rel);
    got[9] += 0.01f;
    got[7] = NAN;
    fprintf(stderr, "    (two faults expected below)\n");
    CHECK(ffnn_lab_check("x", got, want, NULL, N, &rel, &res) == 2 && res.first == 7 &&
              isnan(res.first_got) && isinf(res.max_abs),
          "faults %zu, first %zu", res.faults, res.first);
    for (int i = 0; i < N; i++) got[i] = want[i] + 1.0f;
    fprintf(stderr, "    (ten faults expected below)\n");
    CHECK(ffnn_lab_check("x", got, want, NULL, N, &rel, &res) == FFNN_LAB_MAX_FAULTS &&
              res.first == 0,
          "the scan stops after %d faults (%zu)", FFNN_LAB_MAX_FAULTS, res.faults);
    /* idx, an absolute tolerance and a range */
    const float g2[3] = {0.5f, 2.0f, 0.25f}, w2[2] = {0.25f, 0.5f};
    const size_t idx[2] = {2, 0};
    const ffnn_lab_tolerance range = {1e-6, 0.0, 0.0, 1.0};
    CHECK(ffnn_lab_check("y", g2, w2, idx, 2, &range, &res) == 0, "got[idx[i]] vs want[i]");
    const size_t idx2[2] = {1, 0};
    const float w3[2] = {2.0f, 0.5f};
    fprintf(stderr, "    (one fault expected below)\n");
    CHECK(ffnn_lab_check("y", g2, w3, idx2, 2, &range, &res) == 1 && res.first == 0,
          "2.0 outside [0, 1]");
    return TEST_PASS;
}

/* ------------------------------------------------------------ the suites */

/* `ffnn bench --help` and every suite's --help exit 0 and print a usage. */
static test_result test_bench_help(char *why, size_t why_size)
{
    if (access(CLI, X_OK) != 0) SKIP("%s not built", CLI);
    char dir[] = "/tmp/ffnn_bench_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char log[128];
    snprintf(log, sizeof log, "%s/log.txt", dir);
    /* the suites, then their first names (accepted, not listed) */
    static const char *const suites[] = {NULL,      "mnist-mlp", "regression-mlp", "local1d",
                                         "modular", "kernels",   "barrier",        "seed000",
                                         "seed001", "seed002",   "seed004"};
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
        const char *args[] = {"bench", suites[i] ? suites[i] : "--help", "--help", NULL};
        if (suites[i] == NULL) args[2] = NULL;
        int rc = run_cli(log, args);
        CHECK(rc == 0, "ffnn bench %s --help exited with %d", suites[i] ? suites[i] : "", rc);
        FILE *f = fopen(log, "r");
        char line[256] = "";
        CHECK(f != NULL && fgets(line, sizeof line, f) != NULL, "no usage");
        if (i >= 7) { /* an old name: one line naming the new one, then its usage */
            CHECK(strstr(line, "is now called") != NULL, "%s: first line '%s'", suites[i], line);
            CHECK(fgets(line, sizeof line, f) != NULL, "%s: no usage", suites[i]);
        }
        fclose(f);
        CHECK(strncmp(line, "usage: ffnn bench", 17) == 0, "first line '%s'", line);
    }
    remove(log);
    rmdir(dir);
    return TEST_PASS;
}

static test_result test_bench_local1d_quick_cpu(char *why, size_t why_size)
{
    if (access(CLI, X_OK) != 0) SKIP("%s not built", CLI);
    char dir[] = "/tmp/ffnn_bench_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char log[128], csv[128], table[128];
    snprintf(log, sizeof log, "%s/log.txt", dir);
    snprintf(csv, sizeof csv, "%s/local1d.csv", dir);
    snprintf(table, sizeof table, "%s/local1d_table.md", dir);
    const char *args[] = {"bench", "local1d", "--quick", "--no-gpu", "--cpu-threads", "1,2",
                          "--out", dir, NULL};
    int rc = run_cli(log, args);
    CHECK(rc == 0, "ffnn bench local1d --quick --no-gpu exited with %d (log: %s)", rc, log);

    FILE *f = fopen(csv, "r");
    CHECK(f != NULL, "no %s", csv);
    char line[2048];
    int rows = 0, ok = 0, header = 0;
    while (fgets(line, sizeof line, f)) {
        if (!header) {
            static const char want[] = "part,variant,launch,regime,N,K,R,threads,outputs,";
            header = strncmp(line, want, sizeof want - 1) == 0;
            continue;
        }
        rows++;
        if (strncmp(line, "omp_", 4) == 0 && strstr(line, ",ok,") != NULL) ok++;
    }
    fclose(f);
    CHECK(header, "%s: unexpected header", csv);
    /* strong + weak, unique + reused, 2 thread counts */
    CHECK(ok == 8, "%s: %d ok OpenMP rows of %d, expected 8", csv, ok, rows);

    f = fopen(table, "r");
    CHECK(f != NULL, "no %s", table);
    int strong = 0, weak = 0;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "OpenMP strong scaling")) strong = 1;
        if (strstr(line, "OpenMP weak scaling")) weak = 1;
    }
    fclose(f);
    CHECK(strong && weak, "%s lacks the scaling tables", table);

    const char *bad[] = {"bench", "local1d", "--r", "4", NULL};
    rc = run_cli(log, bad);
    CHECK(rc == 2, "--r 4 (even) exited with %d, expected 2", rc);
    const char *unknown[] = {"bench", "seed999", NULL};
    rc = run_cli(log, unknown);
    CHECK(rc == 2, "an unknown suite exited with %d, expected 2", rc);

    remove(csv);
    remove(table);
    remove(log);
    rmdir(dir);
    return TEST_PASS;
}

/* `ffnn bench mnist-mlp --quick --no-gpu` on synthetic blobs: the CPU reference and
 * OpenMP rows of (a) ok, the cuda rows skipped; the CSV and the table written. */
static test_result test_bench_mnist_mlp_quick_cpu(char *why, size_t why_size)
{
    if (access(CLI, X_OK) != 0) SKIP("%s not built", CLI);
    char dir[] = "/tmp/ffnn_bench_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char log[128], csv[128], table[128];
    snprintf(log, sizeof log, "%s/log.txt", dir);
    snprintf(csv, sizeof csv, "%s/mnist-mlp.csv", dir);
    snprintf(table, sizeof table, "%s/mnist-mlp_table.md", dir);
    const char *args[] = {"bench", "mnist-mlp", "--quick", "--no-gpu", "--threads", "2",
                          "--out", dir, NULL};
    int rc = run_cli(log, args);
    CHECK(rc == 0, "ffnn bench mnist-mlp --quick --no-gpu exited with %d (log: %s)", rc, log);
    FILE *f = fopen(csv, "r");
    CHECK(f != NULL, "no %s", csv);
    char line[4096];
    int ok = 0, skipped = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "cpu_gpu,cpu_", 12) == 0 && strstr(line, ",ok,")) ok++;
        if (strstr(line, ",skipped: --no-gpu,")) skipped++;
    }
    fclose(f);
    CHECK(ok == 2, "%d ok CPU rows in %s, expected 2", ok, csv);
    CHECK(skipped > 10, "%d skipped cuda rows in %s", skipped, csv);
    CHECK(access(table, R_OK) == 0, "no %s", table);
    const char *bad[] = {"bench", "mnist-mlp", "--epochs", "0", NULL};
    rc = run_cli(log, bad);
    CHECK(rc == 2, "--epochs 0 exited with %d, expected 2", rc);
    return TEST_PASS;
}

/* `ffnn bench regression-mlp --quick --no-gpu`, cut down to two small CPU runs: one ok
 * cpu_omp row per configuration (its check: test MSE finite and below the initial),
 * the cuda rows listed as skipped, the table written; a bad option exits with 2. */
static test_result test_bench_regression_mlp_quick_cpu(char *why, size_t why_size)
{
    if (access(CLI, X_OK) != 0) SKIP("%s not built", CLI);
    char dir[] = "/tmp/ffnn_bench_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char log[128], csv[128], table[128];
    snprintf(log, sizeof log, "%s/log.txt", dir);
    snprintf(csv, sizeof csv, "%s/regression-mlp.csv", dir);
    snprintf(table, sizeof table, "%s/regression-mlp_table.md", dir);
    const char *args[] = {"bench", "regression-mlp", "--quick", "--no-gpu", "--threads", "2",
                          "--samples", "256", "--hidden", "32", "--hidden-samples", "512",
                          "--out", dir, NULL};
    int rc = run_cli(log, args);
    CHECK(rc == 0, "ffnn bench regression-mlp --quick --no-gpu exited with %d (log: %s)", rc, log);

    FILE *f = fopen(csv, "r");
    CHECK(f != NULL, "no %s", csv);
    char line[2048];
    int rows = 0, ok = 0, skipped = 0, header = 0;
    while (fgets(line, sizeof line, f)) {
        if (!header) {
            static const char want[] = "part,backend,samples,hidden,epochs,steps,threads,";
            header = strncmp(line, want, sizeof want - 1) == 0;
            continue;
        }
        rows++;
        if (strstr(line, ",cpu_omp,") != NULL && strstr(line, ",ok,") != NULL) ok++;
        if (strstr(line, ",cuda_") != NULL && strstr(line, ",skipped: --no-gpu,") != NULL)
            skipped++;
    }
    fclose(f);
    CHECK(header, "%s: unexpected header", csv);
    CHECK(ok == 2 && skipped == 4 && rows == 6,
          "%s: %d ok cpu_omp rows (expected 2), %d skipped cuda rows (expected 4) of %d", csv,
          ok, skipped, rows);

    f = fopen(table, "r");
    CHECK(f != NULL, "no %s", table);
    int by_samples = 0, by_hidden = 0, mse = 0;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "### Time vs samples")) by_samples = 1;
        if (strstr(line, "### Time vs hidden width")) by_hidden = 1;
        if (strstr(line, "### Final MSE")) mse = 1;
    }
    fclose(f);
    CHECK(by_samples && by_hidden && mse, "%s lacks a table", table);

    const char *bad[] = {"bench", "regression-mlp", "--epochs", "0", NULL};
    rc = run_cli(log, bad);
    CHECK(rc == 2, "--epochs 0 exited with %d, expected 2", rc);

    remove(csv);
    remove(table);
    remove(log);
    rmdir(dir);
    return TEST_PASS;
}

/* `ffnn bench modular --quick --no-gpu`: the CPU training rows ok (the image tasks ok
 * or skipped when .devdata/fashion-mnist is absent), the GPU rows skipped, the table
 * written; a bad option exits with 2. */
static test_result test_bench_modular_quick_cpu(char *why, size_t why_size)
{
    if (access(CLI, X_OK) != 0) SKIP("%s not built", CLI);
    char dir[] = "/tmp/ffnn_bench_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char log[128], csv[128], table[128];
    snprintf(log, sizeof log, "%s/log.txt", dir);
    snprintf(csv, sizeof csv, "%s/modular.csv", dir);
    snprintf(table, sizeof table, "%s/modular_table.md", dir);
    const char *args[] = {"bench", "modular", "--quick", "--no-gpu", "--threads", "2",
                          "--out", dir, NULL};
    int rc = run_cli(log, args);
    CHECK(rc == 0, "ffnn bench modular --quick --no-gpu exited with %d (log: %s)", rc, log);
    FILE *f = fopen(csv, "r");
    CHECK(f != NULL, "no %s", csv);
    char line[4096];
    int header = 0, cpu_ok = 0, cpu_rows = 0, points_ok = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        if (!header) {
            static const char want[] = "part,task,backend,arch,loss,batch,epochs,";
            header = strncmp(line, want, sizeof want - 1) == 0;
            continue;
        }
        if (strstr(line, ",\"failed") != NULL) bad++;
        if (strncmp(line, "train,", 6) == 0 && strstr(line, ",cpu_omp,") != NULL) {
            cpu_rows++;
            if (strstr(line, ",\"ok\",") != NULL) cpu_ok++;
            if (strncmp(line, "train,points,", 13) == 0 && strstr(line, ",\"ok\",")) points_ok = 1;
        }
    }
    fclose(f);
    CHECK(header, "%s: unexpected header", csv);
    CHECK(bad == 0 && points_ok && cpu_rows == 4,
          "%s: %d failed rows, points ok %d, %d cpu rows (%d ok)", csv, bad, points_ok,
          cpu_rows, cpu_ok);
    f = fopen(table, "r");
    CHECK(f != NULL, "no %s", table);
    int a = 0, b = 0, c = 0;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "### a)")) a = 1;
        if (strstr(line, "### b)")) b = 1;
        if (strstr(line, "### c)")) c = 1;
    }
    fclose(f);
    CHECK(a && b && c, "%s lacks a table", table);
    const char *badopt[] = {"bench", "modular", "--repeats", "0", NULL};
    rc = run_cli(log, badopt);
    CHECK(rc == 2, "--repeats 0 exited with %d, expected 2", rc);
    remove(csv);
    remove(table);
    remove(log);
    rmdir(dir);
    return TEST_PASS;
}

/* `ffnn bench` runs the separate program ffnn-bench; an ffnn without one beside it or on
 * PATH says so in one line, naming how to get it, and exits with 1. */
static test_result test_bench_program_missing(char *why, size_t why_size)
{
    if (access(CLI, X_OK) != 0) SKIP("%s not built", CLI);
    char dir[] = "/tmp/ffnn_bench_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char exe[128], log[128], cmd[512];
    snprintf(exe, sizeof exe, "%s/ffnn", dir);
    snprintf(log, sizeof log, "%s/log.txt", dir);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", CLI, exe);
    CHECK(system(cmd) == 0, "%s failed", cmd);
    static const char *const env[] = {"PATH=/nonexistent", NULL};
    const cli_run_opts opts = {.exe = exe, .env = env};
    const char *args[] = {"bench", "regression-mlp", "--help", NULL};
    int rc = cli_run(args, log, &opts);
    CHECK(rc == 1, "ffnn bench without ffnn-bench exited with %d, expected 1", rc);
    CHECK(file_contains(log, "ffnn-bench is not installed") && file_contains(log, "make install"),
          "no clear message in %s", log);
    remove(exe);
    remove(log);
    rmdir(dir);
    return TEST_PASS;
}

/* Run `sh -c cmd` in dir, its stdout into out [size]; the exit status, -1 on error. */
static int shell_output(const char *dir, const char *cmd, char *out, size_t size)
{
    char line[1024];
    snprintf(line, sizeof line, "cd '%s' && %s", dir, cmd);
    FILE *p = popen(line, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A benchmark run with its default --out, and its plot with the default paths, from the
 * root of a git checkout, leave `git status --porcelain` as it was: the results go under
 * build/ (ignored), never over a tracked file (docs/ keeps what `make bench-docs OUT=docs`
 * writes). Skips outside a git checkout; the plot part skips without matplotlib. */
static test_result test_bench_clean_tree(char *why, size_t why_size)
{
    if (access(CLI, X_OK) != 0) SKIP("%s not built", CLI);
    char top[1024], before[16384], after[16384];
    if (shell_output(".", "git rev-parse --show-toplevel 2>/dev/null", top, sizeof top) != 0 ||
        top[0] != '/')
        SKIP("not in a git checkout");
    top[strcspn(top, "\n")] = '\0';
    CHECK(shell_output(top, "git status --porcelain", before, sizeof before) == 0,
          "git status failed in %s", top);
    char log[] = "/tmp/ffnn_bench_clean_XXXXXX";
    int fd = mkstemp(log);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    /* not --quick: the full run's default --out (a few tiny runs) */
    const char *args[] = {"bench", "regression-mlp", "--no-gpu", "--threads", "2", "--samples",
                          "256", "--hidden", "32", "--hidden-samples", "256", "--epochs", "2",
                          "--repeats", "1", NULL};
    const cli_run_opts opts = {.cwd = top};
    int rc = cli_run(args, log, &opts);
    CHECK(rc == 0, "ffnn bench regression-mlp exited with %d (log: %s)", rc, log);
    CHECK(file_contains(log, "build/bench/regression-mlp.csv"), "%s: not written under build/bench",
          log);
    char plot[64];
    if (shell_output(top, "/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1 && echo y",
                     plot, sizeof plot) == 0 && plot[0] == 'y') {
        CHECK(shell_output(top, "/usr/bin/python3 bench/plot_regression_mlp.py >/dev/null 2>&1",
                           plot, sizeof plot) == 0, "bench/plot_regression_mlp.py failed");
        char png[1100];
        snprintf(png, sizeof png, "%s/build/bench/regression-mlp.png", top);
        CHECK(access(png, R_OK) == 0, "no %s", png);
    }
    CHECK(shell_output(top, "git status --porcelain", after, sizeof after) == 0, "git status");
    CHECK(strcmp(before, after) == 0, "git status --porcelain changed:\nbefore:\n%s\nafter:\n%s",
          before, after);
    remove(log);
    return TEST_PASS;
}

/* The product holds no lab: the ffnn program defines no symbol of the suites
 * (ffnn_bench_*) or the kernel lab (ffnn_lab_*); ffnn-bench, beside it, does. */
static test_result test_bench_not_in_ffnn(char *why, size_t why_size)
{
    if (access(CLI, X_OK) != 0) SKIP("%s not built", CLI);
    if (system("command -v nm >/dev/null 2>&1") != 0) SKIP("no nm (binutils)");
    char cmd[1200], out[4096], bench[1100];
    snprintf(cmd, sizeof cmd, "nm --defined-only '%s' | grep -cE ' (ffnn_bench_|ffnn_lab_)'",
             CLI);
    shell_output(".", cmd, out, sizeof out);
    CHECK(atoi(out) == 0, "%s defines %d benchmark or lab symbols", CLI, atoi(out));
    snprintf(bench, sizeof bench, "%s", CLI);
    char *slash = strrchr(bench, '/');
    CHECK(slash != NULL, "%s: no folder", CLI);
    snprintf(slash + 1, sizeof bench - (size_t)(slash + 1 - bench), "ffnn-bench");
    if (access(bench, X_OK) != 0) SKIP("no %s", bench);
    snprintf(cmd, sizeof cmd, "nm --defined-only '%s' | grep -c ' ffnn_bench_mnist_mlp$'", bench);
    shell_output(".", cmd, out, sizeof out);
    CHECK(atoi(out) == 1, "%s lacks the suites", bench);
    return TEST_PASS;
}

const test_case bench_tests[] = {
    {"bench_options", test_bench_options},
    {"bench_cells", test_bench_cells},
    {"bench_lab_check", test_lab_check},
    {"bench_help", test_bench_help},
    {"bench_mnist_mlp_quick_cpu", test_bench_mnist_mlp_quick_cpu},
    {"bench_regression_mlp_quick_cpu", test_bench_regression_mlp_quick_cpu},
    {"bench_local1d_quick_cpu", test_bench_local1d_quick_cpu},
    {"bench_modular_quick_cpu", test_bench_modular_quick_cpu},
    {"bench_program_missing", test_bench_program_missing},
    {"bench_clean_tree", test_bench_clean_tree},
    {"bench_not_in_ffnn", test_bench_not_in_ffnn},
};
const size_t bench_tests_count = sizeof bench_tests / sizeof bench_tests[0];
