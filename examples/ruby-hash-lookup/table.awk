# SPDX-License-Identifier: MIT
# The per-size table of run.sh.  Input: one line per Hash size,
# "SIZE FUNCTION_CSV CALLSITE_CSV" (`cacheshim report --by function` and
# `--by callsite --format csv` of that size's run); -v lookups=N (random
# hits per run), -v outdir=DIR (for messages).
#
# Columns are found by name in the CSVs, and so are the events: besides tsc,
# every event or preset formula recorded for rb_hash_aref gets a column of
# its mean per call, in the order the report lists them.  When a preset's
# formulas are there (status "derived": L1D-misses, L2-hit-ratio, ...), the
# raw model-specific events they are computed from are left out of the
# table (they stay in the CSVs); perf:: events always show.  An event or
# formula with no value at any size (not counted) has no column.
function csv(line, f,    n, i, c, q, cur) {
	sub(/\r$/, "", line)
	n = 0; cur = ""; q = 0
	for (i = 1; i <= length(line); i++) {
		c = substr(line, i, 1)
		if (q) {
			if (c == "\"" && substr(line, i + 1, 1) == "\"") { cur = cur c; i++ }
			else if (c == "\"") q = 0
			else cur = cur c
		} else if (c == "\"") q = 1
		else if (c == ",") { f[++n] = cur; cur = "" }
		else cur = cur c
	}
	f[++n] = cur
	return n
}
# Calls take(which, row fields) for each data row of file; the header names
# the columns.
function load(file, which,    line, nf, i, f, col, hdr) {
	hdr = 1
	while ((getline line < file) > 0) {
		nf = csv(line, f)
		if (hdr) { for (i = 1; i <= nf; i++) col[f[i]] = i; hdr = 0; continue }
		take(which, f[col["function"]], f[col["event"]], f[col["calls"]],
		     f[col["mean"]], f[col["p50"]], f[col["p99"]], f[col["status"]],
		     f[col["callsite"]])
	}
	close(file)
}
function take(which, fn, e, calls, mean, p50, p99, status, site,    inside) {
	if (which == "function" && fn == "rb_hash_aref") {
		if (e == "tsc") {
			row["calls"] = calls; row["mean"] = mean
			row["p50"] = p50; row["p99"] = p99
		} else {
			row["ev:" e] = mean
			# A new event or formula: a column (the first size that
			# has it decides its place).
			if (!(e in known)) {
				known[e] = 1; order[++nseen] = e; derived[e] = status == "derived"
				if (derived[e]) anyderived = 1
			}
		}
	} else if (which == "callsite" && fn == "rb_st_lookup" && e == "tsc") {
		# A call site inside rb_hash_aref beats any other; among the
		# others, the busiest (used when no size has one by name:
		# libruby's symbols not read).
		inside = site ~ /^rb_hash_aref\+/
		if (inside) anyinside = 1
		if (inside > row["st_inside"] + 0 ||
		    (inside == row["st_inside"] + 0 && calls + 0 > row["st_calls"] + 0)) {
			row["st_inside"] = inside; row["st_calls"] = calls
			row["st_mean"] = mean; row["st_p50"] = p50; row["st_p99"] = p99
		}
	}
}
function val(x, fmt) { return x == "" ? "-" : sprintf(fmt, x) }
function width(name) { return length(name) + 5 > 12 ? length(name) + 5 : 12 }
{
	size[++nsizes] = $1; fcsv[nsizes] = $2; ccsv[nsizes] = $3
}
END {
	# Every size's rows first: the columns are known before the header.
	for (s = 1; s <= nsizes; s++) {
		split("", row)
		load(fcsv[s], "function")
		load(ccsv[s], "callsite")
		for (k in row) data[s, k] = row[k]
		has[s] = "calls" in row
	}
	for (i = 1; i <= nseen; i++) {
		e = order[i]
		if (anyderived && !derived[e] && e !~ /^perf::/) continue
		# An event no size counted (no PMU here after all) has no column.
		for (s = 1; s <= nsizes; s++)
			if (data[s, "ev:" e] != "") break
		if (s > nsizes) continue
		ev[++nev] = e; t = e; sub(/^perf::/, "", t); evname[nev] = t
	}
	printf "%9s %7s %6s %6s %6s", "", "", "", "", ""
	for (i = 1; i <= nev; i++) printf " %*s", width(evname[i]), ""
	printf "  %s\n", "rb_st_lookup in h[k]"
	printf "%9s %7s %6s %6s %6s", "size", "calls", "tsc", "p50", "p99"
	for (i = 1; i <= nev; i++) printf " %*s", width(evname[i]), evname[i] "/call"
	printf "  %7s %6s %6s %6s\n", "calls", "tsc", "p50", "p99"
	for (s = 1; s <= nsizes; s++) {
		# rb_st_lookup's call site inside rb_hash_aref (when no size's
		# has that name, its busiest call site), if it has a call per
		# lookup: a Hash of 8 entries or fewer makes none (Ruby's own
		# Hashes a few), and Ruby's start makes thousands of calls at
		# one site elsewhere.
		st = (anyinside ? data[s, "st_inside"] : 1) && data[s, "st_calls"] + 0 >= lookups + 0
		if (!has[s]) bad = bad " " size[s]
		printf "%9d %7s %6s %6s %6s", size[s], val(data[s, "calls"], "%.0f"),
		       val(data[s, "mean"], "%.0f"), val(data[s, "p50"], "%.0f"),
		       val(data[s, "p99"], "%.0f")
		for (i = 1; i <= nev; i++)
			printf " %*s", width(evname[i]), val(data[s, "ev:" ev[i]], "%.3f")
		printf "  %7s %6s %6s %6s\n", st ? data[s, "st_calls"] : "0",
		       val(st ? data[s, "st_mean"] : "", "%.0f"),
		       val(st ? data[s, "st_p50"] : "", "%.0f"),
		       val(st ? data[s, "st_p99"] : "", "%.0f")
	}
	print "The first columns are rb_hash_aref (tsc = mean); its time includes the"
	print "rb_st_lookup call inside it (Hashes of more than 8 entries) and the counter"
	print "reads cacheshim makes around that call: with a software event such as"
	print "perf::PAGE-FAULTS two read() system calls, thousands of ticks, most of the"
	print "step from 8 entries (no inner call) to 64.  The last columns are that"
	print "rb_st_lookup call alone: the hash table probe."
	if (bad != "")
		printf "no rb_hash_aref calls recorded for size%s (see %s/log-*.txt)\n", bad, outdir
}
