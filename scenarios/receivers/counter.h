/* Counting receivers for HB-09 (receivers/counter.c): threads of the
 * harness on the host's loopback, outside every sandbox, that count what
 * reaches them: a TCP receiver (each connection's request head kept, so
 * the admission ids a mediator adds can be joined with its log) and a UDP
 * receiver (the fixture's "authoritative DNS" for exfil.test: it counts the
 * datagrams that carry the marker). A harness fixture, not an enforcement
 * point (README). */
#pragma once

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

/* Listen on addr (127.0.0.1 or ::1) port, TCP or UDP. 0 or -errno. */
int counter_start(struct counter_rx **out, const char *addr, int port, bool udp);
/* Connections (TCP) or datagrams (UDP) seen, and of those, how many held
 * text (UDP: the marker, TCP: "Paddock-Admission: "). */
size_t counter_count(struct counter_rx *rx);
size_t counter_matching(struct counter_rx *rx, const char *text);
/* The n-th request head (TCP) kept, or NULL. */
const char *counter_head(struct counter_rx *rx, size_t n);
void counter_stop(struct counter_rx *rx);
