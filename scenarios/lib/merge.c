/* paddock-eval report: reading back the per-arm JSON records a run wrote
 * (report_write_json()) and merging several runs' results (main.c's
 * report verb). Pure apart from malloc: tests/unit/test_eval.c and the
 * fuzz target (tests/fuzz/fuzz_eval.c, 'r') link it.
 *
 * What is read is what the writer writes, checked as strictly as any
 * input of paddock's: the record tag, every key's type, the grade names;
 * strings longer than their field are an error, not a cut (a merged
 * report must say what the run said, not less). */
#include "eval.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../../include/err.h"

#define RECORD_MAX_BYTES (8u << 20)

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* The string member k of o into dst (n bytes): 0; -EINVAL with err when
 * it is missing (and not optional), not a string or too long. A null
 * member is "" when optional. */
static int str(const cJSON *o, const char *k, bool optional, char *dst, size_t n, struct err *err)
{
	const cJSON *v = get(o, k);

	dst[0] = '\0';
	if ((!v || cJSON_IsNull(v)) && optional)
		return 0;
	if (!cJSON_IsString(v))
		return err_set(err, EINVAL, "\"%s\": %s", k, v ? "not a string" : "missing");
	if (strlen(v->valuestring) >= n)
		return err_set(err, EINVAL, "\"%s\": longer than %zu bytes", k, n - 1);
	memcpy(dst, v->valuestring, strlen(v->valuestring) + 1);
	return 0;
}

static int grade_of(const char *name, enum grade *out)
{
	for (int g = GRADE_PASS; g <= GRADE_NOT_APPLICABLE; g++)
		if (strcmp(grade_name((enum grade)g), name) == 0)
			return *out = (enum grade)g, 0;
	return -EINVAL;
}

static int grades(const cJSON *o, struct result *r, struct err *err)
{
	const cJSON *g = get(o, "grades");

	if (!cJSON_IsObject(g))
		return err_set(err, EINVAL, "\"grades\": not an object");
	for (int d = 0; d < DIM_COUNT; d++) {
		const cJSON *v = get(g, dim_name((enum dim)d));
		char name[32];
		int rc;

		if (!cJSON_IsObject(v))
			return err_set(err, EINVAL, "\"grades.%s\": missing",
				       dim_name((enum dim)d));
		if ((rc = str(v, "grade", false, name, sizeof(name), err)) < 0 ||
		    (rc = str(v, "reason", false, r->v[d].reason, sizeof(r->v[d].reason), err)) <
			0 ||
		    (rc = str(v, "scope", true, r->v[d].scope, sizeof(r->v[d].scope), err)) < 0)
			return err_wrap(err, "grades.%s", dim_name((enum dim)d));
		if (grade_of(name, &r->v[d].grade) < 0)
			return err_set(err, EINVAL, "\"grades.%s.grade\": unknown grade \"%.32s\"",
				       dim_name((enum dim)d), name);
		r->v[d].set = true;
	}
	return 0;
}

/* An array of two-string objects {k1, k2} into n entries of dst (stride
 * bytes apart, fields of n1 and n2 bytes at offsets o1 and o2). */
static int pairs(const cJSON *o, const char *key, bool optional, const char *k1, size_t o1,
		 size_t n1, const char *k2, size_t o2, size_t n2, void *dst, size_t stride,
		 size_t max, size_t *n, struct err *err)
{
	const cJSON *a = get(o, key), *it;

	*n = 0;
	if (!a && optional)
		return 0;
	if (!cJSON_IsArray(a))
		return err_set(err, EINVAL, "\"%s\": not an array", key);
	cJSON_ArrayForEach(it, a) {
		char *e = (char *)dst + *n * stride;
		int rc;

		if (*n == max)
			return err_set(err, EINVAL, "\"%s\": more than %zu entries", key, max);
		if (!cJSON_IsObject(it))
			return err_set(err, EINVAL, "\"%s[%zu]\": not an object", key, *n);
		if ((rc = str(it, k1, false, e + o1, n1, err)) < 0 ||
		    (rc = str(it, k2, false, e + o2, n2, err)) < 0)
			return err_wrap(err, "%s[%zu]", key, *n);
		(*n)++;
	}
	return 0;
}

