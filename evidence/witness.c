/* The evidence logs' witness: reading the checkpoints back (evidence.h). */
#include "evidence.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static bool whole(const cJSON *v)
{
	return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15 &&
	       v->valuedouble == (double)(uint64_t)v->valuedouble;
}

static bool is_head(const cJSON *v)
{
	return cJSON_IsString(v) && strlen(v->valuestring) == 64;
}

/* One checkpoint object: its source under name_key ("source" in the
 * record, "of" in an event; there, "of_epoch" and "last_seq", as the
 * line's own "epoch" and "seq" are the supervisor's). */
static int checkpoint(const cJSON *o, bool event, struct evidence_checkpoint *cp)
{
	const cJSON *src = cJSON_GetObjectItemCaseSensitive(o, event ? "of" : "source");
	const cJSON *log = cJSON_GetObjectItemCaseSensitive(o, "log");
	const cJSON *ep = cJSON_GetObjectItemCaseSensitive(o, event ? "of_epoch" : "epoch");
	const cJSON *seq = cJSON_GetObjectItemCaseSensitive(o, event ? "last_seq" : "seq");
	const cJSON *head = cJSON_GetObjectItemCaseSensitive(o, "head");
	const cJSON *drops = cJSON_GetObjectItemCaseSensitive(o, "drops");

	memset(cp, 0, sizeof(*cp));
	if (!cJSON_IsString(src) || !src->valuestring[0] ||
	    strlen(src->valuestring) >= sizeof(cp->source) || !cJSON_IsString(log) ||
	    strlen(log->valuestring) >= sizeof(cp->log) || !whole(seq) || !is_head(head) ||
	    (ep && (!cJSON_IsString(ep) || strlen(ep->valuestring) >= sizeof(cp->epoch))) ||
	    (drops && !whole(drops)))
		return -EINVAL;
	snprintf(cp->source, sizeof(cp->source), "%s", src->valuestring);
	snprintf(cp->log, sizeof(cp->log), "%s", log->valuestring);
	snprintf(cp->epoch, sizeof(cp->epoch), "%s", ep ? ep->valuestring : "");
	cp->seq = (uint64_t)seq->valuedouble;
	memcpy(cp->head, head->valuestring, 65);
	cp->drops = drops ? (uint64_t)drops->valuedouble : 0;
	return 0;
}

int evidence_witness_parse(const char *text, size_t len, struct evidence_witness *out)
{
	cJSON *o = cJSON_ParseWithLength(text, len);
	const cJSON *s, *e, *srcs, *x, *q;
	int r = 0;

	memset(out, 0, sizeof(*out));
	s = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "session"), "id");
	e = cJSON_GetObjectItemCaseSensitive(o, "evidence");
	if (!cJSON_IsString(s) || strlen(s->valuestring) >= sizeof(out->session) ||
	    !cJSON_IsObject(e)) {
		cJSON_Delete(o);
		return -EINVAL;
	}
	snprintf(out->session, sizeof(out->session), "%s", s->valuestring);
	q = cJSON_GetObjectItemCaseSensitive(e, "sequenced");
	out->sequenced = !cJSON_IsFalse(q);
	srcs = cJSON_GetObjectItemCaseSensitive(e, "sources");
	if (!srcs) {
		/* A record of before the sources: the supervisor's alone. */
		cJSON *one = cJSON_Duplicate(e, 1);

		cJSON_AddStringToObject(one, "source", "supervisor");
		r = checkpoint(one, false, &out->cp[0]);
		cJSON_Delete(one);
		out->n = r < 0 ? 0 : 1;
	} else if (!cJSON_IsArray(srcs) || cJSON_GetArraySize(srcs) < 1 ||
		   cJSON_GetArraySize(srcs) > EVIDENCE_SOURCES_MAX) {
		r = -EINVAL;
	} else {
		cJSON_ArrayForEach(x, srcs) {
			r = checkpoint(x, false, &out->cp[out->n]);
			if (r < 0)
				break;
			for (size_t i = 0; i < out->n; i++)
				if (strcmp(out->cp[i].source, out->cp[out->n].source) == 0)
					r = -EINVAL; /* one checkpoint per source */
			if (r < 0)
				break;
			out->n++;
		}
	}
	cJSON_Delete(o);
	return r;
}

size_t evidence_checkpoint_events(const char *text, size_t len, struct evidence_checkpoint *out,
				  size_t max)
{
	size_t n = 0, off = 0;

	while (off < len && n < max) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t l = nl ? (size_t)(nl - text - off) : len - off;
		cJSON *o = cJSON_ParseWithLength(text + off, l);
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "type");

		if (cJSON_IsString(t) && strcmp(t->valuestring, "checkpoint") == 0 &&
		    checkpoint(o, true, &out[n]) == 0)
			n++;
		cJSON_Delete(o);
		off += l + 1;
	}
	return n;
}

const struct evidence_checkpoint *evidence_witness_find(const struct evidence_witness *w,
							const char *source)
{
	for (size_t i = 0; i < w->n; i++)
		if (strcmp(w->cp[i].source, source) == 0)
			return &w->cp[i];
	return NULL;
}

/* Is the log's end where cp says? Without sequence numbers only the
 * head can be compared. */
static bool ends_at(uint64_t seq, const char *head, bool sequenced,
		    const struct evidence_checkpoint *cp)
{
	return strcmp(head, cp->head) == 0 && (!sequenced || seq == cp->seq);
}

enum evidence_agreement evidence_witness_judge(uint64_t log_seq, const char *log_head,
					       bool sequenced,
					       const struct evidence_checkpoint *record,
					       const struct evidence_checkpoint *second)
{
	bool by_record, by_second;

	if (!second)
		return EVIDENCE_SECOND_LACKS;
	by_record = ends_at(log_seq, log_head, sequenced, record);
	by_second = ends_at(log_seq, log_head, sequenced, second);
	/* Two checkpoints that agree with each other and with the log: the
	 * epoch too, which a log rewritten from scratch changes. */
	if (by_record && by_second)
		return strcmp(record->epoch, second->epoch) == 0 ? EVIDENCE_AGREE
								 : EVIDENCE_SECOND_DIFFERS;
	if (by_record)
		return EVIDENCE_SECOND_DIFFERS;
	if (by_second)
		return EVIDENCE_RECORD_DIFFERS;
	return EVIDENCE_NEITHER_MATCHES;
}
