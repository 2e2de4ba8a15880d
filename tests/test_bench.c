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
#include "test_files.h"

#define CLI (cli_binary())

/* Run CLI with args (NULL-terminated), stdout and stderr into log; exit status or -1. */
static int run_cli(const char *log, const char *const *args) { return cli_run(args, log, NULL); }

/* ------------------------------------------------------------ the harnesses */

/* The option table: every kind, the defaults kept, --help, errors exit 2. */
TEST("bench_options", test_bench_options)
{
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
TEST("bench_cells", test_bench_cells)
{
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
TEST("bench_lab_check", test_lab_check)
{
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

/* What a suite run with --out DIR leaves there: SUITE.csv, SUITE_table.md, and the
 * log of the run (log.txt). */
typedef struct suite_files {
    char log[192], csv[192], table[192];
} suite_files;

static void suite_files_in(suite_files *f, const char *dir, const char *suite)
{
    snprintf(f->log, sizeof f->log, "%s/log.txt", dir);
    snprintf(f->csv, sizeof f->csv, "%s/%s.csv", dir, suite);
    snprintf(f->table, sizeof f->table, "%s/%s_table.md", dir, suite);
}

/* Run `ffnn ARGS` (NULL-terminated) into log: it must exit with want (what names the
 * run in the failure). */
static test_result cli_exits(const char *log, const char *const *args, int want,
                             const char *what)
{
    int rc = run_cli(log, args);
    CHECK(rc == want, "%s exited with %d, expected %d (log: %s)", what, rc, want, log);
    return TEST_PASS;
}

/* The rows of a suite's CSV: row(line, counts) for each line after the header, which
 * must start with header (NULL: no header, every line is a row). */
typedef void (*csv_row_fn)(const char *line, int *counts);

static test_result scan_csv(const char *csv, const char *header, csv_row_fn row, int *counts)
{
    FILE *f = fopen(csv, "r");
    CHECK(f != NULL, "no %s", csv);
    char line[4096];
    int seen = header == NULL;
    while (fgets(line, sizeof line, f)) {
        if (!seen) {
            seen = strncmp(line, header, strlen(header)) == 0;
            continue;
        }
        row(line, counts);
    }
    fclose(f);
    CHECK(seen, "%s: unexpected header", csv);
    return TEST_PASS;
}

/* The suite's markdown table exists and has every heading of heads (NULL-terminated). */
static test_result table_has(const char *table, const char *const *heads)
{
    CHECK(access(table, R_OK) == 0, "no %s", table);
    for (size_t i = 0; heads[i]; i++)
        CHECK(file_contains(table, heads[i]), "%s lacks the table '%s'", table, heads[i]);
    return TEST_PASS;
}

/* `ffnn bench --help` and every suite's --help exit 0 and print a usage. */
TEST_DIR_CASE("bench_help", "bench", bench_help)
{
    if (access(CLI, X_OK) != 0) SKIP("%s not built", CLI);
    char log[192];
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
    return TEST_PASS;
}

/* A suite run as a user would, --quick --no-gpu with --out a fresh directory: it
 * exits 0; every row of its CSV (after the header, which must start with header;
 * NULL: no header) goes to row(line, counts), then verdict(csv, counts) judges the
 * counts; its table has every heading of heads; each of the bad command lines (a
 * usage error, what names it) exits with 2. */
typedef struct suite_case {
    const char *suite;
    const char *const *args; /* after `bench SUITE --quick --no-gpu`, before --out */
    const char *header;
    csv_row_fn row;
    test_result (*verdict)(const char *csv, const int *counts);
    const char *const *heads;
    const char *const *bad[2]; /* NULL: none */
    const char *bad_what[2];
} suite_case;

static test_result run_suite_case(char *why, size_t why_size, const suite_case *c)
{
    if (access(CLI, X_OK) != 0) SKIP("%s not built", CLI);
    char dir[] = "/tmp/ffnn_bench_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    suite_files sf;
    suite_files_in(&sf, dir, c->suite);
    const char *args[32] = {"bench", c->suite, "--quick", "--no-gpu"};
    size_t n = 4;
    for (size_t i = 0; c->args[i]; i++) args[n++] = c->args[i];
    args[n++] = "--out";
    args[n++] = dir;
    args[n] = NULL;
    char what[96];
    snprintf(what, sizeof what, "ffnn bench %s --quick --no-gpu", c->suite);
    int counts[4] = {0, 0, 0, 0};
    test_result t = cli_exits(sf.log, args, 0, what);
    if (t == TEST_PASS) t = scan_csv(sf.csv, c->header, c->row, counts);
    if (t == TEST_PASS) t = c->verdict(sf.csv, counts);
    if (t == TEST_PASS) t = table_has(sf.table, c->heads);
    for (int k = 0; k < 2 && t == TEST_PASS && c->bad[k]; k++)
        t = cli_exits(sf.log, c->bad[k], 2, c->bad_what[k]);
    test_remove_dir(dir);
    return t;
}

/* local1d: counts rows, ok OpenMP rows; strong + weak, unique + reused, 2 thread
 * counts make 8 */
static void local1d_row(const char *line, int *n)
{
    n[0]++;
    if (strncmp(line, "omp_", 4) == 0 && strstr(line, ",ok,") != NULL) n[1]++;
}
static test_result local1d_verdict(const char *csv, const int *n)
{
    CHECK(n[1] == 8, "%s: %d ok OpenMP rows of %d, expected 8", csv, n[1], n[0]);
    return TEST_PASS;
}
static const suite_case local1d_case = {
    "local1d", (const char *const[]){"--cpu-threads", "1,2", NULL},
    "part,variant,launch,regime,N,K,R,threads,outputs,", local1d_row, local1d_verdict,
    (const char *const[]){"OpenMP strong scaling", "OpenMP weak scaling", NULL},
    {(const char *const[]){"bench", "local1d", "--r", "4", NULL},
     (const char *const[]){"bench", "seed999", NULL}},
    {"--r 4 (even)", "an unknown suite"},
};
TEST_WITH("bench_local1d_quick_cpu", test_bench_local1d_quick_cpu, run_suite_case, &local1d_case);

/* mnist-mlp on synthetic blobs: the CPU reference and OpenMP rows of (a) ok (counts
 * 0), the cuda rows skipped (counts 1); the CSV and the table written. */
static void mnist_mlp_row(const char *line, int *n)
{
    if (strncmp(line, "cpu_gpu,cpu_", 12) == 0 && strstr(line, ",ok,")) n[0]++;
    if (strstr(line, ",skipped: --no-gpu,")) n[1]++;
}
static test_result mnist_mlp_verdict(const char *csv, const int *n)
{
    CHECK(n[0] == 2, "%d ok CPU rows in %s, expected 2", n[0], csv);
    CHECK(n[1] > 10, "%d skipped cuda rows in %s", n[1], csv);
    return TEST_PASS;
}
static const suite_case mnist_mlp_case = {
    "mnist-mlp", (const char *const[]){"--threads", "2", NULL}, NULL, mnist_mlp_row,
    mnist_mlp_verdict, (const char *const[]){NULL},
    {(const char *const[]){"bench", "mnist-mlp", "--epochs", "0", NULL}, NULL},
    {"--epochs 0", NULL},
};
TEST_WITH("bench_mnist_mlp_quick_cpu", test_bench_mnist_mlp_quick_cpu, run_suite_case,
          &mnist_mlp_case);

/* regression-mlp cut down to two small CPU runs: one ok cpu_omp row per
 * configuration (its check: test MSE finite and below the initial), the cuda rows
 * listed as skipped, the table written. Counts: rows, ok cpu_omp, skipped cuda. */
static void regression_mlp_row(const char *line, int *n)
{
    n[0]++;
    if (strstr(line, ",cpu_omp,") != NULL && strstr(line, ",ok,") != NULL) n[1]++;
    if (strstr(line, ",cuda_") != NULL && strstr(line, ",skipped: --no-gpu,") != NULL) n[2]++;
}
static test_result regression_mlp_verdict(const char *csv, const int *n)
{
    CHECK(n[1] == 2 && n[2] == 4 && n[0] == 6,
          "%s: %d ok cpu_omp rows (expected 2), %d skipped cuda rows (expected 4) of %d", csv,
          n[1], n[2], n[0]);
    return TEST_PASS;
}
static const suite_case regression_mlp_case = {
    "regression-mlp",
    (const char *const[]){"--threads", "2", "--samples", "256", "--hidden", "32",
                          "--hidden-samples", "512", NULL},
    "part,backend,samples,hidden,epochs,steps,threads,", regression_mlp_row,
    regression_mlp_verdict,
    (const char *const[]){"### Time vs samples", "### Time vs hidden width", "### Final MSE",
                          NULL},
    {(const char *const[]){"bench", "regression-mlp", "--epochs", "0", NULL}, NULL},
    {"--epochs 0", NULL},
};
TEST_WITH("bench_regression_mlp_quick_cpu", test_bench_regression_mlp_quick_cpu, run_suite_case,
          &regression_mlp_case);

/* modular: the CPU training rows ok (the image tasks ok or skipped when
 * .devdata/fashion-mnist is absent), the GPU rows skipped, the table written.
 * Counts: failed rows, cpu_omp training rows, of them ok, an ok points row. */
static void modular_row(const char *line, int *n)
{
    if (strstr(line, ",\"failed") != NULL) n[0]++;
    if (strncmp(line, "train,", 6) == 0 && strstr(line, ",cpu_omp,") != NULL) {
        n[1]++;
        if (strstr(line, ",\"ok\",") != NULL) n[2]++;
        if (strncmp(line, "train,points,", 13) == 0 && strstr(line, ",\"ok\",")) n[3] = 1;
    }
}
static test_result modular_verdict(const char *csv, const int *n)
{
    CHECK(n[0] == 0 && n[3] && n[1] == 4, "%s: %d failed rows, points ok %d, %d cpu rows (%d ok)",
          csv, n[0], n[3], n[1], n[2]);
    return TEST_PASS;
}
static const suite_case modular_case = {
    "modular", (const char *const[]){"--threads", "2", NULL},
    "part,task,backend,arch,loss,batch,epochs,", modular_row, modular_verdict,
    (const char *const[]){"### a)", "### b)", "### c)", NULL},
    {(const char *const[]){"bench", "modular", "--repeats", "0", NULL}, NULL},
    {"--repeats 0", NULL},
};
TEST_WITH("bench_modular_quick_cpu", test_bench_modular_quick_cpu, run_suite_case, &modular_case);

/* `ffnn bench` runs the separate program ffnn-bench; an ffnn without one beside it or on
 * PATH says so in one line, naming how to get it, and exits with 1. */
TEST_DIR_CASE("bench_program_missing", "bench", bench_program_missing)
{
    if (access(CLI, X_OK) != 0) SKIP("%s not built", CLI);
    char exe[192], log[192], cmd[512];
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
TEST("bench_clean_tree", test_bench_clean_tree)
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
TEST("bench_not_in_ffnn", test_bench_not_in_ffnn)
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
