#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make bench`: per-call overhead of cacheshim against hand-written floors and peer tools.
#
# Builds the benchmark programs into $BENCH_BUILDDIR/bench/out, runs every
# configuration once per round, rounds after each other (round-robin, each
# round starting at another configuration, so that a burst of load from
# someone else's build hits different configurations), and reports medians
# over the rounds.  Writes the table to bench/results-latest.md and prints it.
# Nothing here is a test: no number fails the run; a peer tool that is
# missing or does not work here is skipped with a note.
#
# Environment (make passes the first four):
#   BENCH_SRCDIR, BENCH_BUILDDIR   source and build tree (absolute)
#   BENCH_SHIM                     libcacheshim.so to preload
#   BENCH_CMD                      the cacheshim command (for `cacheshim run`)
#   CC                             compiler (default cc)
#   BENCH_ROUNDS=11                rounds (medians over these)
#   BENCH_BUDGET=240               seconds: no new round starts after this
#   BENCH_PIN=CPUS                 run everything under `taskset -c CPUS`
#   BENCH_INSTALL=1                apt-get install the peer tools first and
#                                  mount tracefs for `perf probe` (root)
#   BENCH_RUBY_SIZE=32768          Hash size of the ruby demo run
#   BENCH_ONLY=ID,ID...            run only these configurations (ids as in
#                                  the configs list; `ruby` = the ruby rows)
set -eu
set -f # target globs (bench_f*) are passed as words, never expanded here
export LC_ALL=C

