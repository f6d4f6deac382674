/* HB-11's services (receivers/audience.c): an HTTP receiver on the host's
 * loopback, outside every sandbox, that keeps every request head it got
 * (its own log: who presented which credential where) and answers each
 * with an echo of the credential headers it saw, "echo:[AUTHORIZATION]
 * [X-API-KEY]" (a service that reflects a token, as error pages and debug
 * endpoints do): the response a mediator must redact. A harness fixture,
 * not an enforcement point (README). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct audience_rx;

/* Listen on 127.0.0.1:port. 0 or -errno. */
int audience_start(struct audience_rx **out, int port);
/* Requests seen; of those, how many heads hold text; the n-th head. */
size_t audience_count(struct audience_rx *rx);
size_t audience_matching(struct audience_rx *rx, const char *text);
const char *audience_head(struct audience_rx *rx, size_t n);
/* Heads holding text whose request line does not start with line. */
size_t audience_matching_off(struct audience_rx *rx, const char *text, const char *line);
/* Did a response it sent hold text? */
bool audience_sent(struct audience_rx *rx, const char *text);
void audience_stop(struct audience_rx *rx);
