/* Native runner for ONNX backend-test directories (model.onnx + test_data_set_N/input_K.pb,
 * output_K.pb): runs each case through the public API and compares every output with
 * |actual - expected| <= atol + rtol * |expected| (exact for integer and bool outputs).
 *   wt_onnx_case [--rtol R] [--atol A] DIR...
 *   wt_onnx_case --list-ops          (the ops webtrain implements)
 * Prints one line per case and "N passed, M failed"; exits 1 if any case failed. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/onnx_io.h"
#include "ops/op.h"
#include "webtrain.h"

static double g_rtol = 1e-4, g_atol = 1e-5;

static const char *base_name(const char *path) {
  size_t n = strlen(path);
  while (n > 1 && path[n - 1] == '/') n--;
  static char buf[512];
  size_t start = n;
  while (start > 0 && path[start - 1] != '/') start--;
  snprintf(buf, sizeof buf, "%.*s", (int)(n - start), path + start);
  return buf;
}

static int compare(const char *name, const wt_const_tensor *exp, int32_t dtype, int32_t rank,
                   const int64_t *dims, const void *data, char *why, size_t cap) {
  char es[128], as[128];
  if (dtype != exp->t.dtype) {
    snprintf(why, cap, "output '%s': dtype %s, expected %s", name, wt_dtype_name(dtype),
             wt_dtype_name(exp->t.dtype));
    return 0;
  }
  int same = rank == exp->t.rank;
  for (int i = 0; same && i < rank; i++) same = dims[i] == exp->t.dims[i];
  if (!same) {
    snprintf(why, cap, "output '%s': shape %s, expected %s", name,
             wt_shape_str(rank, dims, as, sizeof as),
             wt_shape_str(exp->t.rank, exp->t.dims, es, sizeof es));
    return 0;
  }
  wt_tensor act = {.dtype = dtype, .rank = rank, .data = (void *)data};
  memcpy(act.dims, dims, sizeof(int64_t) * (size_t)rank);
  int64_t n = wt_numel(&exp->t);
  for (int64_t i = 0; i < n; i++) {
    double e = wt_get_double(&exp->t, i), a = wt_get_double(&act, i);
    int ok;
    if (dtype == WT_FLOAT) {
      if (isnan(e)) ok = isnan(a);
      else if (isinf(e)) ok = a == e;
      else ok = fabs(a - e) <= g_atol + g_rtol * fabs(e);
    } else {
      ok = wt_get_int(&exp->t, i) == wt_get_int(&act, i);
    }
    if (!ok) {
      snprintf(why, cap, "output '%s'[%lld]: expected %.9g, got %.9g", name, (long long)i, e, a);
      return 0;
    }
  }
  return 1;
}

static int load_pb(const char *path, wt_const_tensor **t) {
  uint8_t *bytes;
  size_t len;
  WT_TRY(wt_read_file(path, &bytes, &len));
  int rc = wt_tensor_pb_read(bytes, len, t);
  free(bytes);
  if (rc) return wt_error_context(rc, "%s", path);
  return WT_OK;
}

/* Runs one test_data_set directory; returns 1 on pass, fills why on failure. */
static int run_set(wt_session *s, const char *set_dir, char *why, size_t cap) {
  char path[1200];
  int n_in = wt_session_input_count(s), n_out = wt_session_output_count(s);
  wt_const_tensor *ins[64] = {0}, *outs[64] = {0};
    int ok = 0;
  if (n_in > 64 || n_out > 64) {
    snprintf(why, cap, "too many inputs/outputs");
    return 0;
  }
  for (int k = 0; k < n_in; k++) {
    snprintf(path, sizeof path, "%s/input_%d.pb", set_dir, k);
    if (load_pb(path, &ins[k])) {
      snprintf(why, cap, "%s", wt_last_error());
      goto out;
    }
    if (wt_session_set_input(s, k, ins[k]->t.dtype, ins[k]->t.rank, ins[k]->t.dims, ins[k]->t.data)) {
      snprintf(why, cap, "%s", wt_last_error());
      goto out;
    }
  }
  if (wt_session_run(s)) {
    snprintf(why, cap, "run failed: %s", wt_last_error());
    goto out;
  }
  ok = 1;
  for (int k = 0; k < n_out && ok; k++) {
    snprintf(path, sizeof path, "%s/output_%d.pb", set_dir, k);
    if (load_pb(path, &outs[k])) {
      snprintf(why, cap, "%s", wt_last_error());
      ok = 0;
      break;
    }
    int32_t dtype, rank;
    const int64_t *dims;
    const void *data;
    wt_session_output(s, k, &dtype, &rank, &dims, &data);
    ok = compare(wt_session_output_name(s, k), outs[k], dtype, rank, dims, data, why, cap);
  }
out:
  for (int k = 0; k < 64; k++) {
    wt_const_tensor_free(ins[k]);
    wt_const_tensor_free(outs[k]);
  }
  return ok;
}

static int run_case(const char *dir, char *why, size_t cap) {
  char path[1024];
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  wt_session *s;
  if (wt_session_create_from_file(path, &s)) {
    snprintf(why, cap, "load failed: %s", wt_last_error());
    return 0;
  }
  int ok = 1, sets = 0;
  for (int i = 0; ok; i++) {
    snprintf(path, sizeof path, "%s/test_data_set_%d", dir, i);
    DIR *d = opendir(path);
    if (!d) break;
    closedir(d);
    sets++;
    ok = run_set(s, path, why, cap);
  }
  if (ok && sets == 0) {
    snprintf(why, cap, "no test_data_set_0 directory");
    ok = 0;
  }
  wt_session_free(s);
  return ok;
}

static void print_op(const wt_op_def *op, void *user) {
  (void)user;
  printf("%s%s%s\n", op->domain, op->domain[0] ? "::" : "", op->op_type);
}

int main(int argc, char **argv) {
  int passed = 0, failed = 0;
  if (argc == 2 && strcmp(argv[1], "--list-ops") == 0) {
    wt_op_each(print_op, NULL);
    return 0;
  }
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--rtol") == 0 && i + 1 < argc) {
      g_rtol = atof(argv[++i]);
      continue;
    }
    if (strcmp(argv[i], "--atol") == 0 && i + 1 < argc) {
      g_atol = atof(argv[++i]);
      continue;
    }
    char why[2048] = "";
    if (run_case(argv[i], why, sizeof why)) {
      printf("ok   %s\n", base_name(argv[i]));
      passed++;
    } else {
      printf("FAIL %s: %s\n", base_name(argv[i]), why);
      failed++;
    }
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