srcdir=${BENCH_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${BENCH_BUILDDIR:-$srcdir}
shim=${BENCH_SHIM:-$builddir/.libs/libcacheshim.so}
cscmd=${BENCH_CMD:-$builddir/cacheshim}
CC=${CC:-cc}
rounds=${BENCH_ROUNDS:-11}
budget=${BENCH_BUDGET:-240}
ruby_size=${BENCH_RUBY_SIZE:-32768}
out=$builddir/bench/out
results_md=$builddir/bench/results-latest.md
start_s=$(date +%s)

die() { printf 'bench: %s\n' "$*" >&2; exit 1; }
say() { printf 'bench: %s\n' "$*" >&2; }

[ -r "$shim" ] || die "$shim not found: run make first"
mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cacheshim-bench.XXXXXX")
notes=$tmp/notes
: >"$notes"
note() { printf -- '- %s\n' "$*" >>"$notes"; }

probe_group=csbench$$ # perf probe event group, removed again at exit
probes_added=0
mounted_tracefs=
cleanup() {
	if [ "$probes_added" = 1 ]; then
		perf probe -q -d "$probe_group:*" >/dev/null 2>&1 || true
	fi
	if [ -n "$mounted_tracefs" ]; then
		umount "$mounted_tracefs" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

pin=()
if [ -n "${BENCH_PIN:-}" ]; then
	pin=(taskset -c "$BENCH_PIN")
fi

# ---------------------------------------------------------------------------
# Optional: install the peers (Debian package names).
if [ "${BENCH_INSTALL:-0}" = 1 ]; then
	if [ "$(id -u)" = 0 ]; then
		say "installing peer tools (BENCH_INSTALL=1)"
		apt-get update -qq >/dev/null 2>&1 || say "apt-get update failed; trying the install anyway"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq uftrace ltrace bpftrace \
			linux-perf libpapi-dev hyperfine >"$tmp/apt.log" 2>&1 ||
			note "BENCH_INSTALL: apt-get install failed: $(tail -n 1 "$tmp/apt.log")"
	else
		note "BENCH_INSTALL=1 needs root; using what is installed"
	fi
fi

# ---------------------------------------------------------------------------
# Build.  Fixed flags: the numbers must not depend on the CFLAGS configure
# was given.  Plain gcc rather than automake rules: half the sources are
# generated here and the PAPI peer builds only where papi.h exists.
say "building in $out"
sh "$srcdir/bench/gen.sh" "$out"
cflags=(-O2 -g -Wall -Wextra -D_GNU_SOURCE -I"$srcdir")
"$CC" "${cflags[@]}" -fPIC -shared -o "$out/libbenchlib.so" "$srcdir/bench/benchlib.c"
"$CC" "${cflags[@]}" -fPIC -shared -o "$out/libbench1000.so" "$out/lib1000.c"
# -O1: 10,000 lines of straight calls compile in seconds and stay calls.
"$CC" -O1 -I"$srcdir" -c -o "$out/sites.o" "$out/sites.c"
"$CC" -O1 -I"$srcdir" -c -o "$out/targets.o" "$out/targets.c"
"$CC" "${cflags[@]}" -o "$out/bench" "$srcdir/bench/bench.c" "$out/sites.o" \
	"$out/targets.o" -L"$out" -lbenchlib -lbench1000 -Wl,-rpath,"$out" -lpthread
for f in floor_rdtsc floor_read; do
	"$CC" "${cflags[@]}" -fPIC -shared -ftls-model=initial-exec -o "$out/lib$f.so" \
		"$srcdir/bench/$f.c" -ldl
done
# The dlopen rows: 200 small libraries, each with a PLT import, loaded one
# by one (bench/dlopens.c).
ndl=200
"$CC" "${cflags[@]}" -o "$out/dlopens" "$srcdir/bench/dlopens.c" -ldl
mkdir -p "$out/dl"
# Built again only where the source changed (200 compilations take ~10 s).
for i in $(seq 0 $((ndl - 1))); do
	printf '#include <string.h>\nlong dl_fn%d(const char *s) { return (long)strlen(s) + %d; }\n' \
		"$i" "$i" >"$out/dl/dl$i.c.new"
	if [ -e "$out/dl/libdl$i.so" ] && cmp -s "$out/dl/dl$i.c.new" "$out/dl/dl$i.c"; then
		rm -f "$out/dl/dl$i.c.new"
		continue
	fi
	mv "$out/dl/dl$i.c.new" "$out/dl/dl$i.c"
	echo "$i"
done | xargs -r -P 2 -I{} "$CC" -O2 -fPIC -shared -o "$out/dl/libdl{}.so" "$out/dl/dl{}.c"
have_papi=0
if "$CC" "${cflags[@]}" -fPIC -shared -o "$out/libpapi_read.so" "$srcdir/bench/papi_read.c" \
	-lpapi -ldl >"$tmp/papi-build.log" 2>&1; then
	have_papi=1
fi
bench=$out/bench
lib=$out/libbenchlib.so

# ---------------------------------------------------------------------------
# Configurations: id|label|runner|environment|bench arguments.
# Runners: plain, cs (libcacheshim.so preloaded), preload:LIB, uftrace,
# uftrace_pf, ltrace, bpftrace, perfprobe, ruby, ruby_cs, ruby_preload.
# The environment field is space-separated NAME=VALUE words.
sw4=perf::PAGE-FAULTS,perf::MINOR-FAULTS,perf::MAJOR-FAULTS,perf::CONTEXT-SWITCHES
# Chunks of ~2-4 ms (short enough that many escape preemption by other
# work on the machine; bench.c drops the preempted ones), 30 per run.  The
# targets runs make 650 calls per target (50 warm-up + 30 x 20): fewer than
# the 1,024 windows of a cacheshim series block, as in a program whose
# 1,000 functions are each called a few hundred times.
L1="-n 1000000 -w 100000 -k 30" # no tool: ~3 ns per call
LT="-n 20000 -w 20000 -k 30"     # ~40-200 ns per call
LR="-n 1000 -w 2000 -k 30"       # ~1-2 us per call
LU="-n 200 -w 100 -k 20"         # uprobes: ~10 us per call
TG="-n 20000 -w 50000 -k 30"     # 1,000 call sites per unit
ST="-n 10000 -w 20000 -k 30"     # 10,000 call sites per unit
configs=(
	"none|no tool|plain||$L1"
	"floor_tsc|floor: rdtsc pair wrapper|preload:libfloor_rdtsc.so||$LT"
	"cs_tsc|cacheshim \`tsc\`|cs|CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=bench_inc|$LT"
	"cs_tsc_got|cacheshim \`tsc\`, CACHESHIM_HOOK=got (GOT slot, no entry patch)|cs|CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=bench_inc CACHESHIM_HOOK=got|$LT"
	"cs_tsc_ns|cacheshim \`tsc\`, CACHESHIM_SERIES=0|cs|CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=bench_inc CACHESHIM_SERIES=0|$LT"
	"cs_tsc_nsw|cacheshim \`tsc\`, CACHESHIM_SERIES=0 CACHESHIM_WINDOW=0|cs|CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=bench_inc CACHESHIM_SERIES=0 CACHESHIM_WINDOW=0|$LT"
	"floor_rd1|floor: group read() pair, perf::PAGE-FAULTS|preload:libfloor_read.so|BENCH_FLOOR_EVENTS=1|$LR"
	"cs_pf|cacheshim \`perf::PAGE-FAULTS\`|cs|CACHESHIM_EVENTS=perf::PAGE-FAULTS CACHESHIM_TARGETS=bench_inc|$LR"
	"floor_rd4|floor: group read() pair, 4 software events|preload:libfloor_read.so|BENCH_FLOOR_EVENTS=4|$LR"
	"cs_sw4|cacheshim, 4 software events|cs|CACHESHIM_EVENTS=$sw4 CACHESHIM_TARGETS=bench_inc|$LR"
	"uftrace|uftrace record --force|uftrace||-n 20000 -w 10000 -k 20"
	"uftrace_pf|uftrace record --force -T bench_inc@read=page-fault (a getrusage pair)|uftrace_pf||$LR"
	"papi|PAPI_read pair wrapper, perf::PAGE-FAULTS|papi||$LR"
	"bpftrace|bpftrace uprobe + uretprobe pair|bpftrace||$LU"
	"perfprobe|perf probe entry + return, perf record|perfprobe||$LU"
	"ltrace|ltrace -e bench_inc|ltrace||-n 20 -w 50 -k 20"
	"none_t1|no tool: 1,000 call sites of bench_f0|plain||-m targets1 $TG"
	"cs_t1|cacheshim \`tsc\`: 1 target, 1,000 call sites|cs|CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=bench_f0|-m targets1 $TG"
	"none_t1000|no tool: 1,000 targets, 1 call site each|plain||-m targets1000 $TG"
	"cs_t1000|cacheshim \`tsc\`: 1,000 targets (glob bench_f*)|cs|CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=bench_f*|-m targets1000 $TG"
	"cs_t1_ns|cacheshim \`tsc\`: 1 target, CACHESHIM_SERIES=0|cs|CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=bench_f0 CACHESHIM_SERIES=0|-m targets1 $TG"
	"cs_t1000_ns|cacheshim \`tsc\`: 1,000 targets, CACHESHIM_SERIES=0|cs|CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=bench_f* CACHESHIM_SERIES=0|-m targets1000 $TG"
	"none_s10k|no tool: 10,000 call sites of bench_inc|plain||-m sites $ST"
	"cs_s10k|cacheshim \`tsc\`: 10,000 call sites|cs|CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=bench_inc|-m sites $ST"
	"none_th1|no tool, 1 thread|plain||-t 1 $L1"
	"none_th2|no tool, 2 threads|plain||-t 2 $L1"
	"cs_th1|cacheshim \`tsc\`, 1 thread|cs|CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=bench_inc|-t 1 $LT"
	"cs_th2|cacheshim \`tsc\`, 2 threads|cs|CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=bench_inc|-t 2 $LT"
	"floor_rd1_th1|floor read() pair, 1 thread|preload:libfloor_read.so|BENCH_FLOOR_EVENTS=1|-t 1 $LR"
	"floor_rd1_th2|floor read() pair, 2 threads|preload:libfloor_read.so|BENCH_FLOOR_EVENTS=1|-t 2 $LR"
	"cs_pf_th1|cacheshim \`perf::PAGE-FAULTS\`, 1 thread|cs|CACHESHIM_EVENTS=perf::PAGE-FAULTS CACHESHIM_TARGETS=bench_inc|-t 1 $LR"
	"cs_pf_th2|cacheshim \`perf::PAGE-FAULTS\`, 2 threads|cs|CACHESHIM_EVENTS=perf::PAGE-FAULTS CACHESHIM_TARGETS=bench_inc|-t 2 $LR"
	"none_js|no tool: bench_inc under a SIGALRM storm (siglongjmp every 40 µs)|plain||-m jumpstorm $LT"
	"floor_js|floor: rdtsc pair wrapper, the same storm|preload:libfloor_rdtsc.so||-m jumpstorm $LT"
	"cs_js|cacheshim \`tsc\`, the same storm|cs|CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=bench_inc|-m jumpstorm $LT"
	"cs_js_ns|cacheshim \`tsc\`, the same storm, CACHESHIM_SERIES=0|cs|CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=bench_inc CACHESHIM_SERIES=0|-m jumpstorm $LT"
	"acc_bare|hand-written fenced rdtsc pair around an empty function|plain||-m bracket -n 100000"
	"acc_cs|cacheshim \`tsc\`: calibration median (empty function, 1,000 calls)|cs_calib||-n 1000 -w 0 -k 1"
	"none_dl|no tool: $ndl libraries dlopened one by one|dl||"
	"cs_dl|cacheshim \`tsc\` (its target in none of them)|dl_cs|CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=bench_inc|"
	"ruby|ruby hash_lookup.rb --size $ruby_size|ruby||"
	"ruby_cs|cacheshim run -e tsc -t rb_hash_aref,rb_st_lookup -- ruby ...|ruby_cs||"
	"ruby_preload|same, LD_PRELOAD without the launcher|ruby_preload||"
)

declare -A label runner envs args
ids=()
for c in "${configs[@]}"; do
	IFS='|' read -r id l r e a <<<"$c"
	ids+=("$id")
	label[$id]=$l
	runner[$id]=$r
	envs[$id]=$e
	args[$id]=$a
done

# ---------------------------------------------------------------------------
# Running one configuration once.  Writes the driver's number (ns per call)
# or the wall time in ms (ruby) to $2; returns non-zero if the run failed.
# stderr goes to $3.
rubyscript=$srcdir/examples/ruby-hash-lookup/hash_lookup.rb
ruby_args=(--disable-gems "$rubyscript" --size "$ruby_size")
tracefs=

run_one() {
	local id=$1 res=$2 t0 t1
	local -a env_words arg_words e pre
	read -r -a env_words <<<"${envs[$id]}"
	read -r -a arg_words <<<"${args[$id]}"
	set -- "$bench" "${arg_words[@]}" -o "$res"
	e=(env "${env_words[@]}")
	# A hung peer must not hang the benchmark.
	pre=(timeout -k 5 60 "${pin[@]}")
	case ${runner[$id]} in
	plain)
		"${pre[@]}" "${e[@]}" "$@" ;;
	cs)
		"${pre[@]}" "${e[@]}" CACHESHIM_QUIET=1 CACHESHIM_OUTPUT="$tmp/run/cs.%p" \
			LD_PRELOAD="$shim" "$@" ;;
	cs_calib)
		# The report's "overhead:" line is the calibration median.
		"${pre[@]}" "${e[@]}" CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=bench_inc \
			CACHESHIM_OUTPUT="$tmp/run/calib.cs" LD_PRELOAD="$shim" "$@" &&
			"$cscmd" report "$tmp/run/calib.cs" |
			sed -n 's/^overhead: *tsc \([0-9.]*\).*/\1/p' >"$res" ;;
	preload:*)
		"${pre[@]}" "${e[@]}" LD_PRELOAD="$out/${runner[$id]#preload:}" "$@" ;;
	papi)
		"${pre[@]}" env LD_PRELOAD="$out/libpapi_read.so" "$@" ;;
	uftrace)
		"${pre[@]}" uftrace record --force -d "$tmp/run/uftrace.data" "$@" ;;
	uftrace_pf)
		"${pre[@]}" uftrace record --force -d "$tmp/run/uftrace.data" \
			-T 'bench_inc@read=page-fault' "$@" ;;
	ltrace)
		"${pre[@]}" ltrace -e bench_inc -o /dev/null "$@" ;;
	bpftrace)
		"${pre[@]}" bpftrace -q -e "uprobe:$lib:bench_inc { @s[tid] = nsecs; }
			uretprobe:$lib:bench_inc /@s[tid]/ { @ns = hist(nsecs - @s[tid]); delete(@s[tid]); }" \
			-c "$*" ;;
	perfprobe)
		"${pre[@]}" perf record -q -o "$tmp/run/perf.data" -e "$probe_group:inc" \
			-e "$probe_group:inc__return" -- "$@" ;;
	dl)
		"${pre[@]}" "${e[@]}" "$out/dlopens" "$out/dl" "$ndl" -o "$res" ;;
	dl_cs)
		"${pre[@]}" "${e[@]}" CACHESHIM_QUIET=1 CACHESHIM_OUTPUT="$tmp/run/cs.%p" \
			LD_PRELOAD="$shim" "$out/dlopens" "$out/dl" "$ndl" -o "$res" ;;
	ruby | ruby_cs | ruby_preload)
		t0=$EPOCHREALTIME
		case ${runner[$id]} in
		ruby) "${pre[@]}" ruby "${ruby_args[@]}" ;;
		ruby_cs) "${pre[@]}" "$cscmd" run -q -e tsc -t rb_hash_aref,rb_st_lookup \
			-o "$tmp/run/rb.%p" -- ruby "${ruby_args[@]}" ;;
		ruby_preload) "${pre[@]}" env CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc \
			CACHESHIM_TARGETS=rb_hash_aref,rb_st_lookup CACHESHIM_OUTPUT="$tmp/run/rb.%p" \
			LD_PRELOAD="$shim" ruby "${ruby_args[@]}" ;;
		esac
		t1=$EPOCHREALTIME
		awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) * 1e3 }' >"$res" ;;
	*)
		return 1 ;;
	esac
}

