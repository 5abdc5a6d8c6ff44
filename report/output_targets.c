/* SPDX-License-Identifier: MIT */
/* --targets: per target, how its calls were caught and why entry patching was refused. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"

/*
 * The how flags of a target merged over files are or'ed: a function
 * patched at its entry in one process and refused in another shows both
 * (entry, with the reason).  ENTRY and GOT together should not happen
 * (an entry-patched function is not also hooked through its GOT slots)
 * but is shown as it is, not hidden.
 */

const char *cs_targets_how(const struct cs_target_info *t)
{
	int got = (t->how & CS_HOOK_GOT) != 0;

	if (t->how & CS_HOOK_ENTRY)
		return got ? "entry+got" : "entry";
	if (t->how & CS_HOOK_REFUSED)
		return got ? "got-refused" : "refused";
	return got ? "got" : "none";
}

/* The how column of the table: the token in words. */
static const char *how_text(const struct cs_target_info *t, char *buf, size_t len)
{
	const char *how = cs_targets_how(t);

	char words[48] = "";

	/* Words of data (a vtable) pointed at the wrapper, as GOT slots are. */
	if (t->data_words)
		snprintf(words, sizeof(words), ", %u data word%s", t->data_words,
			 t->data_words == 1 ? "" : "s");
	if (strcmp(how, "entry+got") == 0)
		snprintf(buf, len, "entry + GOT (%u slot%s%s)", t->got_slots,
			 t->got_slots == 1 ? "" : "s", words);
	else if (strcmp(how, "got") == 0)
		snprintf(buf, len, "GOT (%u slot%s%s)", t->got_slots, t->got_slots == 1 ? "" : "s",
			 words);
	else if (strcmp(how, "got-refused") == 0)
		snprintf(buf, len, "GOT (entry refused)");
	else if (strcmp(how, "refused") == 0)
		snprintf(buf, len, "not caught (entry refused)");
	else if (strcmp(how, "none") == 0)
		snprintf(buf, len, "not caught");
	else
		snprintf(buf, len, "%s", how);
	return buf;
}

char *cs_targets_address(const struct cs_target_info *t, char *buf, size_t len)
{
	if (t->mod)
		snprintf(buf, len, "%s+0x%llx", cs_util_basename(t->mod->path),
			 (unsigned long long)t->k.offset);
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)t->addr);
	return buf;
}

char *cs_targets_reason(const struct cs_target_info *t, char *buf, size_t len)
{
	size_t i, n = 0;
	int w;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < t->nrefusals && n < len; i++) {
		const struct cs_refusal_info *ri = &t->refusals[i];

		if (ri->offset)
			w = snprintf(buf + n, len - n, "%s%s (+0x%llx)", i ? "; " : "", ri->why,
				     (unsigned long long)ri->offset);
		else
			w = snprintf(buf + n, len - n, "%s%s", i ? "; " : "", ri->why);
		if (w < 0)
			break;
		n += (size_t)w;
	}
	return buf;
}

int cs_targets_listed(const struct cs_report *r, const struct cs_target_info *t)
{
	size_t i;

	if (r->nfn_globs == 0)
		return 1;
	for (i = 0; i < r->nfn_globs; i++)
		if (cs_demangle_fnmatch(r->fn_globs[i], t->k.name, CS_DEMANGLE_CUT) == 0)
			return 1;
	return 0;
}

size_t cs_targets_refused(const struct cs_report *r)
{
	const struct cs_target_info *t, *tmp;
	size_t n = 0;

	/* As the summary of --targets counts them: a function patched at
	 * its entry in another process counts as patched. */
	HASH_ITER(hh, r->targets, t, tmp)
	n += (t->how & (CS_HOOK_REFUSED | CS_HOOK_ENTRY)) == CS_HOOK_REFUSED;
	return n;
}

/* The cells of a target row of the table. */
enum { TC_FUNCTION, TC_MODULE, TC_ADDRESS, TC_HOW, TC_HIDDEN, TC_CALLS, TC_REASON, TC_N };

static const char *const tc_title[TC_N] = {
	"function", "module", "address", "how caught", "hidden", "calls", "reason",
};

/* Fills cells[TC_N] (each malloc'd) for t, its name demangled unless
 * raw_names.  Returns 0 or -ENOMEM. */
static int row_cells(const struct cs_target_info *t, int raw_names, char **cells)
{
	char buf[2048], *dm = raw_names ? NULL : cs_demangle(t->k.name, CS_DEMANGLE_CUT);
	int i;

	/* The cells are the file's bytes: no control character reaches the
	 * terminal (the CSV and the JSON quote them their own way). */
	cells[TC_FUNCTION] = cs_util_escape_dup(dm ? dm : t->k.name);
	free(dm);
	cells[TC_MODULE] = cs_util_escape_dup(t->mod ? cs_util_basename(t->mod->path) : "?");
	cells[TC_ADDRESS] = cs_util_escape_dup(cs_targets_address(t, buf, sizeof(buf)));
	cells[TC_HOW] = strdup(how_text(t, buf, sizeof(buf)));
	cells[TC_HIDDEN] = strdup(t->how & CS_HOOK_HIDDEN ? "hidden" : "");
	cs_util_u128(t->calls, buf, sizeof(buf));
	cells[TC_CALLS] = strdup(buf);
	cells[TC_REASON] = cs_util_escape_dup(cs_targets_reason(t, buf, sizeof(buf)));
	for (i = 0; i < TC_N; i++)
		if (!cells[i])
			return -ENOMEM;
	return 0;
}

