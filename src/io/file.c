/* Files for native tools and tests: whole-file reads and external tensor data beside a model. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/onnx_io.h"

int wt_read_file(const char *path, uint8_t **out, size_t *len) {
  *out = NULL;
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return wt_errorf(WT_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
  if (fseek(f, 0, SEEK_END) != 0) {
    fclose(f);
    return wt_errorf(WT_ERR_IO, "cannot seek in '%s'", path);
  }
  long size = ftell(f);
  rewind(f);
  if (size < 0) {
    fclose(f);
    return wt_errorf(WT_ERR_IO, "cannot size '%s'", path);
  }
  uint8_t *buf = malloc((size_t)size + 1);
  if (!buf) {
    fclose(f);
    return wt_errorf(WT_ERR_NO_MEMORY, "out of memory reading '%s' (%ld bytes)", path, size);
  }
  size_t got = fread(buf, 1, (size_t)size, f);
  fclose(f);
  if (got != (size_t)size) {
    free(buf);
    return wt_errorf(WT_ERR_IO, "short read on '%s' (%zu of %ld bytes)", path, got, size);
  }
  *out = buf;
  *len = got;
  return WT_OK;
}

static int read_beside(void *user, const char *location, uint64_t offset, uint64_t length,
                       void *dst) {
  const char *dir = user;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, location);
  FILE *f = fopen(path, "rb");
  if (!f) return wt_errorf(WT_ERR_IO, "cannot open external data file '%s': %s", path, strerror(errno));
  int rc = WT_OK;
  if (fseek(f, (long)offset, SEEK_SET) != 0 || fread(dst, 1, length, f) != length)
    rc = wt_errorf(WT_ERR_IO, "external data file '%s' has no %llu bytes at offset %llu", path,
                   (unsigned long long)length, (unsigned long long)offset);
  fclose(f);
  return rc;
}

int wt_onnx_read_file(const char *path, wt_graph **out) {
  uint8_t *bytes;
  size_t len;
  WT_TRY(wt_read_file(path, &bytes, &len));
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  else snprintf(dir, sizeof dir, ".");
  wt_onnx_read_opts opts = {.base_dir = dir, .read_external = read_beside, .user = dir};
  int rc = wt_onnx_read(bytes, len, &opts, out);
  free(bytes);
  if (rc) return wt_error_context(rc, "%s", path);
  return WT_OK;
}