# Runs id once; appends "id value" to $tmp/values, or "id<TAB>first line
# of stderr" to $tmp/failed.  cacheshim's own warnings go to $tmp/cswarn.
run_timed() {
	local id=$1 rc=0 v
	rm -rf "$tmp/run" "$tmp/res"
	mkdir "$tmp/run"
	run_one "$id" "$tmp/res" </dev/null >/dev/null 2>"$tmp/err" || rc=$?
	rm -rf "$tmp/run"
	grep '^cacheshim:' "$tmp/err" 2>/dev/null | head -n 2 | while IFS= read -r line; do
		printf '%s\t%s\n' "$id" "$line"
	done >>"$tmp/cswarn"
	# The driver's line: ns per call, chunks, chunks used.
	if [ "$rc" != 0 ] || ! v=$(awk 'NR == 1 { print $1 }' "$tmp/res" 2>/dev/null) || [ -z "$v" ]; then
		printf '%s\t%s\n' "$id" "$(grep -v '^$' "$tmp/err" 2>/dev/null | head -n 1)" >>"$tmp/failed"
		return 1
	fi
	printf '%s %s\n' "$id" "$v" >>"$tmp/values"
}

# ---------------------------------------------------------------------------
# Which peers can run here.  A skipped configuration is left out of the
# rounds and named in the notes.
declare -A skip
skip_id() { skip[$1]=1; note "skipped: ${label[$1]}: $2"; }

