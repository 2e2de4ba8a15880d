/* main.c - the test runner: runs every registered test (or the tests whose names contain any
 * of argv[1..], and none of those given as -NAME), prints one line per test, and
 * ends with "N passed, N failed[, N skipped (name: reason; ...)]". Exit status 1 when
 * any test failed. `ffnn_tests --list` prints the names, one per line. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

/* The registered tests (TEST_CASE in check.h), filled before main runs. */
#define TEST_MAX 1024
static test_case registered[TEST_MAX];
static size_t registered_count;

void test_register(const char *name, test_fn fn)
{
    if (registered_count == TEST_MAX) {
        fprintf(stderr, "tests/main.c: more than %d tests: raise TEST_MAX\n", TEST_MAX);
        abort();
    }
    registered[registered_count++] = (test_case){name, fn};
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < registered_count; i++)
            printf("%s\n", registered[i].name);
        return 0;
    }
    /* the filters: a test runs when its name contains any of argv[1..] that does not
     * start with '-' (none such: all) and none of those that do (after the '-') */
    int passed = 0, failed = 0, skipped = 0;
    char skips[8192] = "";
    for (size_t i = 0; i < registered_count; i++) {
        const test_case *tc = &registered[i];
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
    if (skipped)
        printf("%d passed, %d failed, %d skipped (%s)\n", passed, failed, skipped, skips);
    else
        printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
