/* report.html and the progress line (report_html.h). Like report.c, this
 * only formats what grading.c decided. The page has no script and loads
 * nothing: the style is inline, the only links are to the records. */
#include "report_html.h"

#include <string.h>

/* HTML's escapes are XML's (&lt; &gt; &amp; &quot; &apos;), in text and in
 * quoted attributes alike. */
static void esc(FILE *f, const char *s)
{
	xml_write_escaped(f, s);
}

/* "NOT EXECUTED" -> "not-executed": a class name. */
static void grade_class(FILE *f, enum grade g)
{
	for (const char *p = grade_name(g); *p; p++)
		fputc(*p == ' ' ? '-' : (*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p), f);
}

static const char *outcome_name(enum outcome o)
{
	switch (o) {
	case OUTCOME_OK:
		return "ok";
	case OUTCOME_NOT_EXECUTED:
		return "not-executed";
	case OUTCOME_UNKNOWN:
		return "unknown";
	case OUTCOME_FAIL:
		return "fail";
	}
	return "?";
}

void report_record_name(const struct result *r, char *out, size_t len)
{
	size_t l;

	snprintf(out, len, "%s.", r->case_id);
	for (const char *a = r->arm; *a && (l = strlen(out)) + 1 < len; a++) {
		out[l] = *a == ':' ? '_' : *a;
		out[l + 1] = '\0';
	}
	l = strlen(out);
	snprintf(out + l, len - l, ".json");
}

/* A link to path: relative to base when under it, else a file:// URL. The
 * URL's special characters are percent-encoded, then the whole escaped. */
static void href(FILE *f, const char *path, const char *base)
{
	size_t bl = base ? strlen(base) : 0;
	const char *p = path;

	if (bl && strncmp(path, base, bl) == 0 && path[bl] == '/')
		p = path + bl + 1;
	else if (path[0] == '/')
		fputs("file://", f);
	for (; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c <= 0x20 || c >= 0x7f || strchr("\"'<>&%#?\\", c))
			fprintf(f, "%%%02X", c);
		else
			fputc(c, f);
	}
}

static const char style[] =
    "body{font-family:sans-serif;margin:1.5em;color:#111}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em}"
    "th,td{border:1px solid #999;padding:.25em .6em;text-align:left;vertical-align:top}"
    "th{background:#eee}"
    "#matrix td:nth-child(-n+2),#reasons td:nth-child(-n+4){white-space:nowrap}"
    "td.g-pass{background:#b7e4b0}"
    "td.g-fail{background:#f4a3a3}"
    "td.g-unknown{background:#ffe08a}"
    "td.g-not-executed{background:#cfd8e3}"
    "td.g-not-applicable{background:#e6e6e6;color:#555}"
    "td.o-ok{outline:none}"
    "td.o-fail,td.o-unknown,td.o-not-executed{outline:3px solid #a00;outline-offset:-3px}"
    "tr.alarm td.arm{font-weight:bold;color:#a00}"
    ".verdict{font-size:1.1em;font-weight:bold}"
    ".note{color:#555;font-size:.9em}";

static void subject_row(FILE *f, const char *k, const char *v)
{
	fputs("<tr><th>", f);
	esc(f, k);
	fputs("</th><td>", f);
	esc(f, v && v[0] ? v : "none");
	fputs("</td></tr>\n", f);
}

static void head(FILE *f, const struct result *rs, size_t n, const struct subject *s)
{
	char verdict[640], uid[32];
	int st = run_verdict(rs, n, verdict, sizeof(verdict));

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n", f);
	fputs("<title>paddock-eval run ", f);
	esc(f, s->run_id);
	fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n", style);
	fputs("<h1>paddock-eval run ", f);
	esc(f, s->run_id);
	fprintf(f, "</h1>\n<p class=\"verdict\" id=\"verdict\" data-exit=\"%d\">", st);
	esc(f, verdict);
	fputs("</p>\n<h2>Subject under test</h2>\n<table id=\"subject\">\n", f);
	subject_row(f, "paddock version", s->paddock_version);
	subject_row(f, "paddock commit", s->paddock_commit);
	subject_row(f, "paddock path", s->paddock_path);
	subject_row(f, "kernel", s->kernel);
	subject_row(f, "libseccomp", s->libseccomp);
	subject_row(f, "Docker client", s->docker_client);
	subject_row(f, "Docker server", s->docker_server);
	subject_row(f, "Docker arms", s->docker_reason[0] ? s->docker_reason : "available");
	snprintf(uid, sizeof(uid), "%u", (unsigned)s->workload_uid);
	subject_row(f, "workload uid", uid);
	subject_row(f, "harness as root", s->root ? "yes" : "no");
	subject_row(f, "fanotify observer",
		    s->fanotify_reason[0] ? s->fanotify_reason : "available");
	fputs("</table>\n", f);
}