if ! command -v uftrace >/dev/null 2>&1; then
	skip_id uftrace "uftrace not installed (make bench BENCH_INSTALL=1, or apt-get install uftrace)"
	skip_id uftrace_pf "uftrace not installed"
fi
if ! command -v ltrace >/dev/null 2>&1; then
	skip_id ltrace "ltrace not installed (apt-get install ltrace)"
fi
if ! command -v bpftrace >/dev/null 2>&1; then
	skip_id bpftrace "bpftrace not installed (apt-get install bpftrace)"
fi
if [ "$have_papi" != 1 ]; then
	skip_id papi "PAPI not installed (apt-get install libpapi-dev): $(grep -m1 -i error "$tmp/papi-build.log" || true)"
fi
if ! command -v ruby >/dev/null 2>&1; then
	for id in ruby ruby_cs ruby_preload; do skip_id $id "ruby not installed"; done
fi

# perf probe needs tracefs (uprobe_events).
if ! command -v perf >/dev/null 2>&1 || ! perf version >/dev/null 2>&1; then
	skip_id perfprobe "perf not installed (apt-get install linux-perf)"
else
	for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
		if [ -e "$d/uprobe_events" ]; then tracefs=$d; break; fi
	done
	if [ -z "$tracefs" ] && [ "${BENCH_INSTALL:-0}" = 1 ] && [ "$(id -u)" = 0 ] &&
		[ -d /sys/kernel/tracing ] && mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; then
		mounted_tracefs=/sys/kernel/tracing
		[ -e /sys/kernel/tracing/uprobe_events ] && tracefs=/sys/kernel/tracing
	fi
	if [ -z "$tracefs" ]; then
		skip_id perfprobe "tracefs is not mounted (BENCH_INSTALL=1 mounts it when root)"
	else
		perf probe -q -d "$probe_group:*" >/dev/null 2>&1 || true
		# Events $probe_group:inc and (perf adds the suffix) inc__return.
		if perf probe -q -x "$lib" -a "$probe_group:inc=bench_inc" >"$tmp/probe.log" 2>&1 &&
			perf probe -q -x "$lib" -a "$probe_group:inc=bench_inc%return" >>"$tmp/probe.log" 2>&1; then
			probes_added=1
		else
			probes_added=1
			skip_id perfprobe "perf probe failed: $(grep -v '^$' "$tmp/probe.log" | head -n 1)"
		fi
	fi
