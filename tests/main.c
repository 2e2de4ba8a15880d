/* main.c - the test runner: runs every suite (or the tests whose names contain any
 * of argv[1..], and none of those given as -NAME), prints one line per test, and
 * ends with "N passed, N failed[, N skipped (name: reason; ...)]". Exit status 1 when
 * any test failed. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "check.h"

TEST_SUITE_DECLARE(arch);
TEST_SUITE_DECLARE(idx);
TEST_SUITE_DECLARE(gradcheck);
TEST_SUITE_DECLARE(cuda);
TEST_SUITE_DECLARE(train);
TEST_SUITE_DECLARE(safetensors);
TEST_SUITE_DECLARE(optim);
TEST_SUITE_DECLARE(determinism);
TEST_SUITE_DECLARE(torch);
TEST_SUITE_DECLARE(data);
TEST_SUITE_DECLARE(checkpoint);
TEST_SUITE_DECLARE(omp);
TEST_SUITE_DECLARE(local1d);
TEST_SUITE_DECLARE(embedding);
TEST_SUITE_DECLARE(bench);
TEST_SUITE_DECLARE(cli_log);
TEST_SUITE_DECLARE(cli_output);
TEST_SUITE_DECLARE(fused);
TEST_SUITE_DECLARE(cublas);
TEST_SUITE_DECLARE(strategies);
TEST_SUITE_DECLARE(mixed);
TEST_SUITE_DECLARE(golden);
TEST_SUITE_DECLARE(hardening);
TEST_SUITE_DECLARE(faults);
TEST_SUITE_DECLARE(parallel);
TEST_SUITE_DECLARE(tabular);
TEST_SUITE_DECLARE(csv);
TEST_SUITE_DECLARE(install);
TEST_SUITE_DECLARE(features);
TEST_SUITE_DECLARE(tasks);
TEST_SUITE_DECLARE(hardening2);
TEST_SUITE_DECLARE(table_api);
TEST_SUITE_DECLARE(predictor);
TEST_SUITE_DECLARE(onnx);
TEST_SUITE_DECLARE(fit);
TEST_SUITE_DECLARE(sweep);
TEST_SUITE_DECLARE(sweep_cuda);
TEST_SUITE_DECLARE(ensemble);
TEST_SUITE_DECLARE(module);
TEST_SUITE_DECLARE(options);
TEST_SUITE_DECLARE(backend_table);
TEST_SUITE_DECLARE(ops);

typedef struct suite {
    const test_case *tests;
    const size_t *count;
} suite;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    const suite suites[] = {
        {arch_tests, &arch_tests_count},   {idx_tests, &idx_tests_count},
        {gradcheck_tests, &gradcheck_tests_count}, {cuda_tests, &cuda_tests_count},
        {safetensors_tests, &safetensors_tests_count},
        {train_tests, &train_tests_count}, {optim_tests, &optim_tests_count},
        {determinism_tests, &determinism_tests_count}, {torch_tests, &torch_tests_count},
        {data_tests, &data_tests_count},
        {checkpoint_tests, &checkpoint_tests_count},
        {omp_tests, &omp_tests_count},
        {local1d_tests, &local1d_tests_count},
        {embedding_tests, &embedding_tests_count},
        {bench_tests, &bench_tests_count},
        {cli_log_tests, &cli_log_tests_count},
        {cli_output_tests, &cli_output_tests_count},
        {fused_tests, &fused_tests_count},
        {cublas_tests, &cublas_tests_count},
        {strategies_tests, &strategies_tests_count},
        {mixed_tests, &mixed_tests_count},
        {golden_tests, &golden_tests_count},
        {hardening_tests, &hardening_tests_count},
        {faults_tests, &faults_tests_count},
        {parallel_tests, &parallel_tests_count},
        {tabular_tests, &tabular_tests_count},
        {csv_tests, &csv_tests_count},
        {install_tests, &install_tests_count},
        {features_tests, &features_tests_count},
        {tasks_tests, &tasks_tests_count},
        {hardening2_tests, &hardening2_tests_count},
        {table_api_tests, &table_api_tests_count},
        {predictor_tests, &predictor_tests_count},
        {onnx_tests, &onnx_tests_count},
        {fit_tests, &fit_tests_count},
        {sweep_tests, &sweep_tests_count},
        {sweep_cuda_tests, &sweep_cuda_tests_count},
        {ensemble_tests, &ensemble_tests_count},
        {module_tests, &module_tests_count},
        {options_tests, &options_tests_count},
        {backend_table_tests, &backend_table_tests_count},
        {ops_tests, &ops_tests_count},
    };
    /* the filters: a test runs when its name contains any of argv[1..] that does not
     * start with '-' (none such: all) and none of those that do (after the '-') */
    int passed = 0, failed = 0, skipped = 0;
    char skips[8192] = "";
    for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++) {
        for (size_t i = 0; i < *suites[s].count; i++) {
            const test_case *tc = &suites[s].tests[i];
            int positive = 0, selected = 0, excluded = 0;
            for (int f = 1; f < argc; f++) {
                if (argv[f][0] == '-') {
                    excluded |= strstr(tc->name, argv[f] + 1) != NULL;
                } else {
                    positive = 1;
                    selected |= strstr(tc->name, argv[f]) != NULL;
                }
            }
            selected = (selected || !positive) && !excluded;
            if (!selected)
                continue;
            char why[512] = "";
            double start = now_seconds();
            test_result r = tc->fn(why, sizeof why);
            double seconds = now_seconds() - start;
            if (r == TEST_PASS) {
                passed++;
                printf("PASS %-44s %7.2f s\n", tc->name, seconds);
            } else if (r == TEST_SKIP) {
                skipped++;
                printf("SKIP %-44s %s\n", tc->name, why);
                size_t used = strlen(skips);
                snprintf(skips + used, sizeof skips - used, "%s%s: %s", used ? "; " : "",
                         tc->name, why);
            } else {
                failed++;
                printf("FAIL %-44s %7.2f s %s\n", tc->name, seconds, why);
            }
            fflush(stdout);
        }
    }
    if (skipped)
        printf("%d passed, %d failed, %d skipped (%s)\n", passed, failed, skipped, skips);
    else
        printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
