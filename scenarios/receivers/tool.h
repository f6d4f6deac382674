/* The mock tool of HB-23 (receivers/tool.c): a thread of the harness on
 * the host's loopback, outside every sandbox, answering by path over plain
 * HTTP/1.1: /deny a 403 and /busy a 503, each with an operator-only
 * diagnostic (TOOL_DIAG) in its body; /drop reads the request and closes
 * without a response (an unknown outcome); /ok a 200. Its own log: one line
 * per request it read, "METHOD PATH key=K admission=ID sent=SHA256|-" (the
 * SHA-256 of the exact response bytes it sent). A harness fixture, not an
 * enforcement point: what reaches it is the evidence. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define TOOL_DIAG "DIAG-hb23: acl rule tenant-acl matched principal agent-7 (operator only)"

struct tool;

/* Listen on 127.0.0.1:port. 0 or -errno. */
int tool_start(struct tool **out, int port);
void tool_stop(struct tool *t);
/* Lines of its log, and how many hold text. */
size_t tool_served(struct tool *t);
size_t tool_matching(struct tool *t, const char *text);
/* The n-th log line, or NULL. */
const char *tool_line(struct tool *t, size_t n);