/* The line under the table: the targets counted by how they were
 * caught (every target is in exactly one of entry, GOT only, refused and
 * not caught). */
static void summary(FILE *out, struct cs_target_info **v, size_t n)
{
	size_t i, entry = 0, got = 0, refused = 0, refused_got = 0, none = 0;
	const char *how;

	for (i = 0; i < n; i++) {
		how = cs_targets_how(v[i]);
		if (strncmp(how, "entry", 5) == 0)
			entry++;
		else if (strcmp(how, "got") == 0)
			got++;
		else if (strcmp(how, "got-refused") == 0)
			refused++, refused_got++;
		else if (strcmp(how, "refused") == 0)
			refused++;
		else
			none++;
	}
	fprintf(out,
		"%zu target%s: %zu entry-patched, %zu through GOT only, %zu refused (of which %zu "
		"caught by GOT)",
		n, n == 1 ? "" : "s", entry, got, refused, refused_got);
	if (none)
		fprintf(out, ", %zu not caught", none);
	fputc('\n', out);
}

int cs_targets_print_table(FILE *out, const struct cs_report *r, int raw_names)
{
	struct cs_target_info **all, **v;
	size_t n, i, k = 0, w[TC_N], len;
	char **cells;
	int c, ret = 0;

	all = cs_merge_targets(r, &n);
	if (r->ntargets && !all)
		return -ENOMEM;
	v = all;
	for (i = 0; i < n; i++)
		if (cs_targets_listed(r, all[i]))
			v[k++] = all[i];
	n = k;
	if (n == 0) {
		fputs("no targets recorded\n", out);
		free(all);
		return cs_util_flushed(out);
	}
	cells = calloc(n * TC_N, sizeof(*cells));
	if (!cells) {
		free(all);
		return -ENOMEM;
	}
	for (c = 0; c < TC_N; c++)
		w[c] = strlen(tc_title[c]);
	/* Widths in display columns: a UTF-8 name is fewer than its bytes. */
	for (i = 0; i < n && !ret; i++) {
		ret = row_cells(v[i], raw_names, cells + i * TC_N);
		for (c = 0; c < TC_N && !ret; c++) {
			len = strlen(cells[i * TC_N + c]);
			if (cs_util_width(cells[i * TC_N + c], len) > w[c])
				w[c] = cs_util_width(cells[i * TC_N + c], len);
		}
	}
	if (!ret) {
		fputs("targets\n", out);
		/* Two spaces between columns; calls right-aligned, and the
		 * reason last, unpadded (it is the long one) and left out
		 * when empty: no trailing blanks. */
		for (i = 0; i <= n; i++) {
			for (c = 0; c < TC_N; c++) {
				const char *s = i ? cells[(i - 1) * TC_N + c] : tc_title[c];

				if (c == TC_REASON) {
					if (s[0])
						fprintf(out, "  %s", s);
				} else if (c == TC_CALLS) {
					fprintf(out, "  %*s", cs_util_field(s, w[c]), s);
				} else {
					fprintf(out, "  %-*s", cs_util_field(s, w[c]), s);
				}
			}
			fputc('\n', out);
		}
		fputc('\n', out);
		summary(out, v, n);
	}
	for (i = 0; i < n * TC_N; i++)
		free(cells[i]);
	free(cells);
	free(all);
	if (ret)
		return ret;
	return cs_util_flushed(out);
}

int cs_targets_print_csv(FILE *out, const struct cs_report *r)
{
	struct cs_target_info **v;
	char buf[2048];
	size_t n, i;

	v = cs_merge_targets(r, &n);
	if (r->ntargets && !v)
		return -ENOMEM;
	fputs("function,module,address,how,got_slots,hidden,calls,reason,data_words\n", out);
	for (i = 0; i < n; i++) {
		if (!cs_targets_listed(r, v[i]))
			continue;
		cs_csv_field(out, v[i]->k.name);
		fputc(',', out);
		cs_csv_field(out, v[i]->mod ? v[i]->mod->path : "");
		fputc(',', out);
		cs_csv_field(out, cs_targets_address(v[i], buf, sizeof(buf)));
		fprintf(out, ",%s,%u,%d,%llu,", cs_targets_how(v[i]), v[i]->got_slots,
			(v[i]->how & CS_HOOK_HIDDEN) != 0, (unsigned long long)v[i]->calls);
		cs_csv_field(out, cs_targets_reason(v[i], buf, sizeof(buf)));
		fprintf(out, ",%u\n", v[i]->data_words);
	}
	free(v);
	return cs_util_flushed(out);
}
