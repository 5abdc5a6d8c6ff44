/* SPDX-License-Identifier: MIT */
/* The `make bench` driver: times calls of tiny library functions through the PLT. */
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/tsc.h"

/*
 * bench [-m MODE] [-n CALLS] [-k CHUNKS] [-w WARMUP] [-t THREADS] [-o FILE]
 *
 * Writes to FILE (default stdout) one line: nanoseconds per call, then how
 * many chunks it was taken from and how many were timed.  Each of THREADS
 * threads (default 1; -t runs them as new threads, else the main thread
 * works) makes WARMUP untimed calls (lazy binding, a tool's per-thread and
 * per-site set-up and the first touch of its data all happen there), waits
 * for the others, then times CHUNKS chunks of CALLS calls each.
 *
 * Other developers build and test on the same two CPUs, so a chunk's wall
 * time may include time the thread spent preempted.  A chunk during which
 * the thread was switched out involuntarily (getrusage RUSAGE_THREAD
 * ru_nivcsw grew) is left out; so, with several threads, is a chunk that
 * ended after another thread had finished (it ran with less contention).
 * The number is the median of the chunks left, or of all chunks if none
 * is left, divided by THREADS: the time per call of the whole process, so
 * that `-t 1` and `-t 2` give the throughput ratio.  CPU time would not
 * do: a tracer like ltrace does its work while the traced thread waits.
 *
 * Results go to a file because the peers (uftrace, ltrace, bpftrace) print
 * on the same terminal.  Modes:
 *   loop         bench_inc from one call site
 *   sites        bench_inc from 10,000 distinct call sites
 *   targets1     bench_f0 from 1,000 call sites
 *   targets1000  bench_f0 .. bench_f999, one call site each
 *   jumpstorm    bench_inc from one call site while a SIGALRM every 40 us
 *                siglongjmps out of wherever the program is (sometimes
 *                out of the shim's own recording of a call): what a
 *                program that leaves calls by siglongjmp costs
 *   pmu          prints 1 if a hardware cycles counter opens here, else 0
 *   bracket      prints the median TSC ticks a hand-written fenced rdtsc
 *                pair reads around a call of an empty function (CALLS
 *                readings): what the tightest possible bracket reads, to
 *                compare with cacheshim's calibration median
 */

enum mode { LOOP, SITES, TARGETS1, TARGETS1000, JUMPSTORM };

#define MAX_THREADS 16

static struct {
	enum mode mode;
	long calls, chunks, warmup;
	int threads, spawn;
	pthread_barrier_t start;
	int finished; /* threads done with their chunks */
} opt = {.mode = LOOP, .calls = 100000, .chunks = 30, .warmup = 100000, .threads = 1};

/* Per-thread samples: ns per call of each chunk, and whether it counts. */
struct samples {
	double *ns;
	char *clean;
	long x;
};

/* The calls counted per invocation of each mode's unit of work. */
static long unit_calls(void)
{
	switch (opt.mode) {
	case SITES:
		return BENCH_SITES;
	case TARGETS1:
	case TARGETS1000:
		return BENCH_TARGETS;
	default:
		return 1;
	}
}

/* noinline: the loop stays one call site whatever the optimizer does. */
static __attribute__((noinline)) long loop(long n, long x)
{
	long i;

	for (i = 0; i < n; i++)
		x = bench_inc(x);
	return x;
}

/* Per thread: with -t the timer's SIGALRM goes to any thread of the
 * process, often the main one waiting in pthread_join, and a shared buffer
 * made it jump onto a worker's stack (a crash at once). */
static __thread sigjmp_buf storm_env;
static __thread volatile sig_atomic_t in_storm; /* storm_env is live */

/* Jumps only into a storm() running on this thread: the timing code
 * around it, and other threads, stay. */
static void storm_alarm(int sig)
{
	(void)sig;
	if (in_storm)
		siglongjmp(storm_env, 1);
}

/* loop, with the SIGALRM storm's jumps landing back in it: n steps made,
 * a call jumped out of counted as a step not made. */
static __attribute__((noinline)) long storm(long n, long x)
{
	volatile long i = 0, acc = x;

	sigsetjmp(storm_env, 1);
	in_storm = 1;
	while (i < n) {
		acc = bench_inc(acc);
		i = i + 1;
	}
	in_storm = 0;
	return acc;
}

/* SIGALRM blocked (how = SIG_BLOCK) or not (SIG_UNBLOCK) on this thread:
 * with -t only the threads that storm take the storm's signals. */
static void storm_mask(int how)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(how, &set, NULL);
}

/* The storm for the whole run (chunks included). */
static void storm_start(void)
{
	struct itimerval every = {{0, 40}, {0, 40}};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = storm_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &every, NULL);
}

/* Makes about n calls (rounded down to whole units); returns a value
 * that depends on every call, so none can be left out. */
static long work(long n, long x)
{
	long units = n / unit_calls(), i;

	switch (opt.mode) {
	case LOOP:
		return loop(n, x);
	case SITES:
		for (i = 0; i < units; i++)
			x = bench_sites(x);
		return x;
	case TARGETS1:
		for (i = 0; i < units; i++)
			x = bench_targets_one(x);
		return x;
	case TARGETS1000:
		for (i = 0; i < units; i++)
			x = bench_targets_many(x);
		return x;
	case JUMPSTORM:
		return storm(n, x);
	}
	return x;
}

static volatile long sink;

/* noinline + an empty asm: a real call of a function with no body, as
 * around cacheshim's calibration target. */
