/* Every op with a gradient rule has a finite-difference check that actually runs: each
 * registered op whose wt_op_def has .grad must be in the case list of one of the gradient test
 * binaries (tests/c/test_grad_*.c), given as arguments by CMake. Each binary prints its list
 * with WT_GRADCHECK_MODE=list: one "gradcheck-op: <op_type> <domain>" line per gradcheck call
 * it makes (tests/c/gradcheck.c), without running them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ops/op.h"

#define MAX_CASES 4096
static char g_cases[MAX_CASES][256];  /* "<domain> <op_type>" */
static int g_n = 0;
static int g_missing = 0;

/* Reads one binary's case list; returns the number of lines read, -1 when it cannot run. */
static int read_list(const char *binary) {
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "WT_GRADCHECK_MODE=list '%s'", binary);
  FILE *f = popen(cmd, "r");
  if (!f) return -1;
  char line[512], op[128], domain[128];
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "gradcheck-op: %127s %127s", op, domain) != 2) continue;
    if (g_n < MAX_CASES) snprintf(g_cases[g_n++], sizeof g_cases[0], "%s %s", domain, op);
    n++;
  }
  return pclose(f) == 0 ? n : -1;
}

static void check_op(const wt_op_def *op, void *user) {
  (void)user;
  if (!op->grad) return;
  char key[256];
  snprintf(key, sizeof key, "%s %s", op->domain[0] ? op->domain : "ai.onnx", op->op_type);
  for (int i = 0; i < g_n; i++)
    if (!strcmp(g_cases[i], key)) return;
  fprintf(stderr, "%s%s%s has a gradient rule but no gradient test runs a gradcheck of it\n",
          op->domain, op->domain[0] ? "::" : "", op->op_type);
  g_missing++;
}

int main(int argc, char **argv) {
  CHECK(argc > 1);
  for (int i = 1; i < argc; i++) {
    int n = read_list(argv[i]);
    if (n <= 0) fprintf(stderr, "%s: no case list (%d)\n", argv[i], n);
    CHECK(n > 0);
  }
  wt_op_each(check_op, NULL);
  CHECK(g_missing == 0);
  CHECK_DONE();
}
