/* SPDX-License-Identifier: MIT */
/* The CSV report (RFC 4180): the format scripts rely on. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"

/* The first 13 columns are a contract: never reorder or rename them.
 * New columns go at the end. */
static const char header[] = "function,callsite,module,event,calls,total,mean,stddev,min,p50,p90,"
			     "p99,max,entered,dropped,status\n";

void cs_csv_field(FILE *out, const char *field)
{
	const char *p;

	if (!strpbrk(field, ",\"\r\n")) {
		fputs(field, out);
		return;
	}
	fputc('"', out);
	for (p = field; *p; p++) {
		if (*p == '"')
			fputc('"', out);
		fputc(*p, out);
	}
	fputc('"', out);
}

static void u64(FILE *out, uint64_t v)
{
	fprintf(out, ",%llu", (unsigned long long)v);
}

static void row_event(FILE *out, const struct cs_report *r, const struct cs_row *row, size_t ev,
		      const char *fn, const char *cs, const char *mod)
{
	const struct cs_agg *agg = cs_merge_agg(row, ev);
	struct cs_summary s;
	char buf[64];

	cs_csv_field(out, fn);
	fputc(',', out);
	cs_csv_field(out, cs);
	fputc(',', out);
	cs_csv_field(out, mod);
	fputc(',', out);
	cs_csv_field(out, r->events[ev].name);
	if (cs_merge_not_counted(r, ev)) {
		/* calls..max, entered, dropped: no number means nothing
		 * was measured, which a 0 would hide. */
		fputs(",,,,,,,,,,,,not counted\n", out);
		return;
	}
	if (!agg) {
		fputs(",0,0,,,,,,,", out); /* mean..max empty */
		u64(out, row->entered);
		u64(out, row->dropped);
		fputs(",no data\n", out);
		return;
	}
	cs_stats_summarize(agg, &s);
	u64(out, s.n);
	fprintf(out, ",%s", cs_util_u128(s.total, buf, sizeof(buf)));
	fprintf(out, ",%s", cs_util_decimal(s.mean, buf, sizeof(buf)));
	fprintf(out, ",%s", cs_util_decimal(s.stddev, buf, sizeof(buf)));
	u64(out, s.min);
	u64(out, s.p50);
	u64(out, s.p90);
	u64(out, s.p99);
	u64(out, s.max);
	u64(out, row->entered);
	u64(out, row->dropped);
	fputs(",ok\n", out);
}

int cs_csv_print(FILE *out, const struct cs_report *r, struct cs_symbols *syms)
{
	char fn[CS_TARGET_NAME_MAX + 48], cs[4096], mod[4096];
	struct cs_row **rows;
	size_t n, i, ev;

	rows = cs_merge_sorted(r, &n);
	if (r->nrows && !rows)
		return -ENOMEM;
	fputs(header, out);
	for (i = 0; i < n; i++) {
		cs_merge_function(rows[i], fn, sizeof(fn));
		cs_output_callsite(r, rows[i], syms, cs, sizeof(cs), mod, sizeof(mod));
		for (ev = 0; ev < r->nevents; ev++)
			row_event(out, r, rows[i], ev, fn, cs, mod);
	}
	free(rows);
	fflush(out);
	return ferror(out) ? -EIO : 0;
}
