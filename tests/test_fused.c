/* test_fused.c - placeholder suite, filled in by the fused work. */
#include "check.h"

static test_result placeholder(char *why, size_t why_size)
{
    SKIP("not written yet");
}

const test_case fused_tests[] = {{"fused_placeholder", placeholder}};
const size_t fused_tests_count = sizeof fused_tests / sizeof fused_tests[0];
