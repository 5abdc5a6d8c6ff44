#!/bin/bash
# SPDX-License-Identifier: MIT
# A program that sandboxes itself: after its first N calls of t_leaf it
# installs a seccomp filter (by prctl, and by syscall(SYS_seccomp) as
# libseccomp does) that kills the process on system calls it does not make
# afterwards but the shim would (getpid, gettid, sched_getaffinity,
# perf_event_open, the report file's fstat, fallocate, pwritev, ftruncate,
# close, munmap...).  Then 2N calls at the call site it used before, one
# at a new call site and N in each of two new threads.  Under the shim it
# ran into the filter and died of SIGSYS (status 159).  Now it runs as
# without the shim; the 3N calls at the known call site are measured, the
# 2N + 1 others counted as not recorded, and the file is complete.  A
# filter that kills only on what the shim never calls (ptrace) changes
# nothing: all 5N + 1 calls are measured.  A program exec'd under the
# filter runs too, without the shim (left out of its LD_PRELOAD, of each
# entry on its own when there are several; one without it as it is); a
# big environment exec'd by a thread with a small stack is not copied.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=1000
cd "$T"
echo 'volatile long sink; long t_leaf(long x) { sink += x; return x + 1; }' >t.c
cat >prog.c <<'C'
/* Installs a seccomp filter that kills on system calls this program never
 * makes after it (but the shim would), by prctl or by syscall(SYS_seccomp),
 * then calls t_leaf: N times at a call site used before the filter, N at a
 * new one, and N in each of 2 new threads. */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdio.h>

long t_leaf(long);
static int n;

/* One call site for the calls before and after the filter. */
static __attribute__((noinline)) long call_n(int k)
{
	long s = 0;

	for (int i = 0; i < k; i++)
		s += t_leaf(i);
	return s;
}

static void *exec_self(void *arg)
{
	execl("/proc/self/exe", "prog", "run", (char *)arg, (char *)0);
	return arg;
}

static void *worker(void *arg)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += t_leaf(i);
	return (void *)s;
}