fi

# One short run of each peer: a tool that is installed but cannot work
# here (no uprobes, no perf_event_paranoid permission, PAPI without its
# perf_event component) is skipped, not allowed to fail the benchmark.
for id in uftrace uftrace_pf papi bpftrace perfprobe ltrace; do
	[ -z "${skip[$id]:-}" ] || continue
	saved=${args[$id]}
	args[$id]="-n 20 -w 10 -k 1"
	if ! run_timed "$id"; then
		skip_id "$id" "does not run here: $(cut -f2- "$tmp/failed" | tail -n 1)"
	fi
	args[$id]=$saved
done
rm -f "$tmp/values" "$tmp/failed" "$tmp/cswarn"

# The ruby demo: with hyperfine (exact process timing, warm-up), one
# hyperfine call per round for the three commands, so that they stay
# interleaved with everything else like the other configurations; without
# it each command is a configuration of its own, timed here.
hyperfine_ruby=0
if [ -z "${skip[ruby]:-}" ] && command -v hyperfine >/dev/null 2>&1 &&
	hyperfine --help 2>/dev/null | grep -q -- '--export-json'; then
	hyperfine_ruby=1
fi
q() { printf '%q ' "$@"; }
hf_pfx=""
if [ -n "${BENCH_PIN:-}" ]; then hf_pfx="taskset -c $BENCH_PIN "; fi
hf_failed=0
run_ruby_hf() {
	rm -rf "$tmp/run"
	mkdir "$tmp/run"
	if ! timeout -k 5 120 hyperfine -N --style none --warmup 1 --runs 3 \
		--export-json "$tmp/hf.json" \
		"$hf_pfx$(q ruby "${ruby_args[@]}")" \
		"$hf_pfx$(q "$cscmd" run -q -e tsc -t rb_hash_aref,rb_st_lookup -o "$tmp/run/rb.%p" -- ruby "${ruby_args[@]}")" \
		"$hf_pfx$(q env CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rb_hash_aref,rb_st_lookup CACHESHIM_OUTPUT="$tmp/run/rb.%p" LD_PRELOAD="$shim" ruby "${ruby_args[@]}")" \
		>"$tmp/hf.log" 2>&1; then
		[ "$hf_failed" = 1 ] || note "hyperfine failed: $(grep -v '^$' "$tmp/hf.log" | head -n 1)"
		hf_failed=1
		rm -rf "$tmp/run"
		return 1
	fi
	rm -rf "$tmp/run"
	# Every run's time, from the "times" list of each command in order.
	awk 'BEGIN { split("ruby ruby_cs ruby_preload", id, " ") }
		/"command":/ { k++ }
		/"times": \[/ { t = 1; next }
		t && /\]/ { t = 0; next }
		t { gsub(/[ ,]/, ""); printf "%s %.3f\n", id[k], $0 * 1000 }' "$tmp/hf.json" >>"$tmp/values"
}

