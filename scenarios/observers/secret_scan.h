/* The secret-marker scan of HB-11 (docs/scenarios.md) and of
 * tests/integration/test_credentials.c: where a marker is, read from
 * outside the sandbox as its owner. Files and trees (no symlink followed),
 * text paddock printed, and the processes of a running sandbox: their
 * /proc/PID/environ and their memory (/proc/PID/maps, /proc/PID/mem). Each
 * place holding the marker, in any of its forms (scan_forms()), counts
 * once. libc only. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SCAN_WHERE_MAX 16
#define SCAN_WHERE_LEN 256

struct scan_result {
	size_t places;	/* places that hold the marker */
	size_t looked;	/* places read (files, streams, environs, memories) */
	size_t unread;	/* places that could not be read (listed in where too) */
	size_t procs;	/* processes scanned */
	size_t inits;	/* sandbox pid 1s (paddock-init) passed over: not dumpable */
	size_t gone;	/* processes that ended while read (a zombie, or no /proc
			 * entry, after a read failed): not counted at all */
	uint64_t bytes; /* bytes read */
	char where[SCAN_WHERE_MAX][SCAN_WHERE_LEN]; /* the first places found, "+" unread */
	size_t n_where;
};

/* The spellings of a marker (at most SCAN_MARKER_MAX bytes) that are
 * looked for: itself; hex, lower and upper case; base64, standard and
 * url-safe, each at the three alignments to a 3-byte group (only the
 * characters that carry the marker's bits alone); percent-encoded, every
 * byte, %XX and %xx; JSON-escaped, every byte, \u00XX and \u00xx. Each
 * NUL-terminated into out; their count. scan_form_names[i] names form i. */
#define SCAN_FORMS	14
#define SCAN_MARKER_MAX 128
#define SCAN_FORM_LEN	(6 * SCAN_MARKER_MAX + 1)
size_t scan_forms(const char *marker, char out[SCAN_FORMS][SCAN_FORM_LEN]);
extern const char *const scan_form_names[SCAN_FORMS];
/* Does buf hold marker, in any of its forms? */
bool scan_has(const char *buf, size_t n, const char *marker);
/* Does buf hold marker as it is (not encoded)? */
bool scan_has_raw(const char *buf, size_t n, const char *marker);
/* One text (a stream paddock printed) under label. */
void scan_text(const char *label, const char *buf, size_t n, const char *marker,
	       struct scan_result *r);
/* A file (a missing one is not a place); every regular file of a tree. */
void scan_file(const char *path, const char *marker, struct scan_result *r);
void scan_tree(const char *dir, const char *marker, struct scan_result *r);
/* The pid of a process in another pid namespace than ours (a sandbox's)
 * whose command line holds tag, or -1. */
pid_t scan_find(const char *tag);
/* Every process in the pid namespace of pid: environ and memory; but its
 * pid 1, paddock-init, which is not dumpable (so unreadable, also to the
 * workload) and counted in inits. A process whose read failed because it
 * ended meanwhile (a workload's `sleep 0.1` of a wait loop) holds nothing
 * any more: counted in gone, not as unread places. */
void scan_sandbox(pid_t pid, const char *marker, struct scan_result *r);
/* Has p ended: no /proc entry, or a zombie (state Z or X)? */
bool scan_proc_ended(pid_t p);
