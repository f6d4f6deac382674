/* The mock SaaS of HB-10 (receivers/saas.c): a thread of the harness on
 * the host's loopback, outside every sandbox, serving two tenants' objects
 * over plain HTTP/1.1 (GET, PUT and DELETE of /tenants/T/objects/ID, POST
 * of /tenants/T/objects), with its own authorization log (one line per
 * request it served: "METHOD PATH admission=ID|-") and object state. A
 * harness fixture, not an enforcement point: what reaches it is the
 * evidence. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct saas;

/* Listen on 127.0.0.1:port with objects t1/o1 ("t1-original") and t2/o2
 * ("t2-secret"). 0 or -errno. */
int saas_start(struct saas **out, int port);
void saas_stop(struct saas *s);
/* Lines of its log, and how many hold text. */
size_t saas_served(struct saas *s);
size_t saas_matching(struct saas *s, const char *text);
/* The n-th log line, or NULL. */
const char *saas_line(struct saas *s, size_t n);
/* An object's content now: false when it is gone. */
bool saas_object(struct saas *s, const char *tenant, const char *id, char *buf, size_t size);