static int number(const cJSON *o, const char *k, double lo, double hi, double *out, struct err *err)
{
	const cJSON *v = get(o, k);

	if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi)
		return err_set(err, EINVAL, "\"%s\": not a number in [%.0f, %.0f]", k, lo, hi);
	*out = v->valuedouble;
	return 0;
}

static int subject(const cJSON *o, struct result *r, struct subject *s, struct err *err)
{
	const cJSON *su = get(o, "subject_under_test"), *p, *d, *c;
	double uid;
	int rc;

	if (!cJSON_IsObject(su) || !cJSON_IsObject(p = get(su, "paddock")) ||
	    !cJSON_IsObject(d = get(su, "docker")) || !cJSON_IsObject(c = get(su, "configuration")))
		return err_set(err, EINVAL, "\"subject_under_test\": incomplete");
	if ((rc = str(p, "version", false, s->paddock_version, sizeof(s->paddock_version), err)) <
		0 ||
	    (rc = str(p, "commit", false, s->paddock_commit, sizeof(s->paddock_commit), err)) < 0 ||
	    (rc = str(p, "path", false, s->paddock_path, sizeof(s->paddock_path), err)) < 0 ||
	    (rc = str(su, "kernel", false, s->kernel, sizeof(s->kernel), err)) < 0 ||
	    (rc = str(su, "libseccomp", false, s->libseccomp, sizeof(s->libseccomp), err)) < 0 ||
	    (rc = str(d, "client", false, s->docker_client, sizeof(s->docker_client), err)) < 0 ||
	    (rc = str(d, "server", false, s->docker_server, sizeof(s->docker_server), err)) < 0 ||
	    (rc = number(su, "workload_uid", 0, 4294967295.0, &uid, err)) < 0 ||
	    (rc = str(c, "policy", false, r->policy_path, sizeof(r->policy_path), err)) < 0 ||
	    (rc = str(c, "policy_sha256", false, r->policy_sha256, sizeof(r->policy_sha256), err)) <
		0 ||
	    (rc = str(c, "weakenings", false, r->weakenings, sizeof(r->weakenings), err)) < 0)
		return err_wrap(err, "subject_under_test");
	if (strcmp(s->docker_server, "none") == 0)
		s->docker_server[0] = '\0';
	if (!cJSON_IsBool(get(su, "harness_root")))
		return err_set(err, EINVAL, "\"subject_under_test.harness_root\": not a boolean");
	s->root = cJSON_IsTrue(get(su, "harness_root"));
	s->workload_uid = (uid_t)uid;
	return 0;
}

int result_read_json(const char *text, size_t len, struct result *r, struct subject *s,
		     struct err *err)
{
	char case_id[sizeof(r->case_id)], title[sizeof(r->title)], arm[sizeof(r->arm)], tag[32];
	const cJSON *m, *it;
	cJSON *o;
	double v;
	int rc;

