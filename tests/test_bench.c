/*
 * test_bench.c - the benchmark suites of the CLI (ffnn bench ...), run as a user
 * would: `ffnn bench seed001 --quick --no-gpu` (cut down) and
 * `ffnn bench seed002 --quick --no-gpu` must run on any machine (its OpenMP
 * part checks every configuration against the CPU reference before timing it) and
 * write a CSV with one ok row per measurement plus the markdown table; usage errors
 * exit with 2.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define CLI (getenv("FFNN_CLI") && *getenv("FFNN_CLI") ? getenv("FFNN_CLI") : "build/ffnn")

/* Run CLI with args (NULL-terminated), stdout and stderr into log; exit status or -1. */
static int run_cli(const char *log, const char *const *args)
{
    const char *argv[32];
    int n = 0, status = 0;
    argv[n++] = CLI;
    while (*args && n < 31) argv[n++] = *args++;
    argv[n] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        FILE *f = freopen(log, "w", stdout);
        if (!f || dup2(fileno(stdout), 2) < 0) _exit(126);
        execv(CLI, (char *const *)argv);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static test_result test_bench_seed002_quick_cpu(char *why, size_t why_size)
{
    if (access(CLI, X_OK) != 0) SKIP("%s not built", CLI);
    char dir[] = "/tmp/ffnn_bench_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char log[128], csv[128], table[128];
    snprintf(log, sizeof log, "%s/log.txt", dir);
    snprintf(csv, sizeof csv, "%s/seed002.csv", dir);
    snprintf(table, sizeof table, "%s/seed002_table.md", dir);
    const char *args[] = {"bench", "seed002", "--quick", "--no-gpu", "--cpu-threads", "1,2",
                          "--out", dir, NULL};
    int rc = run_cli(log, args);
    CHECK(rc == 0, "ffnn bench seed002 --quick --no-gpu exited with %d (log: %s)", rc, log);

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

    const char *bad[] = {"bench", "seed002", "--r", "4", NULL};
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

/* `ffnn bench seed000 --quick --no-gpu` on synthetic blobs: the CPU reference and
 * OpenMP rows of (a) ok, the cuda rows skipped; the CSV and the table written. */
static test_result test_bench_seed000_quick_cpu(char *why, size_t why_size)
{
    if (access(CLI, X_OK) != 0) SKIP("%s not built", CLI);
    char dir[] = "/tmp/ffnn_bench_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char log[128], csv[128], table[128];
    snprintf(log, sizeof log, "%s/log.txt", dir);
    snprintf(csv, sizeof csv, "%s/seed000.csv", dir);
    snprintf(table, sizeof table, "%s/seed000_table.md", dir);
    const char *args[] = {"bench", "seed000", "--quick", "--no-gpu", "--threads", "2",
                          "--out", dir, NULL};
    int rc = run_cli(log, args);
    CHECK(rc == 0, "ffnn bench seed000 --quick --no-gpu exited with %d (log: %s)", rc, log);
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
    const char *bad[] = {"bench", "seed000", "--epochs", "0", NULL};
    rc = run_cli(log, bad);
    CHECK(rc == 2, "--epochs 0 exited with %d, expected 2", rc);
    return TEST_PASS;
}

/* `ffnn bench seed001 --quick --no-gpu`, cut down to two small CPU runs: one ok
 * cpu_omp row per configuration (its check: test MSE finite and below the initial),
 * the cuda rows listed as skipped, the table written; a bad option exits with 2. */
static test_result test_bench_seed001_quick_cpu(char *why, size_t why_size)
{
    if (access(CLI, X_OK) != 0) SKIP("%s not built", CLI);
    char dir[] = "/tmp/ffnn_bench_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char log[128], csv[128], table[128];
    snprintf(log, sizeof log, "%s/log.txt", dir);
    snprintf(csv, sizeof csv, "%s/seed001.csv", dir);
    snprintf(table, sizeof table, "%s/seed001_table.md", dir);
    const char *args[] = {"bench", "seed001", "--quick", "--no-gpu", "--threads", "2",
                          "--samples", "256", "--hidden", "32", "--hidden-samples", "512",
                          "--out", dir, NULL};
    int rc = run_cli(log, args);
    CHECK(rc == 0, "ffnn bench seed001 --quick --no-gpu exited with %d (log: %s)", rc, log);

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

    const char *bad[] = {"bench", "seed001", "--epochs", "0", NULL};
    rc = run_cli(log, bad);
    CHECK(rc == 2, "--epochs 0 exited with %d, expected 2", rc);

    remove(csv);
    remove(table);
    remove(log);
    rmdir(dir);
    return TEST_PASS;
}

/* `ffnn bench seed004 --quick --no-gpu`: the CPU training rows ok (the image tasks ok
 * or skipped when .devdata/fashion-mnist is absent), the GPU rows skipped, the table
 * written; a bad option exits with 2. */
static test_result test_bench_seed004_quick_cpu(char *why, size_t why_size)
{
    if (access(CLI, X_OK) != 0) SKIP("%s not built", CLI);
    char dir[] = "/tmp/ffnn_bench_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char log[128], csv[128], table[128];
    snprintf(log, sizeof log, "%s/log.txt", dir);
    snprintf(csv, sizeof csv, "%s/seed004.csv", dir);
    snprintf(table, sizeof table, "%s/seed004_table.md", dir);
    const char *args[] = {"bench", "seed004", "--quick", "--no-gpu", "--threads", "2",
                          "--out", dir, NULL};
    int rc = run_cli(log, args);
    CHECK(rc == 0, "ffnn bench seed004 --quick --no-gpu exited with %d (log: %s)", rc, log);
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
    const char *badopt[] = {"bench", "seed004", "--repeats", "0", NULL};
    rc = run_cli(log, badopt);
    CHECK(rc == 2, "--repeats 0 exited with %d, expected 2", rc);
    remove(csv);
    remove(table);
    remove(log);
    rmdir(dir);
    return TEST_PASS;
}

const test_case bench_tests[] = {
    {"bench_seed000_quick_cpu", test_bench_seed000_quick_cpu},
    {"bench_seed001_quick_cpu", test_bench_seed001_quick_cpu},
    {"bench_seed002_quick_cpu", test_bench_seed002_quick_cpu},
    {"bench_seed004_quick_cpu", test_bench_seed004_quick_cpu},
};
const size_t bench_tests_count = sizeof bench_tests / sizeof bench_tests[0];
