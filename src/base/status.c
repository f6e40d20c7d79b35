/* The last-error message buffer: one per thread, like errno. A failing call and the
 * wt_last_error that reads its message are on the caller's thread (ops return their errors on
 * the thread running the plan; kernels, which may run on the pool's workers, report none), so
 * the message a thread reads is its own last call's, whatever another thread calling the API
 * (a loader, a worker of the host) failed with meanwhile. */
#include "base/status.h"

#include <stdio.h>
#include <string.h>

#define WT_ERROR_CAP 2048
static _Thread_local char g_message[WT_ERROR_CAP];

int wt_verrorf(int code, const char *fmt, va_list ap) {
  vsnprintf(g_message, sizeof g_message, fmt, ap);
  return code;
}

int wt_errorf(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  wt_verrorf(code, fmt, ap);
  va_end(ap);
  return code;
}

int wt_error_context(int code, const char *fmt, ...) {
  char prefix[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(prefix, sizeof prefix - 2, fmt, ap);
  va_end(ap);
  if (n < 0) return code;
  size_t plen = strlen(prefix);
  prefix[plen++] = ':';
  prefix[plen++] = ' ';
  size_t mlen = strnlen(g_message, WT_ERROR_CAP - 1);
  if (plen + mlen > WT_ERROR_CAP - 1) mlen = WT_ERROR_CAP - 1 - plen;
  memmove(g_message + plen, g_message, mlen);
  memcpy(g_message, prefix, plen);
  g_message[plen + mlen] = '\0';
  return code;
}

const char *wt_error_message(void) { return g_message; }

void wt_error_clear(void) { g_message[0] = '\0'; }
