/* vast_cmocka.h - the main() every cmocka program of tests/ shares.
 *
 *   VAST_CMOCKA_MAIN(setup, teardown, test_a, test_b, ...)
 *
 * defines main(): the tests, in the order listed, as one group named "tests" with that group
 * set-up and tear-down (NULL: none), each test under its own name, exactly as a table of
 * cmocka_unit_test() entries passed to cmocka_run_group_tests() would; the exit status is the
 * number of failed tests. The names come from the list's own text, so that a test is named
 * once. */
#ifndef VAST_TESTS_CMOCKA_H
#define VAST_TESTS_CMOCKA_H

#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Runs fns[0..n) named by `names`, the comma-separated text of their list. */
static inline int vast_cmocka_run(const char *names, const CMUnitTestFunction *fns, size_t n, CMFixtureFunction setup,
                                  CMFixtureFunction teardown)
{
    struct CMUnitTest *tests = calloc(n, sizeof *tests);
    char *text = strdup(names), *save = NULL;
    size_t i = 0;
    for (char *name = strtok_r(text, ",", &save); name != NULL && i < n; name = strtok_r(NULL, ",", &save), i++) {
        while (isspace((unsigned char)*name))
            name++;
        tests[i] = (struct CMUnitTest){name, fns[i], NULL, NULL, NULL};
    }
    int failed = _cmocka_run_group_tests("tests", tests, n, setup, teardown);
    free(tests);
    free(text);
    return failed;
}

#define VAST_CMOCKA_MAIN(setup, teardown, ...)                                                                        \
    int main(void)                                                                                                     \
    {                                                                                                                  \
        const CMUnitTestFunction fns[] = {__VA_ARGS__};                                                                \
        return vast_cmocka_run(#__VA_ARGS__, fns, sizeof fns / sizeof fns[0], setup, teardown);                        \
    }

#endif
