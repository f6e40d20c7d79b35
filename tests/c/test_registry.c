/* The op registry holds every op that is defined, once:
 *  - every entry of the unary family's lists (src/ops/unary_ops.h) is found by wt_op_find, with
 *    the gradient rule and flags its line says;
 *  - every registered op is the one wt_op_find returns for its (domain, op_type): no two
 *    definitions share a name (the later would shadow the earlier), and each has infer (its CPU
 *    kernel: test_cpu_kernels.c).
 * (A hand-written definition left out of its family's table fails the build: definitions are
 * static, so an unlisted one is an unused variable under -Werror.) */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "ops/op.h"
#include "ops/unary_ops.h"

static int g_bad = 0;

static void expect_op(const char *domain, const char *type, int has_grad, unsigned flags) {
  const wt_op_def *op = wt_op_find(domain, type);
  if (!op) {
    fprintf(stderr, "%s%s%s is in its family's list but not registered\n", domain,
            domain[0] ? "::" : "", type);
    g_bad++;
    return;
  }
  if ((op->grad != NULL) != has_grad || (op->flags & flags) != flags || !op->spec) {
    fprintf(stderr, "%s: registered definition differs from its list entry\n", type);
    g_bad++;
  }
}

#define HAS_RULE 1
#define HAS_NO_RULE 0
#define CHECK_ACT(ID, KIND, DT, SINCE, GRAD, ...) expect_op("", #ID, HAS_##GRAD, WT_OP_INPLACE);
#define CHECK_OP(ID, DOM, TYPE, KIND, DT, SINCE, MIN_IN, MAX_IN, MAX_OUT, FLAGS, GRAD, ...) \
  expect_op(DOM, TYPE, HAS_##GRAD, FLAGS);
#define CHECK_GOP(NAME, ...) expect_op(WT_MS_DOMAIN, #NAME, 0, WT_OP_GRADIENT);
#define WT_MS_DOMAIN "com.microsoft"

static int g_count = 0;
static void check_registered(const wt_op_def *op, void *user) {
  (void)user;
  g_count++;
  if (wt_op_find(op->domain, op->op_type) != op) {
    fprintf(stderr, "%s%s%s is defined more than once\n", op->domain, op->domain[0] ? "::" : "",
            op->op_type);
    g_bad++;
  }
  if (!op->infer || op->min_inputs > op->max_inputs ||
      op->min_outputs > op->max_outputs) {
    fprintf(stderr, "%s: incomplete definition\n", op->op_type);
    g_bad++;
  }
}

int main(void) {
  WT_UNARY_OPS(CHECK_ACT, CHECK_OP)
  WT_UNARY_GRAD_OPS(CHECK_GOP)
  wt_op_each(check_registered, NULL);
  CHECK(g_count > 100);
  CHECK(g_bad == 0);
  CHECK_DONE();
}
