/* Whole reads and writes, retried over short counts and EINTR: the one copy
 * of these loops for the tree (libc only, so init and the harness use it
 * too). */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <sys/types.h>
#include <unistd.h>

/* Read until EOF or until size bytes are in buf. Returns the number of
 * bytes read (== size means "maybe more": the caller decides whether that
 * is too big), or -errno. */
static inline ssize_t read_full(int fd, void *buf, size_t size)
{
	size_t n = 0;

	while (n < size) {
		ssize_t r = read(fd, (char *)buf + n, size - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	return (ssize_t)n;
}

/* Write all len bytes. 0, or -errno (-EIO when write(2) returns 0). */
static inline int write_full(int fd, const void *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t r = write(fd, (const char *)buf + off, len - off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;
		off += (size_t)r;
	}
	return 0;
}