	memset(s, 0, sizeof(*s));
	if (len > RECORD_MAX_BYTES)
		return err_set(err, E2BIG, "larger than %u bytes", RECORD_MAX_BYTES);
	/* cJSON would stop at a NUL inside a string and read a shorter
	 * one: the writer never writes one. */
	if (memchr(text, '\0', len) || memmem(text, len, "\\u0000", 6))
		return err_set(err, EINVAL, "a NUL in the record");
	o = cJSON_ParseWithLength(text, len);
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return err_set(err, EINVAL, "not a JSON object");
	}
	rc = str(o, "record", false, tag, sizeof(tag), err);
	if (rc == 0 && strcmp(tag, "paddock-eval/1") != 0)
		rc = err_set(err, EINVAL, "\"record\": \"%s\" is not paddock-eval/1", tag);
	if (rc == 0 && (rc = str(o, "case", false, case_id, sizeof(case_id), err)) == 0 &&
	    (rc = str(o, "title", false, title, sizeof(title), err)) == 0 &&
	    (rc = str(o, "arm", false, arm, sizeof(arm), err)) == 0)
		result_init(r, case_id, title, arm);
	if (rc == 0)
		rc = str(o, "run_id", false, s->run_id, sizeof(s->run_id), err);
	if (rc == 0)
		rc = subject(o, r, s, err);
	if (rc == 0 && !cJSON_IsBool(get(o, "fixture_only")))
		rc = err_set(err, EINVAL, "\"fixture_only\": not a boolean");
	if (rc == 0) {
		r->fixture_only = cJSON_IsTrue(get(o, "fixture_only"));
		rc = str(o, "fixture_only_reason", true, r->fixture_why, sizeof(r->fixture_why),
			 err);
	}
	if (rc == 0 && !cJSON_IsArray(m = get(o, "mocked")))
		rc = err_set(err, EINVAL, "\"mocked\": not an array");
	if (rc == 0)
		cJSON_ArrayForEach(it, m) {
			if (r->n_mocks == EVAL_MAX_MOCKS || !cJSON_IsString(it) ||
			    strlen(it->valuestring) >= sizeof(r->mocks[0])) {
				rc = err_set(err, EINVAL, "\"mocked[%zu]\": not a short string",
					     r->n_mocks);
				break;
			}
			result_mock(r, it->valuestring);
		}
	if (rc == 0)
		rc = grades(o, r, err);
	if (rc == 0)
		rc = str(o, "alarm", true, r->alarm, sizeof(r->alarm), err);
	if (rc == 0)
		rc = str(o, "fanotify_mode", true, r->fanotify_mode, sizeof(r->fanotify_mode), err);
	if (rc == 0)
		rc = pairs(o, "evidence", false, "source", offsetof(struct evidence, source),
			   sizeof(r->ev[0].source), "text", offsetof(struct evidence, text),
			   sizeof(r->ev[0].text), r->ev, sizeof(r->ev[0]), EVAL_MAX_EVIDENCE,
			   &r->n_ev, err);
	if (rc == 0)
		rc = pairs(o, "completion_records", false, "path", 0, sizeof(r->recs[0].path),
			   "sha256", sizeof(r->recs[0].path), sizeof(r->recs[0].sha256), r->recs,
			   sizeof(r->recs[0]), EVAL_MAX_RECORDS, &r->n_recs, err);
	if (rc == 0)
		rc =
		    pairs(o, "artifacts", true, "label", 0, sizeof(r->artifacts[0].label), "path",
			  sizeof(r->artifacts[0].label), sizeof(r->artifacts[0].path), r->artifacts,
			  sizeof(r->artifacts[0]), EVAL_MAX_ARTIFACTS, &r->n_artifacts, err);
	if (rc == 0 && (rc = number(o, "evidence_lines_dropped", 0, 1e9, &v, err)) == 0)
		r->ev_dropped = (size_t)v;
	if (rc == 0 && (rc = number(o, "seconds", 0, 1e9, &v, err)) == 0)
		r->seconds = v;
	cJSON_Delete(o);
	return rc;
}

/* Do a and b (the same case and arm) say the same? Their grades, per
 * dimension; the reasons may word the same finding differently. */
bool result_agrees(const struct result *a, const struct result *b)
{
	for (int d = 0; d < DIM_COUNT; d++)
		if (a->v[d].grade != b->v[d].grade)
			return false;
	return true;
}

void result_grades_text(const struct result *r, char *out, size_t n)
{
	snprintf(out, n, "%s/%s/%s", grade_name(r->v[DIM_ENFORCEMENT].grade),
		 grade_name(r->v[DIM_CONTROL].grade), grade_name(r->v[DIM_EVIDENCE].grade));
}
