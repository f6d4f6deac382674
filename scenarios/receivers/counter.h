/* Counting receivers for HB-09 (receivers/counter.c): threads of the
 * harness on the host's loopback, outside every sandbox, that count what
 * reaches them: a TCP receiver (each connection's request head kept, so
 * the admission ids a mediator adds can be joined with its log) and a UDP
 * receiver (the fixture's "authoritative DNS" for exfil.test: it counts the
 * datagrams that carry the marker). A harness fixture, not an enforcement
 * point (README). */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <sys/socket.h>

struct counter_rx;

/* addr (an IPv4 or IPv6 literal) and port into ss: its length. */
socklen_t counter_addr(const char *addr, int port, struct sockaddr_storage *ss);

/* A socket bound to addr (an IPv4 or IPv6 literal) and port, listening
 * when TCP (SO_REUSEADDR, close-on-exec): the fd, or -errno. For every
 * receiver of the harness (saas.c too). */
int counter_listen(const char *addr, int port, bool udp);

/* A receiver's thread: its socket, the pipe that stops it, the thread.
 * rthread_start(): counter_listen() and loop(arg) in a thread of its
 * own, which polls t->fd and t->stop[0]; 0, or -errno with nothing left
 * open. rthread_stop(): the pipe written, the thread joined, the fds
 * closed. For every receiver of the harness. */
struct rthread {
	int fd, stop[2];
	pthread_t thread;
};
int rthread_start(struct rthread *t, const char *addr, int port, bool udp, void *(*serve)(void *),
		  void *arg);
void rthread_stop(struct rthread *t);

/* A TCP receiver on 127.0.0.1:port with a thread per connection, so
 * that concurrent callers are served at once (provider.c, jobsvc.c):
 * each accepted connection goes to one(arg, fd) in a detached thread of
 * its own, and fd is closed after it. rconns_start(): 0, or -errno with
 * nothing left open. rconns_stop(): the loop stopped, then the
 * connection threads waited for (at most wait_ms). */
struct rconns {
	struct rthread rt;
	pthread_mutex_t lock;
	int live; /* connection threads running */
	void (*one)(void *arg, int fd);
	void *arg;
};
int rconns_start(struct rconns *c, int port, void (*one)(void *arg, int fd), void *arg);
void rconns_stop(struct rconns *c, int wait_ms);

/* Listen on addr (127.0.0.1 or ::1) port, TCP or UDP. 0 or -errno. */
int counter_start(struct counter_rx **out, const char *addr, int port, bool udp);
/* Connections (TCP) or datagrams (UDP) seen, and of those, how many held
 * text (UDP: the marker, TCP: "Paddock-Admission: "). */
size_t counter_count(struct counter_rx *rx);
size_t counter_matching(struct counter_rx *rx, const char *text);
/* The n-th request head (TCP) kept, or NULL. */
const char *counter_head(struct counter_rx *rx, size_t n);
void counter_stop(struct counter_rx *rx);

/* What a receiver saw, for every receiver of the harness: the first
 * RLOG_MAX entries kept whole (with their lengths: a datagram may hold
 * NULs), every entry counted. Thread-safe (its own lock). */
#define RLOG_MAX 512
struct rlog {
	pthread_mutex_t lock;
	char *entry[RLOG_MAX];
	size_t len[RLOG_MAX];
	size_t n;
};
void rlog_init(struct rlog *l);
/* A copy of buf[0..n). */
void rlog_add(struct rlog *l, const void *buf, size_t n);
size_t rlog_count(struct rlog *l);
/* Entries that hold text. */
size_t rlog_matching(struct rlog *l, const char *text);
/* The i-th entry kept (NUL-terminated), or NULL. */
const char *rlog_entry(struct rlog *l, size_t i);
void rlog_free(struct rlog *l);

/* One HTTP request from fd into buf (size): its head and the body its
 * Content-Length announces, or what came before EOF, an error or timeout_s
 * seconds without a byte; NUL-terminated. Its length. */
size_t receiver_read_request(int fd, char *buf, size_t size, int timeout_s);

/* The value of the request head's header name (with its ':', any case)
 * into out, cut to size; "" when it has none. */
void receiver_header(const char *head, const char *name, char *out, size_t size);
