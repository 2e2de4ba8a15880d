/* test_strategies.c - placeholder suite, filled in by the strategies work. */
#include "check.h"

static test_result placeholder(char *why, size_t why_size)
{
    SKIP("not written yet");
}

const test_case strategies_tests[] = {{"strategies_placeholder", placeholder}};
const size_t strategies_tests_count = sizeof strategies_tests / sizeof strategies_tests[0];
