/* check.h - the tiny test harness: every test returns PASS, FAIL or SKIP (with a
 * reason). CHECK prints the failing expression, file and line and fails the test. */
#ifndef FFNN_CHECK_H
#define FFNN_CHECK_H

#include <stdio.h>
#include <stddef.h>

typedef enum { TEST_PASS = 0, TEST_FAIL = 1, TEST_SKIP = 2 } test_result;

/* why: buffer for a skip reason (or extra failure detail), why_size bytes. */
typedef test_result (*test_fn)(char *why, size_t why_size);

typedef struct test_case {
    const char *name;
    test_fn fn;
} test_case;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "    %s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                  \
            return TEST_FAIL;                                                     \
        }                                                                         \
    } while (0)

/* Check that an ffnn call returned FFNN_OK; prints ffnn_last_error() if not. */
#define CHECK_OK(call)                                                            \
    do {                                                                          \
        ffnn_status check_ok_status_ = (call);                                    \
        CHECK(check_ok_status_ == FFNN_OK, "%s returned %d: %s", #call,          \
              (int)check_ok_status_, ffnn_last_error());                          \
    } while (0)

/* Check that a helper returning test_result passed: a SKIP or FAIL of the helper
 * fails the test (the helper printed why). */
#define CHECK_PASS(call)                                                          \
    do {                                                                          \
        if ((call) != TEST_PASS)                                                  \
            return TEST_FAIL;                                                     \
    } while (0)

/* Run a helper returning test_result and return its result (FAIL or SKIP) unless it
 * passed: the cases of a test in turn, stopping at the first that does not pass. */
#define PASS_OR_RETURN(call)                                                      \
    do {                                                                          \
        test_result pass_or_return_ = (call);                                     \
        if (pass_or_return_ != TEST_PASS)                                         \
            return pass_or_return_;                                               \
    } while (0)

#define SKIP(...)                                                                 \
    do {                                                                          \
        snprintf(why, why_size, __VA_ARGS__);                                     \
        return TEST_SKIP;                                                         \
    } while (0)

/* TEST("name", fn) { body }: defines the test fn and registers it as name
 * (TEST_CASE below); the body may use why and why_size (as SKIP does) or not. */
#define TEST(name, fn)                                                            \
    static test_result fn(char *why, size_t why_size);                            \
    TEST_CASE(name, fn);                                                          \
    static test_result fn(char *why __attribute__((unused)),                      \
                          size_t why_size __attribute__((unused)))

/* A test that only calls a suite's wrapper (a fixture, a table's group):
 * TEST_WITH("name", fn, wrap, args...); defines fn(why, why_size) returning
 * wrap(why, why_size, args...) and registers it as name (TEST_CASE below). */
#define TEST_WITH(name, fn, wrap, ...)                                            \
    static test_result fn(char *why, size_t why_size)                             \
    {                                                                             \
        return wrap(why, why_size, __VA_ARGS__);                                  \
    }                                                                             \
    TEST_CASE(name, fn)

/* TEST_CASE(name, fn): registers the test fn under name (a string; the runner's
 * filters match it), at start-up, before main; TEST, TEST_WITH and the files' test
 * macros call it. Written after fn's declaration.
 * The runner runs the tests in the order they registered: the test files in the
 * link order (the Makefile sorts them by name), each file's in the order of its
 * TEST_CASE lines (constructors run in definition order). */
void test_register(const char *name, test_fn fn);
#define TEST_CASE(name, fn)                                                       \
    __attribute__((constructor)) static void test_case_register_##fn(void)        \
    {                                                                             \
        test_register(name, fn);                                                  \
    }                                                                             \
    typedef int test_case_semicolon_##fn

#endif