#define KILL_IF(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		KILL_IF(SYS_getpid), KILL_IF(SYS_gettid), KILL_IF(SYS_sched_getaffinity),
		KILL_IF(SYS_perf_event_open), KILL_IF(SYS_ftruncate), KILL_IF(SYS_fallocate),
		KILL_IF(SYS_pwritev), KILL_IF(SYS_openat), KILL_IF(SYS_fstat),
		KILL_IF(SYS_newfstatat), KILL_IF(SYS_close), KILL_IF(SYS_sigaltstack),
		KILL_IF(SYS_membarrier), KILL_IF(SYS_munmap),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	/* "lenient": kills only on ptrace, which the shim never makes. */
	struct sock_filter lenient[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		KILL_IF(SYS_ptrace),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	/* "exec": kills only on what neither ld.so nor this program make (but
	 * the shim's start would), then execs "prog run N". */
	struct sock_filter for_exec[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		KILL_IF(SYS_ftruncate), KILL_IF(SYS_fallocate), KILL_IF(SYS_pwritev),
		KILL_IF(SYS_sched_getaffinity), KILL_IF(SYS_membarrier),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	/* "refused": the kill filter with an instruction after its last
	 * return, which the kernel refuses (EINVAL); the program goes on. */
	struct sock_filter bad[sizeof(f) / sizeof(f[0]) + 1];
	int use_refused = argc > 3 && !strcmp(argv[3], "refused");
	int use_lenient = argc > 3 && !strcmp(argv[3], "lenient");
	/* "exec_env": the same with environ = {LD_PRELOAD=<ours>, CS_MARK=1,
	 * argv[4]...} (LD_PRELOAD twice: ld.so reads the last, getenv the first). */
	int use_env = argc > 3 && !strcmp(argv[3], "exec_env");
	/* "exec_thread": the exec made by a thread with a 128 KiB stack, with
	 * LD_PRELOAD and 20,000 other variables (160 KB of pointers), no
	 * CACHESHIM_* (the new image's shim is then not profiling, and its
	 * start does not meet the filter). */
	int use_thread = argc > 3 && !strcmp(argv[3], "exec_thread");
	int use_exec = use_env || use_thread || (argc > 3 && !strcmp(argv[3], "exec"));
	extern char **environ;
	char *envs[16] = {NULL};
	struct sock_fprog prog = {use_lenient ? sizeof(lenient) / sizeof(lenient[0])
				  : use_exec  ? sizeof(for_exec) / sizeof(for_exec[0])
				  : use_refused ? sizeof(bad) / sizeof(bad[0])
					      : sizeof(f) / sizeof(f[0]),
				  use_lenient ? lenient : use_exec ? for_exec : use_refused ? bad : f};
	pthread_t th[2];
	long s = 0;
	char out[64];
	int len;

	n = atoi(argv[2]);
	s += call_n(n); /* its call site known before the filter */
	if (!strcmp(argv[1], "run")) {
		const char *pre = getenv("LD_PRELOAD");

		printf("run %ld\npreload %s\n", s, pre ? pre : "(none)");
		for (char **e = environ; *e; e++)
			if (!strncmp(*e, "LD_PRELOAD=", 11) || !strncmp(*e, "CS_MARK=", 8))
				printf("env %s\n", *e);
		return 0;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 2;
	memcpy(bad, f, sizeof(f));
	bad[sizeof(f) / sizeof(f[0])] =
		(struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	if ((!strcmp(argv[1], "prctl") ? prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)
				       : syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) !=
	    0) {
		if (!use_refused)
			return 3;
	} else if (use_refused) {
		return 6;
	}
	if (use_env) {
		static char first[4096];

		snprintf(first, sizeof(first), "LD_PRELOAD=%s", getenv("LD_PRELOAD"));
		envs[0] = first;
		envs[1] = "CS_MARK=1";
		for (int i = 4; i < argc && i < 15; i++)
			envs[i - 2] = argv[i];
		environ = envs;
	}
	if (use_thread) {
		enum { MORE = 20000 };
		static char vars[MORE][16];
		char **e = calloc(MORE + 64, sizeof(*e));
		size_t k = 0;
		pthread_attr_t at;

		for (char **p = environ; *p && k < 63; p++)
			if (!strncmp(*p, "LD_PRELOAD=", 11))
				e[k++] = *p;
		for (int i = 0; i < MORE; i++) {
			snprintf(vars[i], sizeof(vars[i]), "V%d=1", i);
			e[k++] = vars[i];
		}
		environ = e;
		pthread_attr_init(&at);
		pthread_attr_setstacksize(&at, 128 << 10);
		if (pthread_create(&th[0], &at, exec_self, argv[2]))
			return 4;
		pthread_join(th[0], NULL);
		return 5;
	}
	if (use_exec) {
		execl("/proc/self/exe", "prog", "run", argv[2], (char *)0);
		return 5;
	}
	s += call_n(2 * n); /* a call site known already: measured */
	s += t_leaf(n); /* a new call site */
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, worker, NULL))
			return 4;
	for (int i = 0; i < 2; i++) {
		void *r;

		pthread_join(th[i], &r);
		s += (long)r;
	}
	len = snprintf(out, sizeof(out), "sum %ld\n", s);
	write(1, out, len);
	return 0;
}
C
cc=${CC:-cc}
$cc -O1 -shared -fPIC -o libt.so t.c
$cc -O1 -o prog prog.c -L. -lt -Wl,-rpath,"$T" -pthread

