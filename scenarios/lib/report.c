/* Writers for the per-arm JSON record, report.md and junit.xml. They only
 * format what grading.c decided; special characters are escaped for each
 * format (tests/unit/test_eval.c). */
#include "eval.h"

#include <string.h>

void json_write_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

/* The same switch shape as json_write_string() (duplicates pairs them), on
 * purpose: each format has its own escapes, and one table-driven escaper
 * for both would hide which characters each one needs. */
void xml_write_escaped(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		switch (*p) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		case '\n':
		case '\t':
			fputc(*p, f);
			break;
		default:
			/* XML 1.0 has no way to write other control characters. */
			fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, f);
		}
	}
}

void md_write_cell(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '|')
			fputs("\\|", f);
		else if (*p == '\n' || *p == '\r')
			fputc(' ', f);
		else if (*p == '<')
			fputs("&lt;", f);
		else if (*p == '`' || *p == '*' || *p == '_' || *p == '[' || *p == ']')
			fprintf(f, "\\%c", *p);
		else
			fputc(*p, f);
	}
}

static void key(FILE *f, const char *k, bool *first)
{
	fputs(*first ? "" : ",", f);
	*first = false;
	fputs("\n  ", f);
	json_write_string(f, k);
	fputs(": ", f);
}

static void str_member(FILE *f, const char *k, const char *v, bool *first)
{
	key(f, k, first);
	if (v)
		json_write_string(f, v);
	else
		fputs("null", f);
}

/* Element i of an array of two-string objects: {"k1": v1, "k2": v2}. */
static void pair(FILE *f, size_t i, const char *k1, const char *v1, const char *k2, const char *v2)
{
	fputs(i ? ",\n    {\"" : "\n    {\"", f);
	fputs(k1, f);
	fputs("\": ", f);
	json_write_string(f, v1);
	fputs(", \"", f);
	fputs(k2, f);
	fputs("\": ", f);
	json_write_string(f, v2);
	fputc('}', f);
}

static void subject_json(FILE *f, const struct result *r, const struct subject *s)
{
	fputs("{\"paddock\": {\"version\": ", f);
	json_write_string(f, s->paddock_version);
	fputs(", \"commit\": ", f);
	json_write_string(f, s->paddock_commit);
	fputs(", \"path\": ", f);
	json_write_string(f, s->paddock_path);
	fputs("}, \"kernel\": ", f);
	json_write_string(f, s->kernel);
	fputs(", \"libseccomp\": ", f);
	json_write_string(f, s->libseccomp);
	fputs(", \"docker\": {\"client\": ", f);
	json_write_string(f, s->docker_client);
	fputs(", \"server\": ", f);
	json_write_string(f, s->docker_server[0] ? s->docker_server : "none");
	fprintf(f, "}, \"workload_uid\": %u, \"harness_root\": %s", (unsigned)s->workload_uid,
		s->root ? "true" : "false");
	fputs(", \"configuration\": {\"policy\": ", f);
	json_write_string(f, r->policy_path);
	fputs(", \"policy_sha256\": ", f);
	json_write_string(f, r->policy_sha256);
	fputs(", \"weakenings\": ", f);
	json_write_string(f, r->weakenings);
	if (r->kind == ARM_WEAKENED) {
		/* Where this arm's weakening must show: that dimension FAILs. */
		fputs(", \"weakening_must_fail\": ", f);
		json_write_string(f, dim_name(r->weakens));
	}
	fputs("}}", f);
}

void report_write_json(FILE *f, const struct result *r, const struct subject *s)
{
	bool first = true;

	fputc('{', f);
	str_member(f, "record", "paddock-eval/1", &first);
	str_member(f, "run_id", s->run_id, &first);
	str_member(f, "case", r->case_id, &first);
	str_member(f, "title", r->title, &first);
	str_member(f, "arm", r->arm, &first);
	key(f, "subject_under_test", &first);
	subject_json(f, r, s);
	key(f, "fixture_only", &first);
	fputs(r->fixture_only ? "true" : "false", f);
	str_member(f, "fixture_only_reason", r->fixture_only ? r->fixture_why : NULL, &first);
	key(f, "mocked", &first);
	fputc('[', f);
	for (size_t i = 0; i < r->n_mocks; i++) {
		fputs(i ? ", " : "", f);
		json_write_string(f, r->mocks[i]);
	}
	fputc(']', f);
	key(f, "grades", &first);
	fputc('{', f);
	for (int d = 0; d < DIM_COUNT; d++) {
		const struct verdict *v = &r->v[d];

		fputs(d ? ",\n    " : "\n    ", f);
		json_write_string(f, dim_name(d));
		fputs(": {\"grade\": ", f);
		json_write_string(f, grade_name(v->grade));
		fputs(", \"reason\": ", f);
		json_write_string(f, v->reason);
		if (v->scope[0]) {
			fputs(", \"scope\": ", f);
			json_write_string(f, v->scope);
		}
		fputc('}', f);
	}
	fputs("}", f);
	str_member(f, "alarm", r->alarm[0] ? r->alarm : NULL, &first);
	str_member(f, "fanotify_mode", r->fanotify_mode[0] ? r->fanotify_mode : NULL, &first);
	key(f, "evidence", &first);
	fputc('[', f);
	for (size_t i = 0; i < r->n_ev; i++) {
		pair(f, i, "source", r->ev[i].source, "text", r->ev[i].text);
	}
	fputs("]", f);
	key(f, "completion_records", &first);
	fputc('[', f);
	for (size_t i = 0; i < r->n_recs; i++) {
		pair(f, i, "path", r->recs[i].path, "sha256", r->recs[i].sha256);
	}
	fputs("]", f);
	if (r->n_artifacts) {
		key(f, "artifacts", &first);
		fputc('[', f);
		for (size_t i = 0; i < r->n_artifacts; i++) {
			pair(f, i, "label", r->artifacts[i].label, "path", r->artifacts[i].path);
		}
		fputs("]", f);
	}
	key(f, "evidence_lines_dropped", &first);
	fprintf(f, "%zu", r->ev_dropped);
	key(f, "seconds", &first);
	fprintf(f, "%.3f", r->seconds);
	fputs("\n}\n", f);
}

