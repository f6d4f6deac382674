/* Unit tests for paddock-eval's report.html and progress line
 * (scenarios/lib/report_html.c): the page is self-contained, every string
 * comes back escaped, every non-PASS reason is on it, the links point at
 * the records. tests/check_report_html.py renders the same page in
 * Chromium and checks the matrix against the JSON records. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../scenarios/lib/args.h"
#include "../../scenarios/lib/report_html.h"
#include "eval_sample.h"
#include "unit.h"

TestSuite(eval_html, .fini = unit_leak_check);

static char *page(void)
{
	static struct result r[EVAL_SAMPLE_N];
	struct subject s;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	eval_sample(r, &s, "/res/run");
	report_write_html(f, r, EVAL_SAMPLE_N, &s, "/res/run");
	fclose(f);
	return buf;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

Test(eval_html, self_contained)
{
	char *b = page();

	cr_assert_eq(strncmp(b, "<!DOCTYPE html>", 15), 0);
	cr_assert(strstr(b, "</html>\n"));
	/* Nothing loaded from anywhere: no script, no stylesheet link, no
	 * image, no url() in the style. */
	cr_assert_null(strstr(b, "<script"), "%s", b);
	cr_assert_null(strstr(b, "<link"));
	cr_assert_null(strstr(b, "<img"));
	cr_assert_null(strstr(b, "src="));
	cr_assert_null(strstr(b, "url("));
	cr_assert_null(strstr(b, "http:"));
	cr_assert_null(strstr(b, "https:"));
	free(b);
}

Test(eval_html, escaped)
{
	char *b = page();

	cr_assert(strstr(b, "canary changed: &lt;/td&gt;&lt;/tr&gt;&lt;script&gt;alert(1)&lt;/"
			    "script&gt; &amp; &quot;q&quot; &apos;a&apos; &lt;b&gt;x&lt;/b&gt;"),
		  "%s", b);
	cr_assert(strstr(b, "<td>abc&lt;def&gt;</td>"));
	free(b);
}

Test(eval_html, matrix_and_reasons)
{
	char *b = page();

	/* One row per result, three graded cells each; 14 rows of reasons
	 * (11 grades that are not PASS, the alarm, two notes). */
	cr_assert_eq(count(b, "<tr data-case=\"HB-"), EVAL_SAMPLE_N + 14, "%s", b);
	cr_assert_eq(count(b, "data-grade=\""), EVAL_SAMPLE_N * DIM_COUNT);
	cr_assert(strstr(b, "<td class=\"g-pass o-ok\" data-dim=\"enforcement\" "
			    "data-grade=\"PASS\">PASS</td>"));
	/* A weakened arm's FAIL is what it must show: not framed. */
	cr_assert(strstr(b, "<td class=\"g-fail o-ok\" data-dim=\"enforcement\" "
			    "data-grade=\"FAIL\" title=\"canary changed:"));
	/* An enforced FAIL is. */
	cr_assert(strstr(b, "<td class=\"g-fail o-fail\" data-dim=\"enforcement\" "
			    "data-grade=\"FAIL\" title=\"2 descendants survived\">FAIL</td>"));
	cr_assert(strstr(b, "class=\"g-not-executed o-ok\" data-dim=\"control\""));
	cr_assert(strstr(b, "class=\"g-not-applicable o-ok\" data-dim=\"evidence\""));
	cr_assert(strstr(b, "data-grade=\"UNKNOWN\" title=\"the collector dropped 3 events\">"
			    "UNKNOWN (fixture only)</td>"));
	/* Every non-PASS reason, the alarm, the notes, the scope. */
	cr_assert(strstr(b, "<td class=\"reason\">2 descendants survived</td><td></td>"));
	cr_assert(strstr(b, "<td class=\"reason\">no write claim</td><td>HB-06 &amp; "
			    "expiry</td>"));
	cr_assert(strstr(b, "<td class=\"reason\">missing evidence: the driver did not grade"));
	cr_assert(strstr(b, "data-dim=\"alarm\"><td>HB-06</td><td>weakened:no-pidns</td>"));
	cr_assert(strstr(b, "<td>mocked</td><td class=\"reason\">a mocked &quot;clock&quot;"));
	cr_assert(strstr(b, "<td>fixture only</td><td class=\"reason\">the collector is"));
	cr_assert(strstr(b, "<tr data-case=\"HB-06\" data-arm=\"weakened:no-pidns\" "
			    "data-outcome=\"unknown\" class=\"alarm\">"));
	cr_assert(strstr(b, "id=\"verdict\" data-exit=\"1\">Verdict: BOUNDARY FAILED"));
	free(b);
}

Test(eval_html, links)
{
	char *b = page();

	cr_assert(strstr(b, "<a class=\"record\" href=\"HB-01.weakened_rw-binds.json\">"));
	/* Under the results directory: relative; elsewhere: file://, with
	 * the URL's special characters encoded. */
	cr_assert(strstr(b, "href=\"records/HB-01.enforced/r.json\">completion record 1</a>"));
	cr_assert(
	    strstr(b, "href=\"file:///res/run-other/elsewhere%20%231.json\">completion record 2"));
	free(b);
}

Test(eval_html, version_option)
{
	char *argv[] = {"paddock-eval", "--version", NULL};
	struct eval_opts o;
	struct err err = {0};

	cr_assert_eq(eval_opts_parse(2, argv, NULL, 0, &o, &err), 0, "%s", err.msg);
	cr_assert(o.version);
	eval_opts_free(&o);
}

Test(eval_html, record_name)
{
	struct result r;
	char n[16], l[64];

	result_init(&r, "HB-03", "t", "weakened:no-landlock+exec-host-mounts");
	report_record_name(&r, l, sizeof(l));
	cr_assert_str_eq(l, "HB-03.weakened_no-landlock+exec-host-mounts.json");
	/* Cut, never overrun. */
	report_record_name(&r, n, sizeof(n));
	cr_assert_str_eq(n, "HB-03.weakened_");
}

Test(eval_html, progress_line)
{
	static struct result r[EVAL_SAMPLE_N];
	struct subject s;
	char l[256];

	eval_sample(r, &s, "/res");
	report_progress_line(l, sizeof(l), 1, 7, &r[0]);
	cr_assert_str_eq(l, "[1/7] HB-01 enforced PASS (1.2 s)");
	report_progress_line(l, sizeof(l), 2, 7, &r[1]);
	cr_assert_str_eq(l, "[2/7] HB-01 weakened:rw-binds FAIL as expected (0.0 s)");
	report_progress_line(l, sizeof(l), 3, 7, &r[2]);
	cr_assert_str_eq(l, "[3/7] HB-04 broken-collector UNKNOWN, evidence UNKNOWN as expected "
			    "(0.0 s)");
	report_progress_line(l, sizeof(l), 4, 7, &r[3]);
	cr_assert_str_eq(l, "[4/7] HB-04 docker NOT EXECUTED (0.0 s)");
	report_progress_line(l, sizeof(l), 5, 7, &r[4]);
	cr_assert_str_eq(l, "[5/7] HB-06 enforced FAIL, evidence NOT APPLICABLE FAILS RUN (0.0 s)");
	report_progress_line(l, sizeof(l), 6, 7, &r[5]);
	cr_assert_str_eq(l, "[6/7] HB-06 weakened:no-pidns PASS ALARM (0.0 s)");
	report_progress_line(l, 12, 6, 7, &r[5]);
	cr_assert_str_eq(l, "[6/7] HB-06");
}