# ---------------------------------------------------------------------------
# The rounds.
run_ids=()
only=,${BENCH_ONLY:-},
for id in "${ids[@]}"; do
	[ -z "${skip[$id]:-}" ] || continue
	if [ -n "${BENCH_ONLY:-}" ]; then
		case $only in *",$id,"*) ;; *) continue ;; esac
	fi
	case $id in ruby*) [ "$hyperfine_ruby" = 1 ] && continue ;; esac
	run_ids+=("$id")
done
if [ "$hyperfine_ruby" = 1 ] && { [ -z "${BENCH_ONLY:-}" ] || [[ $only == *,ruby,* ]]; }; then
	run_ids+=(ruby_hf)
	note "ruby rows: hyperfine, 3 runs of each command (after 1 warm-up) per round"
fi
n=${#run_ids[@]}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
done_rounds=0
for ((r = 0; r < rounds; r++)); do
	if [ "$r" -gt 0 ] && [ $(($(date +%s) - start_s)) -ge "$budget" ]; then
		note "stopped after $r of $rounds rounds: BENCH_BUDGET=${budget}s reached"
		break
	fi
	say "round $((r + 1))/$rounds"
	# Each round starts five steps further along the list.
	for ((i = 0; i < n; i++)); do
		id=${run_ids[$(((i + r * 5) % n))]}
		if [ "$id" = ruby_hf ]; then
			run_ruby_hf || true
		else
			run_timed "$id" || true
		fi
	done
	done_rounds=$((r + 1))
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------------------
# The table.
declare -A med lo hi
for id in "${ids[@]}"; do
	[ -s "$tmp/values" ] || break
	vals=$(awk -v id="$id" '$1 == id { print $2 }' "$tmp/values" | sort -g)
	[ -n "$vals" ] || continue
	read -r m l h < <(printf '%s\n' "$vals" | awk '
		{ v[NR] = $1 }
		END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		      print m, v[1], v[NR] }')
	med[$id]=$m lo[$id]=$l hi[$id]=$h
done

calc() { awk "BEGIN { printf \"$1\", $2 }"; }
# Ratios: two decimals where targets are decided, whole numbers for peers
# that are hundreds of times slower.
ratio_fmt() { awk -v r="$1" 'BEGIN { printf (r >= 100 ? "%.0f" : r >= 10 ? "%.1f" : "%.2f"), r }'; }
have() { [ -n "${med[$1]:-}" ]; }
added() { calc '%.4f' "${med[$1]} - ${med[$2]}"; }

# row ID BASE REF KIND TARGET
#   BASE: the no-tool run of the same shape (added = median - its median)
#   REF:  what the ratio compares with; KIND: added (added/added of REF),
#         thr (throughput: REF's time / this time), wall (this / REF),
#         floor or base (the row is a reference itself)
#   TARGET: <=X or >=X from issue 6, or "info"
rows=$tmp/rows
: >"$rows"
row() {
	local id=$1 base=$2 ref=$3 kind=$4 target=$5 m unit ad="" ratio="" res=""
	have "$id" || return 0
	case $id in ruby*) unit=ms ;; acc_*) unit=ticks ;; *_dl) unit=µs ;; *) unit=ns ;; esac
	m=$(calc '%.1f' "${med[$id]}")
	if [ "$base" != - ] && have "$base"; then
		ad=$(calc '%.1f' "${med[$id]} - ${med[$base]}")
	fi
	case $kind in
	floor) ratio="1 (floor)" ;;
	base) ratio="—" ;;
	added)
		if have "$ref" && [ -n "$ad" ]; then
			local refbase=$7
			ratio=$(ratio_fmt "$(calc '%.6f' "(${med[$id]} - ${med[$base]}) / (${med[$ref]} - ${med[$refbase]})")")
			ratio="$ratio× ${6}"
		fi ;;
	thr) have "$ref" && ratio="$(calc '%.2f' "${med[$ref]} / ${med[$id]}")× throughput of ${6}" ;;
	wall) have "$ref" && ratio="$(calc '%.2f' "${med[$id]} / ${med[$ref]}")× ${6}" ;;
	esac
	# The same ratio from the fastest round of each configuration: on these
	# machines timings flip between two levels (docs/performance.md), and
	# the lower ends show the undisturbed machine.
	local best="—"
	case $kind in
	added)
		if have "$ref" && [ "$base" != - ] && have "$base"; then
			local refbase=$7
			best="$(ratio_fmt "$(calc '%.6f' "(${lo[$id]} - ${lo[$base]}) / (${lo[$ref]} - ${lo[$refbase]})")")×"
		fi ;;
	thr) have "$ref" && best="$(calc '%.2f' "${lo[$ref]} / ${lo[$id]}")×" ;;
	wall) have "$ref" && best="$(calc '%.2f' "${lo[$id]} / ${lo[$ref]}")×" ;;
	esac
	if [ "$target" != info ] && [ -n "$ratio" ]; then
		local x=${ratio%%×*}
		case $target in
		"<="*) res=$(calc '%s' "(($x <= ${target#<=}) ? \"pass\" : \"miss\")") ;;
		">="*) res=$(calc '%s' "(($x >= ${target#>=}) ? \"pass\" : \"miss\")") ;;
		esac
		target="${target/<=/≤ }"
		target="${target/>=/≥ }"
	elif [ "$target" = info ]; then
		target="—"
	fi
	local range
	range="$(calc '%.1f' "${lo[$id]}")–$(calc '%.1f' "${hi[$id]}")"
	printf '| %s | %s %s | %s | %s | %s | %s | %s | %s |\n' "${label[$id]}" "$m" "$unit" \
		"${ad:-—}" "$range" "${ratio:-—}" "$best" "$target" "${res:-—}" >>"$rows"
}
section() { printf '| **%s** | | | | | | | |\n' "$1" >>"$rows"; }