/* The arms' artifacts (HB-07's screenshots), linked by relative path. */
static void md_write_artifacts(FILE *f, const struct result *rs, size_t n)
{
	bool any = false;

	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < rs[i].n_artifacts; k++) {
			if (!any)
				fputs("\n## Artifacts\n\n", f);
			any = true;
			fprintf(f, "- %s ", rs[i].case_id);
			md_write_cell(f, rs[i].arm);
			fputs(": [", f);
			md_write_cell(f, rs[i].artifacts[k].label);
			fputs("](", f);
			md_write_cell(f, rs[i].artifacts[k].path);
			fputs(")\n", f);
		}
	}
}

void report_write_md(FILE *f, const struct result *rs, size_t n, const struct subject *s)
{
	char verdict[640];

	run_verdict(rs, n, verdict, sizeof(verdict));
	md_write_cell(f, verdict);
	fprintf(f, "\n\n# paddock-eval run %s\n\n", s->run_id);
	fputs("Subject under test: paddock ", f);
	md_write_cell(f, s->paddock_version);
	fputs(" (commit ", f);
	md_write_cell(f, s->paddock_commit);
	fputs("), kernel ", f);
	md_write_cell(f, s->kernel);
	fputs(", libseccomp ", f);
	md_write_cell(f, s->libseccomp);
	fputs(", Docker client ", f);
	md_write_cell(f, s->docker_client);
	fputs(" / server ", f);
	md_write_cell(f, s->docker_server[0] ? s->docker_server : "none");
	fprintf(f,
		". Workloads ran as uid %u. Grades are per case, arm and dimension, never "
		"summed.\n\n",
		(unsigned)s->workload_uid);
	fputs("| case | arm | enforcement | control | evidence | notes |\n", f);
	fputs("|---|---|---|---|---|---|\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct result *r = &rs[i];

		fprintf(f, "| %s | ", r->case_id);
		md_write_cell(f, r->arm);
		for (int d = 0; d < DIM_COUNT; d++) {
			fprintf(f, " | %s", grade_name(r->v[d].grade));
			if (d == DIM_ENFORCEMENT && r->fixture_only)
				fputs(" (fixture only)", f);
			if (r->v[d].grade != GRADE_PASS) {
				fputs(": ", f);
				md_write_cell(f, r->v[d].reason);
				if (r->v[d].scope[0]) {
					fputs(" (scope: ", f);
					md_write_cell(f, r->v[d].scope);
					fputc(')', f);
				}
			}
		}
		fputs(" | ", f);
		if (r->alarm[0]) {
			fputs("**ALARM** ", f);
			md_write_cell(f, r->alarm);
			fputs("; ", f);
		}
		if (r->fixture_only) {
			fputs("fixture only: ", f);
			md_write_cell(f, r->fixture_why);
			fputs("; ", f);
		}
		for (size_t m = 0; m < r->n_mocks; m++) {
			fputs("mocked: ", f);
			md_write_cell(f, r->mocks[m]);
			fputs("; ", f);
		}
		fputs("policy sha256 ", f);
		md_write_cell(f, r->policy_sha256[0] ? r->policy_sha256 : "-");
		fputs(" |\n", f);
	}
	fputs("\nEach arm's evidence is in its JSON record beside this file.\n", f);
	md_write_artifacts(f, rs, n);
}

/* The test's name: what a PASS of it means. */
static const char *junit_name(const struct result *r, enum dim d)
{
	if (d == DIM_ENFORCEMENT && r->kind == ARM_WEAKENED && r->weakens == d)
		return "enforcement: weakening detected";
	if (d == DIM_CONTROL && r->kind == ARM_WEAKENED && r->weakens == d)
		return "control: weakening detected";
	if (d == DIM_ENFORCEMENT && r->kind == ARM_BROKEN_COLLECTOR)
		return "enforcement: missing evidence noticed";
	return dim_name(d);
}

