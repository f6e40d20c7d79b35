/* Every op with a gradient rule has a finite-difference check: each registered op whose
 * wt_op_def has .grad must be named (as the "OpType" string given to gradcheck) in one of
 * the tests/c/test_grad_*.c files. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "io/onnx_io.h"
#include "ops/op.h"

static char *g_sources = NULL;
static size_t g_len = 0;
static int g_missing = 0;

static void load_sources(void) {
  const char *dir = WT_SOURCE_DIR "/tests/c";
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, "test_grad_", 10) || strcmp(e->d_name + strlen(e->d_name) - 2, ".c")) continue;
    if (!strcmp(e->d_name, "test_grad_coverage.c")) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    uint8_t *bytes;
    size_t len;
    if (wt_read_file(path, &bytes, &len)) continue;
    g_sources = realloc(g_sources, g_len + len + 1);
    memcpy(g_sources + g_len, bytes, len);
    g_len += len;
    g_sources[g_len] = '\0';
    free(bytes);
  }
  closedir(d);
}

static void check_op(const wt_op_def *op, void *user) {
  (void)user;
  if (!op->grad) return;
  char quoted[128];
  snprintf(quoted, sizeof quoted, "\"%s\"", op->op_type);
  if (!g_sources || !strstr(g_sources, quoted)) {
    fprintf(stderr, "%s%s%s has a gradient rule but no gradcheck names it\n", op->domain,
            op->domain[0] ? "::" : "", op->op_type);
    g_missing++;
  }
}

int main(void) {
  load_sources();
  CHECK(g_sources != NULL);
  wt_op_each(check_op, NULL);
  CHECK(g_missing == 0);
  free(g_sources);
  CHECK_DONE();
}