static __attribute__((noinline)) void empty(void)
{
	__asm__ volatile("");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Median ticks of n fenced readings around empty(), or -1. */
static double bracket_median(long n)
{
	uint64_t *d = calloc((size_t)n, sizeof(*d)), t;
	double med;
	long i;

	if (!d)
		return -1;
	for (i = 0; i < n; i++) {
		t = tsc_begin();
		empty();
		d[i] = tsc_end() - t;
	}
	qsort(d, (size_t)n, sizeof(*d), cmp_u64);
	med = (double)d[n / 2];
	free(d);
	return med;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static long preemptions(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) < 0)
		return 0;
	return ru.ru_nivcsw;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void *thread_main(void *arg)
{
	struct samples *s = arg;
	long made = opt.calls / unit_calls() * unit_calls(), c;

	if (opt.mode == JUMPSTORM)
		storm_mask(SIG_UNBLOCK);
	s->x = work(opt.warmup, s->x);
	if (opt.threads > 1)
		pthread_barrier_wait(&opt.start);
	for (c = 0; c < opt.chunks; c++) {
		long p0 = preemptions();
		double t0 = now_ns();

		s->x = work(opt.calls, s->x);
		s->ns[c] = (now_ns() - t0) / (double)made;
		s->clean[c] =
			preemptions() == p0 && !__atomic_load_n(&opt.finished, __ATOMIC_RELAXED);
	}
	__atomic_fetch_add(&opt.finished, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* Runs the threads; returns ns per call of the process, or -1. */
static double run(long *used, long *total)
{
	struct samples s[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	long n = opt.chunks * opt.threads, k = 0, c;
	double *all = calloc((size_t)n, sizeof(*all)), med;
	int i, clean;

	if (!all || opt.calls < unit_calls())
		return -1;
	for (i = 0; i < opt.threads; i++) {
		s[i].ns = calloc((size_t)opt.chunks, sizeof(double));
		s[i].clean = calloc((size_t)opt.chunks, 1);
		s[i].x = i;
		if (!s[i].ns || !s[i].clean)
			return -1;
	}
	if (opt.threads > 1)
		pthread_barrier_init(&opt.start, NULL, (unsigned)opt.threads);
	if (!opt.spawn) {
		thread_main(&s[0]);
	} else {
		/* The workers unblock it (thread_main). */
		if (opt.mode == JUMPSTORM)
			storm_mask(SIG_BLOCK);
		for (i = 0; i < opt.threads; i++)
			if (pthread_create(&tid[i], NULL, thread_main, &s[i]) != 0)
				return -1;
		for (i = 0; i < opt.threads; i++)
			pthread_join(tid[i], NULL);
	}
	/* The clean chunks if there are any, else all of them. */
	for (clean = 1; clean >= 0 && !k; clean--)
		for (i = 0; i < opt.threads; i++)
			for (c = 0; c < opt.chunks; c++)
				if (!clean || s[i].clean[c])
					all[k++] = s[i].ns[c];
	for (i = 0; i < opt.threads; i++)
		sink += s[i].x;
	qsort(all, (size_t)k, sizeof(*all), cmp_double);
	med = k % 2 ? all[k / 2] : (all[k / 2 - 1] + all[k / 2]) / 2;
	free(all);
	*used = k;
	*total = n;
	return med / opt.threads;
}

/* 1 if a hardware cycles counter opens for this process (a PMU is visible). */
static int have_pmu(void)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static long number(const char *s, long min)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min) {
		fprintf(stderr, "bench: '%s' is not a number >= %ld\n", s, min);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	const char *out = NULL, *m = "loop";
	long used = 0, total = 0;
	double ns;
	FILE *f;
	int c;

	while ((c = getopt(argc, argv, "m:n:k:w:t:o:")) != -1) {
		switch (c) {
		case 'm':
			m = optarg;
			break;
		case 'n':
			opt.calls = number(optarg, 1);
			break;
		case 'k':
			opt.chunks = number(optarg, 1);
			break;
		case 'w':
			opt.warmup = number(optarg, 0);
			break;
		case 't':
			opt.threads = (int)number(optarg, 1);
			opt.spawn = 1;
			break;
		case 'o':
			out = optarg;
			break;
		default:
			fputs("usage: bench [-m loop|sites|targets1|targets1000|jumpstorm|pmu|bracket] [-n CALLS] "
			      "[-k CHUNKS] [-w WARMUP] [-t THREADS] [-o FILE]\n",
			      stderr);
			return 2;
		}
	}
	if (opt.threads > MAX_THREADS)
		opt.threads = MAX_THREADS;
	if (!strcmp(m, "pmu")) {
		printf("%d\n", have_pmu());
		return 0;
	} else if (!strcmp(m, "bracket")) {
		ns = bracket_median(opt.calls);
		total = used = 1;
		goto write;
	} else if (!strcmp(m, "loop")) {
		opt.mode = LOOP;
	} else if (!strcmp(m, "sites")) {
		opt.mode = SITES;
	} else if (!strcmp(m, "targets1")) {
		opt.mode = TARGETS1;
	} else if (!strcmp(m, "targets1000")) {
		opt.mode = TARGETS1000;
	} else if (!strcmp(m, "jumpstorm")) {
		opt.mode = JUMPSTORM;
		storm_start();
	} else {
		fprintf(stderr, "bench: unknown mode '%s'\n", m);
		return 2;
	}
	ns = run(&used, &total);
write:
	if (ns < 0) {
		fputs("bench: could not run\n", stderr);
		return 1;
	}
	f = out ? fopen(out, "w") : stdout;
	if (!f) {
		perror(out);
		return 1;
	}
	fprintf(f, "%.2f %ld %ld\n", ns, total, used);
	return fclose(f) ? 1 : 0;
}
