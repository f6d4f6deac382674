/* Reconciling tool claims with a receiver's effects (evidence.h, HB-17).
 * The tool's output is never an input: the claim is the status the
 * mediator saw, the effect what the receiver's ledger says. */
#include "evidence.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

const char *evidence_disposition_name(enum evidence_disposition d)
{
	static const char *const names[EVIDENCE_DISPOSITIONS] = {
	    "matched", "claimed-success-no-effect", "claimed-failure-effect", "effect-unknown"};

	return (unsigned)d < EVIDENCE_DISPOSITIONS ? names[d] : "?";
}

/* Each line of text as a JSON object, to fn. */
static void each_line(const char *text, size_t len, void (*fn)(const cJSON *, void *), void *arg)
{
	size_t off = 0;

	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t l = nl ? (size_t)(nl - text - off) : len - off;
		cJSON *o = cJSON_ParseWithLength(text + off, l);

		if (cJSON_IsObject(o))
			fn(o, arg);
		cJSON_Delete(o);
		off += l + 1;
	}
}

static void claim(const cJSON *o, void *arg)
{
	struct evidence_reconciled *r = arg;
	const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "event");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "admission");
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "status");
	struct evidence_op *op;

	if (!cJSON_IsString(ev) || strcmp(ev->valuestring, "outcome") != 0 || !cJSON_IsString(id) ||
	    !id->valuestring[0] || strlen(id->valuestring) >= sizeof(op->admission) ||
	    !cJSON_IsNumber(st) || st->valuedouble < 0 || st->valuedouble > 999)
		return;
	if (r->n == EVIDENCE_OPS_MAX) {
		r->more++;
		return;
	}
	op = &r->ops[r->n++];
	memset(op, 0, sizeof(*op));
	snprintf(op->admission, sizeof(op->admission), "%s", id->valuestring);
	op->status = (unsigned)st->valuedouble;
	/* 0: no response at all (an unknown or transient end): no success. */
	op->claimed_ok = op->status > 0 && op->status < 400;
}

static void effect(const cJSON *o, void *arg)
{
	struct evidence_reconciled *r = arg;
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "admission");
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "effect");

	if (!cJSON_IsString(id) || !cJSON_IsBool(e))
		return;
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->ops[i].admission, id->valuestring) == 0) {
			/* Any effect recorded for it counts. */
			r->ops[i].effect = r->ops[i].effect_known
					       ? r->ops[i].effect || cJSON_IsTrue(e)
					       : cJSON_IsTrue(e);
			r->ops[i].effect_known = true;
		}
}

void evidence_reconcile(const char *log, size_t len, const char *ledger, size_t llen,
			bool trust_claim, struct evidence_reconciled *out)
{
	memset(out, 0, sizeof(*out));
	each_line(log, len, claim, out);
	if (ledger && !trust_claim)
		each_line(ledger, llen, effect, out);
	for (size_t i = 0; i < out->n; i++) {
		struct evidence_op *op = &out->ops[i];

		if (trust_claim) {
			/* The weakened way: what the tool said is what happened. */
			op->effect_known = true;
			op->effect = op->claimed_ok;
		}
		op->d = !op->effect_known	       ? EVIDENCE_EFFECT_UNKNOWN
			: op->claimed_ok == op->effect ? EVIDENCE_MATCHED
			: op->claimed_ok	       ? EVIDENCE_CLAIMED_SUCCESS_NO_EFFECT
						       : EVIDENCE_CLAIMED_FAILURE_EFFECT;
		out->counts[op->d]++;
	}
}
