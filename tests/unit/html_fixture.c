/* Writes tests/unit/eval_sample.h's run as paddock-eval would (report.html
 * and one JSON record per case and arm) into DIR, and the completion record
 * that lies outside it into DIR-other, for tests/check_report_html.py:
 * html_fixture DIR. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../../scenarios/lib/report_html.h"
#include "eval_sample.h"

static int put(const char *dir, const char *name, const struct result *r, size_t n,
	       const struct subject *s)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (!(f = fopen(p, "we")))
		return -errno;
	if (n)
		report_write_html(f, r, n, s, dir);
	else
		report_write_json(f, r, s);
	return fclose(f) == 0 ? 0 : -errno;
}

int main(int argc, char **argv)
{
	static struct result r[EVAL_SAMPLE_N];
	struct subject s;
	char name[160], p[PATH_MAX];

	if (argc != 2 || argv[1][0] != '/') {
		fputs("usage: html_fixture /ABSOLUTE/DIR\n", stderr);
		return 2;
	}
	eval_sample(r, &s, argv[1]);
	mkdir(argv[1], 0755);
	snprintf(p, sizeof(p), "%s/records", argv[1]);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/records/HB-01.enforced", argv[1]);
	mkdir(p, 0755);
	if (put(argv[1], "records/HB-01.enforced/r.json", r, 0, &s) < 0)
		goto fail;
	snprintf(p, sizeof(p), "%s-other", argv[1]);
	mkdir(p, 0755);
	if (put(p, "elsewhere #1.json", r, 0, &s) < 0)
		goto fail;
	for (size_t i = 0; i < EVAL_SAMPLE_N; i++) {
		report_record_name(&r[i], name, sizeof(name));
		if (put(argv[1], name, &r[i], 0, &s) < 0)
			goto fail;
	}
	if (put(argv[1], "report.html", r, EVAL_SAMPLE_N, &s) < 0)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "html_fixture: cannot write in %s: %s\n", argv[1], strerror(errno));
	return 1;
}