section "one call site, bench_inc (ns per call)"
row none - - base info
row floor_tsc none - floor info
row cs_tsc none floor_tsc added "<=1.3" "rdtsc floor" none
row cs_tsc_got none floor_tsc added info "rdtsc floor" none
row cs_tsc_ns none floor_tsc added info "rdtsc floor" none
row cs_tsc_nsw none floor_tsc added info "rdtsc floor" none
row floor_rd1 none - floor info
row cs_pf none floor_rd1 added "<=1.1" "read() floor" none
row floor_rd4 none - floor info
row cs_sw4 none floor_rd4 added "<=1.1" "4-event read() floor" none
section "peers (ratio to the floor of the same kind of reading)"
row uftrace none floor_tsc added info "rdtsc floor" none
row uftrace_pf none floor_rd1 added info "read() floor" none
row papi none floor_rd1 added info "read() floor" none
row bpftrace none floor_tsc added info "rdtsc floor" none
row perfprobe none floor_tsc added info "rdtsc floor" none
row ltrace none floor_tsc added info "rdtsc floor" none
section "targets and call sites (added ns per call; ratio to 1 target / 1 call site)"
row none_t1 - - base info
row cs_t1 none_t1 - base info
row none_t1000 - - base info
row cs_t1000 none_t1000 cs_t1 added "<=1.1" "1 target" none_t1
row cs_t1_ns none_t1 - base info
row cs_t1000_ns none_t1000 cs_t1_ns added info "1 target, series off" none_t1
row none_s10k - - base info
row cs_s10k none_s10k cs_tsc added "<=1.1" "1 call site" none
section "threads (wall time / all calls; ratio = throughput of 2 threads / 1)"
row none_th1 - - base info
row none_th2 - none_th1 thr info "1 thread"
row cs_th1 - - base info
row cs_th2 - cs_th1 thr ">=1.8" "1 thread"
row floor_rd1_th1 - - base info
row floor_rd1_th2 - floor_rd1_th1 thr info "1 thread"
row cs_pf_th1 - - base info
row cs_pf_th2 - cs_pf_th1 thr ">=1.8" "1 thread"
section "siglongjmp storm (ns per loop step; ratio to the floor under the storm, and to series off)"
row none_js - - base info
row floor_js none_js - floor info
row cs_js_ns none_js floor_js added info "rdtsc floor, storm" none_js
row cs_js none_js cs_js_ns added info "series off" none_js
section "accuracy: TSC ticks read around an empty function (median; ratio to the hand-written pair)"
row acc_bare - - base info
row acc_cs - acc_bare wall info "hand-written pair"
section "start-up: dlopen, the patching passes after each (µs per dlopen, the loop of $ndl timed)"
row none_dl - - base info
row cs_dl none_dl none_dl wall info "no tool"
section "ruby demo, hash_lookup.rb --size $ruby_size (wall time per run)"
row ruby - - base info
row ruby_cs - ruby wall "<=1.5" "plain ruby"
row ruby_preload - ruby wall info "plain ruby"

