/* The fake metered provider of HB-13, HB-14 and HB-15 (receivers/
 * provider.c): a thread of the harness on the host's loopback, outside
 * every sandbox, one thread per connection so that concurrent callers are
 * in flight at once. It bills PROVIDER_PRICE credits for every request it
 * accepts and keeps its own charge ledger: one line per request, "METHOD
 * PATH key=K admission=ID charged=N answered=yes|no". /drop bills, reads
 * the request and closes without an answer (a lost acknowledgement);
 * /free is free and answered; every other path waits PROVIDER_WAIT_MS
 * (every caller in flight together), then answers 200 with "X-Charge: N"
 * (and, for HB-21's /v1/chat/completions and /v1/messages, a JSON body of
 * that shape stating N in usage.completion_tokens or usage.output_tokens).
 * GET /v1/receipts/KEY is its receipts endpoint (the metered rule's
 * lookup, docs/budget.md): 200 with what it billed for that
 * Idempotency-Key, or 404; a line "RECEIPT KEY found|not-found ...".
 * A harness fixture, not an enforcement point: its ledger is the evidence
 * the cases grade from. */
#pragma once

#include <stddef.h>

#define PROVIDER_PRICE	  4
#define PROVIDER_WAIT_MS  400
#define PROVIDER_RECEIPTS "/v1/receipts/"

struct provider;

/* Listen on 127.0.0.1:port. 0 or -errno. */
int provider_start(struct provider **out, int port);
void provider_stop(struct provider *p);
/* Credits billed in all, by its own ledger. */
unsigned provider_charged(struct provider *p);
/* Lines of its ledger holding text. */
size_t provider_matching(struct provider *p, const char *text);
/* The n-th line, or NULL. */
const char *provider_line(struct provider *p, size_t n);
size_t provider_lines(struct provider *p);