static void matrix_row(FILE *f, const struct result *r, const char *base)
{
	char name[160];

	fputs("<tr data-case=\"", f);
	esc(f, r->case_id);
	fputs("\" data-arm=\"", f);
	esc(f, r->arm);
	fprintf(f, "\" data-outcome=\"%s\"%s><td title=\"", outcome_name(result_outcome(r)),
		r->alarm[0] ? " class=\"alarm\"" : "");
	esc(f, r->title);
	fputs("\">", f);
	esc(f, r->case_id);
	fputs("</td><td class=\"arm\">", f);
	esc(f, r->arm);
	fputs("</td>", f);
	for (int d = 0; d < DIM_COUNT; d++) {
		bool needed;
		enum outcome o = result_dim_outcome(r, d, &needed);

		fputs("<td class=\"g-", f);
		grade_class(f, r->v[d].grade);
		fprintf(f, " o-%s\" data-dim=\"%s\" data-grade=\"%s\"", outcome_name(o),
			dim_name(d), grade_name(r->v[d].grade));
		if (r->v[d].reason[0]) {
			fputs(" title=\"", f);
			esc(f, r->v[d].reason);
			fputc('"', f);
		}
		fprintf(f, ">%s%s</td>", grade_name(r->v[d].grade),
			d == DIM_ENFORCEMENT && r->fixture_only ? " (fixture only)" : "");
	}
	report_record_name(r, name, sizeof(name));
	fprintf(f, "<td>%.1f s</td><td><a class=\"record\" href=\"", r->seconds);
	href(f, name, NULL);
	fputs("\">", f);
	esc(f, name);
	fputs("</a>", f);
	for (size_t i = 0; i < r->n_recs; i++) {
		fputs("<br><a class=\"completion\" href=\"", f);
		href(f, r->recs[i].path, base);
		fprintf(f, "\">completion record %zu</a>", i + 1);
	}
	fputs("</td></tr>\n", f);
}

static void reason_row(FILE *f, const struct result *r, const char *dim, const char *grade,
		       const char *reason, const char *scope)
{
	fputs("<tr data-case=\"", f);
	esc(f, r->case_id);
	fputs("\" data-arm=\"", f);
	esc(f, r->arm);
	fputs("\" data-dim=\"", f);
	esc(f, dim);
	fputs("\"><td>", f);
	esc(f, r->case_id);
	fputs("</td><td>", f);
	esc(f, r->arm);
	fputs("</td><td>", f);
	esc(f, dim);
	fputs("</td><td>", f);
	esc(f, grade);
	fputs("</td><td class=\"reason\">", f);
	esc(f, reason);
	fputs("</td><td>", f);
	esc(f, scope);
	fputs("</td></tr>\n", f);
}

/* Every grade that is not PASS, with its reason and scope; then the
 * alarms, the fixture-only notes and the mocks, as rows of their own. */
static void reasons(FILE *f, const struct result *rs, size_t n)
{
	fputs("<h2>Every grade that is not PASS</h2>\n<table id=\"reasons\">\n"
	      "<tr><th>case</th><th>arm</th><th>dimension</th><th>grade</th><th>reason</th>"
	      "<th>scope</th></tr>\n",
	      f);
	for (size_t i = 0; i < n; i++) {
		const struct result *r = &rs[i];

		for (int d = 0; d < DIM_COUNT; d++)
			if (r->v[d].grade != GRADE_PASS)
				reason_row(f, r, dim_name(d), grade_name(r->v[d].grade),
					   r->v[d].reason, r->v[d].scope);
		if (r->alarm[0])
			reason_row(f, r, "alarm", "ALARM", r->alarm, "");
		if (r->fixture_only)
			reason_row(f, r, "note", "fixture only", r->fixture_why, "");
		for (size_t m = 0; m < r->n_mocks; m++)
			reason_row(f, r, "note", "mocked", r->mocks[m], "");
	}
	fputs("</table>\n", f);
}

void report_write_html(FILE *f, const struct result *rs, size_t n, const struct subject *s,
		       const char *base)
{
	head(f, rs, n, s);
	fputs("<h2>Matrix</h2>\n<p class=\"note\">Grades per case, arm and dimension, never "
	      "summed. A framed cell is one the run fails on; a weakened arm's FAIL and a "
	      "broken-collector arm's UNKNOWN are what those arms must show. Hover a cell for "
	      "its reason.</p>\n<table id=\"matrix\">\n<tr><th>case</th><th>arm</th>",
	      f);
	for (int d = 0; d < DIM_COUNT; d++)
		fprintf(f, "<th>%s</th>", dim_name(d));
	fputs("<th>time</th><th>records</th></tr>\n", f);
	for (size_t i = 0; i < n; i++)
		matrix_row(f, &rs[i], base);
	fputs("</table>\n", f);
	reasons(f, rs, n);
	fputs("<p class=\"note\">Each arm's evidence is in its JSON record beside this "
	      "page.</p>\n</body>\n</html>\n",
	      f);
}

void report_progress_line(char *out, size_t len, size_t i, size_t total, const struct result *r)
{
	enum outcome o = result_outcome(r);
	enum grade g = r->v[DIM_ENFORCEMENT].grade;
	bool same = true;
	size_t l;

	for (int d = 0; d < DIM_COUNT; d++)
		same = same && r->v[d].grade == g;

	snprintf(out, len, "[%zu/%zu] %s %s %s", i, total, r->case_id, r->arm,
		 grade_name(r->v[DIM_ENFORCEMENT].grade));
	for (int d = DIM_ENFORCEMENT + 1; d < DIM_COUNT; d++) {
		if (same || r->v[d].grade == GRADE_PASS)
			continue;
		l = strlen(out);
		snprintf(out + l, len - l, ", %s %s", dim_name(d), grade_name(r->v[d].grade));
	}
	l = strlen(out);
	if (r->alarm[0])
		snprintf(out + l, len - l, " ALARM");
	else if (o != OUTCOME_OK)
		snprintf(out + l, len - l, " FAILS RUN");
	else if (r->kind == ARM_WEAKENED || r->kind == ARM_BROKEN_COLLECTOR)
		snprintf(out + l, len - l, " as expected");
	l = strlen(out);
	snprintf(out + l, len - l, " (%.1f s)", r->seconds);
}