plain_run plain ./prog prctl $N
expect_status plain 0
for how in prctl syscall; do
	for events in tsc tsc,perf::PAGE-FAULTS; do
		name=${how}_${events%%,*}${events#tsc}
		name=${name//[:-]/_}
		shim_run "$name" "$events" t_leaf ./prog $how $N
		expect_status "$name" 0
		same_output plain "$name"
		report_csv "$name"
		want_count "$name" "function=t_leaf,event=tsc" calls $((3 * N))
		"$CS_CMD" report "$T/$name.csr" >"$T/$name.txt" 2>&1 ||
			{ show "$T/$name.txt"; fail "report of $name refused"; }
		grep -qx "calls not recorded (a seccomp filter refused the shim's system calls): $((2 * N + 1))" \
			"$T/$name.txt" ||
			{ show "$T/$name.txt"; fail "$name: want $((2 * N + 1)) calls not recorded"; }
		! grep -q incomplete "$T/$name.txt" || { show "$T/$name.txt"; fail "$name: incomplete"; }
		echo "$how, $events: exit 0, $((3 * N)) calls measured, $((2 * N + 1)) not recorded"
	done
	# A filter that lets every system call of the shim's through
	# changes nothing: every call measured.
	shim_run ${how}_lenient tsc t_leaf ./prog $how $N lenient
	expect_status ${how}_lenient 0
	same_output plain ${how}_lenient
	report_csv ${how}_lenient
	want_count ${how}_lenient "function=t_leaf,event=tsc" calls $((5 * N + 1))
	echo "$how, a filter the shim's calls pass: all $((5 * N + 1)) calls measured"
	# A filter the kernel refuses (EINVAL) is no filter: the shim went
	# into its no-system-call mode all the same (2N + 1 calls not
	# recorded), and now goes on as before, saying so once.
	status=0
	CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=t_leaf CACHESHIM_OUTPUT=$T/${how}_refused.csr \
		LD_PRELOAD=$CS_SHIM ./prog $how $N refused >"$T/${how}_refused.out" \
		2>"$T/${how}_refused.err" || status=$?
	expect_status ${how}_refused 0
	same_output plain ${how}_refused
	report_csv ${how}_refused
	want_count ${how}_refused "function=t_leaf,event=tsc" calls $((5 * N + 1))
	grep -q "^cacheshim: the kernel did not install that seccomp filter (errno 22)" \
		"$T/${how}_refused.err" || { show "$T/${how}_refused.err"; fail "$how: no word of the refused filter"; }
	echo "$how, a filter the kernel refuses: all $((5 * N + 1)) calls measured"
done

# A program exec'd under the filter: its shim would start under it and
# be killed making its report file (status 159, as found by a review
# helper).  The exec wrappers leave the shim out of the new image's
# LD_PRELOAD: it runs as without the shim, and writes no report.
plain_run plain_exec ./prog prctl $N exec
expect_status plain_exec 0
shim_run exec tsc t_leaf ./prog prctl $N exec
expect_status exec 0
same_output plain_exec exec
[ ! -e "$T/exec.csr.1" ] || fail "the exec'd image made a report file under the filter"
report_csv exec
want_count exec "function=t_leaf,event=tsc" calls $N
echo "exec under the filter: the new image runs without the shim; the first image's $N calls counted"

# With another library preloaded too, only the shim leaves LD_PRELOAD.
status=0
CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=t_leaf CACHESHIM_OUTPUT=$T/exec2.csr \
	LD_PRELOAD="$CS_SHIM $T/libt.so" ./prog prctl $N exec >"$T/exec2.out" 2>"$T/exec2.err" ||
	status=$?
expect_status exec2 0
grep -qx "preload $T/libt.so" "$T/exec2.out" ||
	{ show "$T/exec2.out"; fail "LD_PRELOAD of the exec'd image is not the other library alone"; }
echo "exec under the filter with another preload: that one stays"

# Several LD_PRELOAD entries (ld.so reads the last, getenv the first):
# each loses the shim on its own, the others and the order stay.  Before,
# all pointed at one buffer sized for the first: the first read as the
# last, and a longer last one overflowed it (SIGSEGV).  One without the
# shim, even empty, is passed as it is.
L=$T/libt.so
shim_run exec_env tsc t_leaf ./prog prctl $N exec_env "LD_PRELOAD=::$L  $L:" \
	"LD_PRELOAD=" "LD_PRELOAD=$L $CS_SHIM:$L:libcacheshim.so:$L:$L:$L:$L"
expect_status exec_env 0
printf 'run %s\npreload \nenv LD_PRELOAD=\nenv CS_MARK=1\nenv LD_PRELOAD=::%s  %s:\nenv LD_PRELOAD=\nenv LD_PRELOAD=%s\n' \
	"$(sed -n 's/^run //p' "$T/plain_exec.out")" "$L" "$L" "$L:$L:$L:$L:$L:$L" >"$T/exec_env.want"
cmp -s "$T/exec_env.want" "$T/exec_env.out" ||
	{ diff -u "$T/exec_env.want" "$T/exec_env.out" >&2 || true; fail "the exec'd image's LD_PRELOAD entries"; }
echo "exec under the filter, LD_PRELOAD three times: each loses the shim alone"

# A big environment exec'd by a thread with a small stack: the copy of
# envp (20,000 pointers, 160 KB) was made on its 128 KiB stack: SIGSEGV
# (139) where the program ran without the shim.  Now a copy that does not
# fit is not made, and the exec is as before the copy existed: the new
# image starts the shim (here one not profiling, which the filter spares).
plain_run plain_thread ./prog prctl $N exec_thread
expect_status plain_thread 0
shim_run exec_thread tsc t_leaf ./prog prctl $N exec_thread
expect_status exec_thread 0
[ "$(head -1 "$T/exec_thread.out")" = "$(head -1 "$T/plain_thread.out")" ] ||
	{ show "$T/exec_thread.out"; fail "the thread's exec did not run the program"; }
echo "exec by a thread with a small stack and a big environment: as without the shim"
