/* Counting heap allocations (no step allocates). Linked into a test binary of the
 * plain native tree only (cmake/native.cmake), where it replaces malloc and its kin with
 * counting wrappers over glibc's own; the sanitizer trees keep their allocators and build the
 * test without it (WT_COUNT_ALLOCS undefined: wt_alloc_count_* are not declared there). */
#ifndef WT_TESTS_ALLOC_COUNT_H
#define WT_TESTS_ALLOC_COUNT_H

/* Allocations (malloc, calloc, realloc, aligned_alloc, posix_memalign, memalign) on any thread
 * between start and stop; stop returns how many. */
void wt_alloc_count_start(void);
long wt_alloc_count_stop(void);

#endif
