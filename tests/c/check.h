/* Minimal assertion macros for the native C tests: a failing CHECK prints file:line and the
 * expression, counts the failure and continues; main returns non-zero if anything failed. */
#ifndef WT_TESTS_CHECK_H
#define WT_TESTS_CHECK_H

#include <math.h>
#include <stdio.h>

#include "base/status.h"

static int wt_check_failures = 0;

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      wt_check_failures++;                                                 \
    }                                                                      \
  } while (0)

#define CHECK_OK(expr)                                                     \
  do {                                                                     \
    int check_rc_ = (expr);                                                \
    if (check_rc_ != 0) {                                                  \
      fprintf(stderr, "%s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #expr, check_rc_, \
              wt_error_message());                                         \
      wt_check_failures++;                                                 \
    }                                                                      \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                              \
  do {                                                                     \
    double check_a_ = (a), check_b_ = (b);                                 \
    if (!(fabs(check_a_ - check_b_) <= (tol))) {                           \
      fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.9g, %s = %.9g\n", __FILE__, __LINE__, \
              #a, check_a_, #b, check_b_);                                 \
      wt_check_failures++;                                                 \
    }                                                                      \
  } while (0)

#define CHECK_DONE()                                                       \
  do {                                                                     \
    if (wt_check_failures) {                                               \
      fprintf(stderr, "%d check(s) failed\n", wt_check_failures);          \
      return 1;                                                            \
    }                                                                      \
    return 0;                                                              \
  } while (0)

#endif