static void junit_message(FILE *f, const struct result *r, enum dim d)
{
	const struct verdict *v = &r->v[d];

	fprintf(f, "%s", grade_name(v->grade));
	if (v->reason[0]) {
		fputs(": ", f);
		xml_write_escaped(f, v->reason);
	}
	if (v->scope[0]) {
		fputs(" (scope: ", f);
		xml_write_escaped(f, v->scope);
		fputc(')', f);
	}
	if (d == DIM_ENFORCEMENT && r->alarm[0]) {
		fputs("; ALARM: ", f);
		xml_write_escaped(f, r->alarm);
	}
}

/* One testcase per case, arm and dimension: a needed dimension as
 * expected passes (a weakened arm's FAIL is the pass of "weakening
 * detected"), a boundary FAIL is <failure>, UNKNOWN and NOT EXECUTED of a
 * needed dimension are <error> (the harness could not tell or did not
 * run: the run fails), a dimension not needed (docker reference arm,
 * NOT APPLICABLE, a weakened arm's control) that did not PASS is
 * <skipped> with its grade. */
void report_write_junit(FILE *f, const struct result *rs, size_t n, const struct subject *s)
{
	size_t failures = 0, errors = 0, skipped = 0;
	double total = 0;

	for (size_t i = 0; i < n; i++) {
		total += rs[i].seconds;
		for (int d = 0; d < DIM_COUNT; d++) {
			bool needed;
			enum outcome o = result_dim_outcome(&rs[i], d, &needed);

			if (d == DIM_ENFORCEMENT && o == OUTCOME_OK && rs[i].alarm[0])
				o = OUTCOME_UNKNOWN;
			if (o == OUTCOME_FAIL)
				failures++;
			else if (o != OUTCOME_OK)
				errors++;
			else if (!needed && rs[i].v[d].grade != GRADE_PASS)
				skipped++;
		}
	}
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	fputs("<testsuites name=\"paddock-eval\">\n<testsuite name=\"", f);
	xml_write_escaped(f, s->run_id);
	fprintf(f,
		"\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" "
		"time=\"%.3f\">\n",
		n * DIM_COUNT, failures, errors, skipped, total);
	for (size_t i = 0; i < n; i++) {
		const struct result *r = &rs[i];

		for (int d = 0; d < DIM_COUNT; d++) {
			bool needed;
			enum outcome o = result_dim_outcome(r, d, &needed);

			/* An alarm (teardown, ...) rides on the enforcement test. */
			if (d == DIM_ENFORCEMENT && o == OUTCOME_OK && r->alarm[0])
				o = OUTCOME_UNKNOWN;
			fputs("  <testcase classname=\"", f);
			xml_write_escaped(f, r->case_id);
			fputc('.', f);
			xml_write_escaped(f, r->arm);
			/* The dimensions are graded from one run of the arm:
			 * each carries the arm's time. */
			fprintf(f, "\" name=\"%s\" time=\"%.3f\">", junit_name(r, d), r->seconds);
			if (o == OUTCOME_FAIL) {
				fputs("<failure type=\"boundary failed\" message=\"", f);
				junit_message(f, r, d);
				fputs("\"/>", f);
			} else if (o != OUTCOME_OK) {
				fprintf(f, "<error type=\"%s\" message=\"",
					o == OUTCOME_NOT_EXECUTED ? "not executed"
								  : "harness could not tell");
				junit_message(f, r, d);
				fputs("\"/>", f);
			} else if (!needed && r->v[d].grade != GRADE_PASS) {
				fputs("<skipped message=\"", f);
				fputs(r->kind == ARM_DOCKER && !r->oci
					  ? "reference arm, not required: "
					  : "not required: ",
				      f);
				junit_message(f, r, d);
				fputs("\"/>", f);
			} else if (r->v[d].grade != GRADE_PASS) {
				/* Expected and not PASS: the weakened arm's FAIL. */
				fputs("<system-out>", f);
				junit_message(f, r, d);
				fputs("</system-out>", f);
			}
			fputs("</testcase>\n", f);
		}
	}
	fputs("</testsuite>\n</testsuites>\n", f);
}

void report_write_matrix(FILE *f, const struct result *rs, size_t n)
{
	fprintf(f, "%-6s %-38s %-15s %-15s %-15s\n", "case", "arm", "enforcement", "control",
		"evidence");
	for (size_t i = 0; i < n; i++) {
		const struct result *r = &rs[i];

		fprintf(f, "%-6s %-38s %-15s %-15s %-15s%s\n", r->case_id, r->arm,
			grade_name(r->v[DIM_ENFORCEMENT].grade),
			grade_name(r->v[DIM_CONTROL].grade), grade_name(r->v[DIM_EVIDENCE].grade),
			r->alarm[0]	      ? "  <-- ALARM"
			: result_fails_run(r) ? "  <-- FAILS RUN"
			: r->fixture_only     ? "  (fixture only)"
					      : "");
	}
	{
		char verdict[640];

		run_verdict(rs, n, verdict, sizeof(verdict));
		fprintf(f, "%s\n", verdict);
	}
}