# The machine.
cpu=$(awk -F': ' '/^model name/ { m = $2 } /^cpu family/ { f = $2 } /^model\t/ { mo = $2 }
	/^cpu MHz/ { mhz = $2 } END { printf "%s (family %s model %s, %.0f MHz)", m, f, mo, mhz; exit }' /proc/cpuinfo)
glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null || echo unknown)
pmu=$("$bench" -m pmu 2>/dev/null || echo 0)
[ "$pmu" = 1 ] && pmu="hardware PMU present" || pmu="no hardware PMU (perf_event_open of cycles fails)"
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo '?')
elapsed=$(($(date +%s) - start_s))

{
	echo "# make bench: per-call overhead"
	echo
	echo "Machine: $cpu, $(nproc) CPUs; kernel $(uname -r); $glibc; $pmu; perf_event_paranoid $paranoid."
	echo "Load average (1/5/15 min): $load_before at the start, $load_after at the end."
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'): $done_rounds interleaved rounds, median per configuration;" \
		"range = min–max over the rounds; ${elapsed}s in all.${BENCH_PIN:+ Pinned with taskset -c $BENCH_PIN.}"
	echo "cacheshim: $shim ($(cd "$srcdir" && git describe --always --dirty 2>/dev/null || echo 'no git'))."
	echo
	echo "| configuration | median | added | range | ratio | ratio of the fastest rounds | target (issue 6) | result |"
	echo "|---|---|---|---|---|---|---|---|"
	cat "$rows"
	echo
	echo "added = median minus the no-tool run of the same shape.  Ratio of added"
	echo "times to the floor: the floor is a minimal hand-written LD_PRELOAD wrapper"
	echo "with the same reading (bench/floor_*.c).  Rows without a target are"
	echo "for comparison or diagnosis.  The result is decided on the medians; the"
	echo "ratio of the fastest rounds (each configuration's minimum) is the same"
	echo "ratio on the undisturbed machine (timings here flip between two levels"
	echo "with other guests' load: docs/performance.md)."
	if [ -s "$notes" ] || [ -s "$tmp/failed" ] || [ -s "$tmp/cswarn" ]; then
		echo
		echo "Notes:"
		cat "$notes"
		if [ -s "$tmp/failed" ]; then
			sort -u "$tmp/failed" | awk -F'\t' '{ n[$1]++; if (!($1 in w)) w[$1] = $2 }
				END { for (i in n) printf "- %s: %d run(s) failed: %s\n", i, n[i], w[i] }'
		fi
		if [ -s "$tmp/cswarn" ]; then
			sort -u "$tmp/cswarn" | awk -F'\t' '!seen[$2]++ { printf "- %s: %s\n", $1, $2 }'
		fi
	fi
} >"$results_md"
cat "$results_md"
