/* SPDX-License-Identifier: MIT */
/* Events: libpfm4 encodings and a start-up probe (once, in the
 * constructor), and the per-thread perf_event group (at a thread's first
 * call).  Failures here are logged once and the event is left out; the
 * program always runs on. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include "common/presets.h"
#include "common/swevents.h"
#include "shim/internal.h"

/* libpfm4, loaded only when an event needs it: its ~40,000 relocations
 * and pfm_initialize cost milliseconds at every start, a large part of a
 * short program's run under `tsc` alone. */
static struct {
	int (*initialize)(void);
	const char *(*strerror)(int code);
	int (*encode)(const char *str, int dfl_plm, pfm_os_t os, void *arg);
	int (*pmu_info)(pfm_pmu_t pmu, pfm_pmu_info_t *info);
} pfm;

/* Loads libpfm4 and initializes it.  Returns PFM_SUCCESS or a libpfm4
 * error (logged). */
static int pfm_load(void)
{
	void *h = dlopen("libpfm.so.4", RTLD_NOW | RTLD_LOCAL);
	int ret;

	if (h) {
		pfm.initialize = (int (*)(void))dlsym(h, "pfm_initialize");
		pfm.strerror = (const char *(*)(int))dlsym(h, "pfm_strerror");
		pfm.encode = (int (*)(const char *, int, pfm_os_t, void *))dlsym(
			h, "pfm_get_os_event_encoding");
		pfm.pmu_info = (int (*)(pfm_pmu_t, pfm_pmu_info_t *))dlsym(h, "pfm_get_pmu_info");
	}
	if (!h || !pfm.initialize || !pfm.strerror || !pfm.encode || !pfm.pmu_info) {
		cs_log("libpfm4 (libpfm.so.4) cannot be loaded: %s; only tsc and perf's "
		       "software events (perf::PAGE-FAULTS, ...) are available",
		       h ? "symbols missing" : dlerror());
		return PFM_ERR_NOINIT;
	}
	ret = pfm.initialize();
	if (ret != PFM_SUCCESS)
		cs_log("libpfm4 initialization failed: %s; only tsc and perf's software "
		       "events (perf::PAGE-FAULTS, ...) are available",
		       pfm.strerror(ret));
	return ret;
}

/* Whether perf_event_open may be called at all.  A seccomp filter may kill
 * the process (or raise SIGSYS) instead of failing the call: then the
 * program would die of our probe.  So under a filter, a child made with a
 * raw clone (no fork handlers run) tries a software event first; if it
 * does not come back with a result, perf events are not used. */
static int perf_allowed(void)
{
	static int done, allowed;
	struct perf_event_attr a;
	long pid, r;
	int st = 0;

	if (done)
		return allowed;
	done = 1;
	allowed = 1;
	/* 2: a seccomp filter (systemd's SystemCallFilter=, containers). */
	if (cs_proc_status("Seccomp") != 2)
		return allowed;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.exclude_kernel = 1;
	/* No exit signal: the program gets no SIGCHLD, and an ignored
	 * SIGCHLD cannot reap the child before we look at it. */
	pid = syscall(SYS_clone, 0, 0, 0, 0, 0);
	if (pid == 0) {
		syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		syscall(SYS_exit_group, 0);
	}
	if (pid < 0)
		return allowed; /* cannot tell: as without a filter */
	while ((r = syscall(SYS_wait4, pid, &st, __WALL, 0)) < 0 && errno == EINTR)
		;
	if (r == pid && !WIFEXITED(st)) {
		allowed = 0;
		cs_log("a seccomp filter kills perf_event_open in this process; "
		       "measuring tsc only");
	}
	return allowed;
}

static int perf_open(struct perf_event_attr *attr, int group_fd)
{
	if (!perf_allowed()) {
		errno = EPERM;
		return -1;
	}
	/* A counter without a number free up high is not opened (EMFILE). */
	return cs_fd_high(
		(int)syscall(SYS_perf_event_open, attr, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC), 1);
}

static void fill_attr(const struct cs_event_enc *e, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = e->perf_type;
	a->config = e->config;
	a->config1 = e->config1;
	a->config2 = e->config2;
	a->exclude_user = (unsigned)e->exclude_user;
	a->exclude_kernel = (unsigned)e->exclude_kernel;
	a->exclude_hv = (unsigned)e->exclude_hv;
	a->read_format =
		PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
}

static int paranoid_level(void)
{
	char buf[16] = "";
	int fd = open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -100;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -100;
	buf[n] = '\0';
	return atoi(buf);
}

/* 1 when the kernel's NMI watchdog is on (it holds a counter on every
 * CPU: common/presets.h), else 0. */
static int nmi_watchdog_on(void)
{
	char c = '0';
	int fd = open("/proc/sys/kernel/nmi_watchdog", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (read(fd, &c, 1) != 1)
		c = '0';
	close(fd);
	return c != '0';
}

/* One line explaining why perf_event_open failed with err for name. */
static void explain_open_failure(const char *name, const struct cs_event_enc *e, int err)
{
	int hw = e->perf_type == PERF_TYPE_HARDWARE || e->perf_type == PERF_TYPE_HW_CACHE ||
		 e->perf_type == PERF_TYPE_RAW || e->perf_type >= PERF_TYPE_MAX;

	if (!perf_allowed())
		return; /* said once already */
	if (hw && (err == ENOENT || err == EOPNOTSUPP || err == ENODEV))
		cs_log("event '%s' cannot be counted: no hardware PMU visible "
		       "(virtual machine?); continuing without it",
		       name);
	else if ((err == EACCES || err == EPERM) && cs_proc_status("Seccomp") == 2)
		cs_log("event '%s' denied (a seccomp filter, or kernel.perf_event_paranoid=%d); "
		       "continuing without it",
		       name, paranoid_level());
	else if (err == EACCES || err == EPERM)
		cs_log("event '%s' denied by kernel.perf_event_paranoid=%d "
		       "(sysctl -w kernel.perf_event_paranoid=1 or lower allows it); "
		       "continuing without it",
		       name, paranoid_level());
	else
		cs_log("event '%s' cannot be opened: %s; continuing without it", name,
		       strerror(err));
}

/* A LIBPFM_ variable is set: libpfm4 encodes every event (read once, by
 * cs_events_setup). */
static int libpfm_vars;

/* Whether name is one of perf's software events, encoded into e without
 * libpfm4 (common/swevents.c), as libpfm4 encodes it at PFM_PLM3. */
static int software(const char *name, const char *pmu, struct cs_event_enc *e)
{
	uint64_t config;

	if (pmu || libpfm_vars || !cs_sw_event_config(name, &config))
		return 0;
	e->kind = CS_EVENT_PERF;
	e->perf_type = PERF_TYPE_SOFTWARE;
	e->config = config;
	e->config1 = 0;
	e->config2 = 0;
	e->exclude_user = 0;
	e->exclude_kernel = 1;
	e->exclude_hv = 1;
	return 1;
}

/* Encodes name into e: a software event without libpfm4, else with
 * libpfm4 when pfm_ok (loaded), for PMU pmu when not NULL (an event of a
 * preset: "pmu::name", so that it is the detected PMU's event even on a
 * hybrid CPU).  Returns PFM_SUCCESS or libpfm4's error (PFM_ERR_NOINIT
 * without libpfm4), saying nothing. */
static int encode_quiet(const char *name, const char *pmu, struct cs_event_enc *e, int pfm_ok)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	char full[CS_EVENT_NAME_MAX + 64];
	int ret;

	if (software(name, pmu, e))
		return PFM_SUCCESS;
	if (!pfm_ok)
		return PFM_ERR_NOINIT;
	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	snprintf(full, sizeof(full), "%s%s%s", pmu ? pmu : "", pmu ? "::" : "", name);
	/* Count user space only unless the event string says otherwise. */
	ret = pfm.encode(full, PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (ret != PFM_SUCCESS)
		return ret;
	e->kind = CS_EVENT_PERF;
	e->perf_type = attr.type;
	e->config = attr.config;
	e->config1 = attr.config1;
	e->config2 = attr.config2;
	e->exclude_user = attr.exclude_user;
	e->exclude_kernel = attr.exclude_kernel;
	e->exclude_hv = attr.exclude_hv;
	return PFM_SUCCESS;
}

/* encode_quiet, saying why an event libpfm4 had to encode was not.
 * Returns 0 or -EINVAL (without libpfm4, that was said when it failed to
 * load). */
static int encode(const char *name, const char *pmu, struct cs_event_enc *e, int pfm_ok)
{
	int ret = encode_quiet(name, pmu, e, pfm_ok);

	if (ret == PFM_SUCCESS)
		return 0;
	if (pfm_ok)
		cs_log("event '%s': %s (see `cacheshim list`); continuing without it", name,
		       pfm.strerror(ret));
	return -EINVAL;
}

/* Opens e alone in this thread to see whether it counts here at all. */
static int probe(const char *name, const struct cs_event_enc *e, int quiet_fail)
{
	struct perf_event_attr a;
	int fd;

	fill_attr(e, &a);
	fd = perf_open(&a, -1);
	if (fd < 0) {
		if (!quiet_fail)
			explain_open_failure(name, e, errno);
		return -errno;
	}
	close(fd);
	return 0;
}

/* Returns 0 when a hardware cycles counter opens (a PMU is visible), else
 * the errno of the attempt.  Probed once. */
static int pmu_error(void)
{
	static int done, err;
	struct cs_event_enc e = {.kind = CS_EVENT_PERF,
				 .perf_type = PERF_TYPE_HARDWARE,
				 .config = PERF_COUNT_HW_CPU_CYCLES,
				 .exclude_kernel = 1,
				 .exclude_hv = 1};

	if (!done) {
		err = -probe("cycles", &e, 1);
		done = 1;
	}
	return err;
}

/* Appends ",name" to list ("name" when it is empty). */
static void append(char *list, size_t len, const char *name)
{
	size_t used = strlen(list);

	snprintf(list + used, len - used, "%s%s", used ? "," : "", name);
}

/* The events measured when CACHESHIM_EVENTS names none: tsc, page faults
 * where they open here, and cycles and instructions where a PMU counts.
 * The line says what is measured and why no more: under a seccomp filter
 * that kills perf_event_open tsc alone, and perf_allowed said why. */
static void choose_defaults(struct cs_settings *s)
{
	static const char *const hw[] = {"perf::CYCLES", "perf::INSTRUCTIONS"};
	struct cs_event_enc pf;
	char line[256] = "tsc", why[160] = "";
	int err = perf_allowed() ? pmu_error() : 0;
	unsigned n = 0, i;

	strcpy(s->events[n++], "tsc");
	if (!perf_allowed()) {
		s->nevents = n;
		return;
	}
	/* Probed unless a LIBPFM_ variable has libpfm4 encode it (later,
	 * saying so if it fails). */
	if (!software("perf::PAGE-FAULTS", NULL, &pf) || !probe("perf::PAGE-FAULTS", &pf, 1))
		strcpy(s->events[n++], "perf::PAGE-FAULTS");
	for (i = 0; !err && i < 2; i++)
		strcpy(s->events[n++], hw[i]);
	for (i = 1; i < n; i++)
		append(line, sizeof(line), s->events[i]);
	if ((err == EACCES || err == EPERM) && cs_proc_status("Seccomp") == 2)
		snprintf(why, sizeof(why),
			 " (counters denied: a seccomp filter, or kernel.perf_event_paranoid=%d)",
			 paranoid_level());
	else if (err == EACCES || err == EPERM)
		snprintf(why, sizeof(why), " (counters denied by kernel.perf_event_paranoid=%d)",
			 paranoid_level());
	else if (err)
		snprintf(why, sizeof(why), " (no hardware PMU visible: virtual machine?)");
	s->nevents = n;
	/* Informational when the variable is unset; when it named no usable
	 * event, what is measured instead is said even when quiet. */
	if (!s->quiet || (getenv("CACHESHIM_EVENTS") && *getenv("CACHESHIM_EVENTS")))
		cs_log_note("CACHESHIM_EVENTS not set or names no event; measuring %s%s", line,
			    why);
}

/* The core PMU libpfm4 detected (or was forced to): the first present one
 * that has a preset recipe, else the first present one. */
static struct {
	int known; /* info is valid */
	pfm_pmu_info_t info;
	const struct cs_preset_family *family; /* its recipe, or NULL */
	unsigned ncore; /* core PMUs present: more than one on hybrid CPUs */
} detected;

static void detect_pmu(void)
{
	pfm_pmu_info_t pi;
	int i;

	memset(&detected, 0, sizeof(detected));
	/* A libpfm4 newer than its headers here numbers more PMUs (the
	 * hybrid Intel ones, for instance). */
	for (i = PFM_PMU_NONE; i < PFM_PMU_MAX + 512; i++) {
		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (pfm.pmu_info((pfm_pmu_t)i, &pi) != PFM_SUCCESS || !pi.is_present ||
		    pi.type != PFM_PMU_TYPE_CORE)
			continue;
		detected.ncore++;
		if (!detected.family && cs_preset_family_of(pi.name)) {
			detected.family = cs_preset_family_of(pi.name);
			detected.info = pi;
			detected.known = 1;
		} else if (!detected.known) {
			detected.info = pi;
			detected.known = 1;
		}
	}
}

/* The events after expanding the presets: names and the PMU to encode
 * each one for. */
struct expansion {
	char name[CS_MAX_EVENTS][CS_EVENT_NAME_MAX];
	const char *pmu[CS_MAX_EVENTS];
	unsigned n;
	int full; /* an event was left out: logged */
};

/* Whether two event names are one of perf's software events under two of
 * its names (perf::FAULTS and perf::PAGE-FAULTS): counted once, as an
 * event named twice is.  A preset's fallback adds perf::PAGE-FAULTS to a
 * list that may have perf::page-faults already. */
static int same_event(const char *a, const char *b)
{
	struct cs_event_enc ea, eb;

	return software(a, NULL, &ea) && software(b, NULL, &eb) && ea.config == eb.config;
}

/* Adds name to x unless it is there.  Returns 1 if it is there now, 0 if
 * it was left out (x full: logged). */
static int add_event(struct expansion *x, const char *name, const char *pmu_name)
{
	unsigned i;

	for (i = 0; i < x->n; i++)
		if (!strcmp(x->name[i], name) ||
		    (!x->pmu[i] && !pmu_name && same_event(x->name[i], name)))
			return 1;
	if (x->n == CS_MAX_EVENTS) {
		if (!x->full)
			cs_log("CACHESHIM_EVENTS: more than %u events once the presets are "
			       "expanded; '%s' and later ignored",
			       CS_MAX_EVENTS, name);
		x->full = 1;
		return 0;
	}
	snprintf(x->name[x->n], CS_EVENT_NAME_MAX, "%s", name);
	x->pmu[x->n++] = pmu_name;
	return 1;
}

/* Replaces each preset of s->events by the events of the detected PMU's
 * recipe, in place and without duplicates; where no hardware counter can
 * count (no PMU, denied, no recipe), by tsc and page faults (tsc alone
 * when libpfm4 has no page-fault event), saying why in one line.
 * pmus[i] receives the PMU prefix to encode event i with. */
static void expand_presets(struct cs_settings *s, int pfm_ok, const char **pmus)
{
	static struct expansion x; /* big: not on the constructor's stack */
	char fell[128] = "", used[128] = "";
	const char *instead = "tsc only";
	unsigned i, j, bits, nused = 0, before;
	int fallback = 0, err = 0;

	memset(&x, 0, sizeof(x));
	if (pfm_ok)
		detect_pmu();
	for (i = 0; i < s->nevents; i++) {
		bits = cs_preset_bits(s->events[i]);
		if (!bits) {
			add_event(&x, s->events[i], NULL);
			continue;
		}
		/* (No counter to count: libpfm4 was not loaded for it.) */
		err = pmu_error();
		if (!pfm_ok || err || !detected.family) {
			append(fell, sizeof(fell), s->events[i]);
			if (!fallback) {
				const char *faults = "perf::PAGE-FAULTS";
				struct cs_event_enc pf;
				unsigned k;

				/* Under the user's name for it where the list
				 * has one (perf::FAULTS): the report's rows and
				 * a filter on that name find it. */
				for (k = s->nevents; k-- > 0;)
					if (!cs_preset_bits(s->events[k]) &&
					    same_event(s->events[k], "perf::PAGE-FAULTS"))
						faults = s->events[k]; /* the first */

				add_event(&x, "tsc", NULL);
				/* (Said as measured only if it encodes (under
				 * LIBPFM_FORCE_PMU libpfm4 has no perf:: events),
				 * opens here (a filter or perf_event_paranoid may
				 * deny it with the hardware counters), and fits the
				 * list.) */
				if (perf_allowed() &&
				    encode_quiet(faults, NULL, &pf, pfm_ok) == PFM_SUCCESS &&
				    !probe(faults, &pf, 1) && add_event(&x, faults, NULL))
					instead = "tsc and page faults only";
			}
			fallback = 1;
			continue;
		}
		before = x.n;
		for (j = 0; j < detected.family->nevents; j++)
			if (detected.family->events[j].presets & bits)
				add_event(&x, detected.family->events[j].event, detected.info.name);
		if (x.n == before && !x.full)
			cs_log("%s: the %s recipe has no such events (`cacheshim list %s` shows "
			       "it); ignored",
			       s->events[i], detected.family->name, s->events[i]);
		append(used, sizeof(used), s->events[i]);
		nused += x.n - before;
	}
	if (fallback) {
		if (!perf_allowed())
			; /* perf_allowed said why only tsc is measured */
		else if (!pfm_ok && !err)
			cs_log("%s: libpfm4 could not be initialized; measuring %s", fell, instead);
		else if ((err == EACCES || err == EPERM) && cs_proc_status("Seccomp") == 2)
			cs_log("%s: hardware counters denied (a seccomp filter, or "
			       "kernel.perf_event_paranoid=%d); measuring %s",
			       fell, paranoid_level(), instead);
		else if (err == EACCES || err == EPERM)
			cs_log("%s: hardware counters denied by kernel.perf_event_paranoid=%d "
			       "(sysctl -w kernel.perf_event_paranoid=1 or lower allows them); "
			       "measuring %s",
			       fell, paranoid_level(), instead);
		else if (err)
			cs_log("%s: no hardware PMU visible — virtual machine? measuring %s", fell,
			       instead);
		else if (detected.known)
			cs_log("%s: no recipe for this CPU's PMU '%s' (`cacheshim list @cache "
			       "--pmu NAME` shows the models that have one); measuring %s",
			       fell, detected.info.name, instead);
		else
			cs_log("%s: libpfm4 does not know this CPU; measuring %s", fell, instead);
	}
	if (used[0] && !s->quiet)
		cs_log("%s: %u events of the %s recipe for %s (`cacheshim list @PRESET` shows "
		       "them)",
		       used, nused, detected.family->name, detected.info.name);
	/* Hybrid CPUs: one group can only count on one core type. */
	if (used[0] && detected.ncore > 1 && !s->quiet)
		cs_log("hybrid CPU: %s counts on %s cores only; calls while a thread runs on "
		       "another core type are not counted and show as dropped",
		       used, detected.info.name);
	for (i = 0; i < x.n; i++) {
		memcpy(s->events[i], x.name[i], CS_EVENT_NAME_MAX);
		pmus[i] = x.pmu[i];
	}
	s->nevents = x.n;
}

/* True when perf event e takes a PMU counter. */
static int hardware(const struct cs_event_enc *e)
{
	return e->kind == CS_EVENT_PERF &&
	       (e->perf_type == PERF_TYPE_HARDWARE || e->perf_type == PERF_TYPE_HW_CACHE ||
		e->perf_type == PERF_TYPE_RAW || e->perf_type >= PERF_TYPE_MAX);
}

/* Before the run: a group with more events that need a general-purpose
 * counter than the PMU has cannot be scheduled.  Says so and suggests
 * runs that fit, each keeping the inputs of a formula together. */
static void check_budget(const struct cs_file_header *hdr, unsigned n)
{
	const struct cs_preset_family *f = detected.family;
	const char *names[CS_MAX_EVENTS];
	char other[160] = "", line[440]; /* cs_log's line holds 512 bytes */
	uint32_t runs[8], low = 0;
	unsigned i, r, k, ngp = 0, nlow = 0, limit, nruns, need, all;
	unsigned low_limit = f ? f->low_counters : 0;
	int wd = 0, held = 0;

	all = limit = detected.known ? cs_preset_counters(f, detected.info.num_cntrs) : 0;
	if (!limit)
		return;
	wd = nmi_watchdog_on();
	limit = cs_preset_watchdog_counters(limit, detected.info.num_fixed_cntrs, wd);
	held = limit < all;
	for (i = 0; i < n; i++) {
		const struct cs_event_enc *e = &cs_g.enc[i];
		int fixed = detected.info.num_fixed_cntrs > 0 &&
			    cs_preset_fixed_counter(e->perf_type, e->config);

		if (hardware(e) && fixed &&
		    !cs_preset_fixed_counter_free(e->perf_type, e->config, wd))
			held = 1; /* cycles, on a general-purpose counter */
		if (hardware(e) &&
		    !(fixed && cs_preset_fixed_counter_free(e->perf_type, e->config, wd))) {
			if (cs_preset_low_counter(f, e->perf_type, e->config)) {
				low |= 1u << ngp;
				nlow++;
			}
			names[ngp++] = hdr->events[i].name;
		} else if (e->kind == CS_EVENT_TSC || e->kind == CS_EVENT_PERF) {
			append(other, sizeof(other), hdr->events[i].name);
		}
	}
	if (ngp <= limit && nlow <= low_limit)
		return;
	nruns = cs_preset_split(f, names, ngp, limit, low, low_limit, runs, 8);
	need = (ngp + limit - 1) / limit;
	if (nlow > low_limit && (nlow + low_limit - 1) / low_limit > need)
		need = (nlow + low_limit - 1) / low_limit;
	if (held)
		cs_log("the NMI watchdog (kernel.nmi_watchdog=1) holds %s on every CPU; "
		       "sysctl -w kernel.nmi_watchdog=0 frees it",
		       limit < all
			       ? "one of these general-purpose counters"
			       : "the fixed cycles counter, so cycles need a general-purpose one");
	if (ngp > limit)
		cs_log("%u events need a general-purpose counter but %s has %u: the kernel "
		       "cannot schedule them as one group, so no call would be measured; split "
		       "them over %u runs and merge the files with `cacheshim report`%s",
		       ngp, detected.info.name, limit, nruns ? nruns : need, nruns ? ":" : "");
	else
		cs_log("%u events count on the first %u general-purpose counters of %s only: "
		       "the kernel cannot schedule them as one group, so no call would be "
		       "measured; split them over %u runs and merge the files with `cacheshim "
		       "report`%s",
		       nlow, low_limit, detected.info.name, nruns ? nruns : need, nruns ? ":" : "");
	for (r = 0; r < nruns; r++) {
		snprintf(line, sizeof(line), "%s", other);
		for (k = 0; k < ngp; k++)
			if (runs[r] & (1u << k))
				append(line, sizeof(line), names[k]);
		cs_log("  run %u: CACHESHIM_EVENTS=%s", r + 1, line);
	}
}

/* True when some event needs libpfm4: tsc and perf's software events
 * do not, nor a preset where no hardware counter opens (it falls back to
 * tsc and page faults: expand_presets). */
static int needs_pfm(const struct cs_settings *s)
{
	struct cs_event_enc e;
	unsigned i;

	for (i = 0; i < s->nevents; i++) {
		if (!strcmp(s->events[i], "tsc") || software(s->events[i], NULL, &e))
			continue;
		if (cs_preset_bits(s->events[i]) && !libpfm_vars && pmu_error())
			continue;
		return 1;
	}
	return 0;
}

int cs_events_setup(struct cs_settings *s, struct cs_file_header *hdr)
{
	const char *pmus[CS_MAX_EVENTS] = {NULL};
	unsigned i, n = 0;
	int ret = PFM_ERR_NOINIT;

	libpfm_vars = cs_libpfm_env();
	if (!s->nevents)
		choose_defaults(s);
	if (needs_pfm(s))
		ret = pfm_load();
	expand_presets(s, ret == PFM_SUCCESS, pmus);

	cs_g.tsc_index = -1;
	cs_g.nperf = 0;
	for (i = 0; i < s->nevents; i++) {
		struct cs_file_event *fe = &hdr->events[n];
		struct cs_event_enc *e = &cs_g.enc[n];

		memset(e, 0, sizeof(*e));
		snprintf(fe->name, sizeof(fe->name), "%s", s->events[i]);
		if (!strcmp(s->events[i], "tsc")) {
			e->kind = fe->kind = CS_EVENT_TSC;
			e->usable = 1;
			fe->flags = CS_EVENT_COUNTED;
			cs_g.tsc_index = (int)n;
		} else {
			fe->kind = CS_EVENT_PERF;
			if (!encode(s->events[i], pmus[i], e, ret == PFM_SUCCESS)) {
				fe->perf_type = e->perf_type;
				fe->perf_config = e->config;
				fe->perf_config1 = e->config1;
				fe->perf_config2 = e->config2;
				e->usable = probe(s->events[i], e, 0) == 0;
			}
			if (e->usable) {
				fe->flags = CS_EVENT_COUNTED;
				cs_g.perf_index[cs_g.nperf++] = (int)n;
			} else {
				fe->flags = CS_EVENT_FAILED;
			}
		}
		n++;
	}
	/* Something must be measured: with nothing usable, fall back to tsc. */
	if (!cs_g.nperf && cs_g.tsc_index < 0) {
		cs_log("no requested event can be counted; measuring tsc instead");
		/* All slots taken by failed events: tsc takes the last one. */
		if (n == CS_MAX_EVENTS)
			n--;
		memset(&hdr->events[n], 0, sizeof(hdr->events[n]));
		strcpy(hdr->events[n].name, "tsc");
		hdr->events[n].kind = CS_EVENT_TSC;
		hdr->events[n].flags = CS_EVENT_COUNTED;
		memset(&cs_g.enc[n], 0, sizeof(cs_g.enc[n]));
		cs_g.enc[n].kind = CS_EVENT_TSC;
		cs_g.enc[n].usable = 1;
		cs_g.tsc_index = (int)n++;
	}
	hdr->nevents = n;
	cs_g.nevents = n;
	if (ret == PFM_SUCCESS)
		check_budget(hdr, n);
	return (int)n;
}

static void unmap_pages(struct cs_thread *t)
{
	unsigned i;

	for (i = 0; i < CS_MAX_EVENTS; i++) {
		if (t->pages[i])
			munmap(t->pages[i], (size_t)getpagesize());
		t->pages[i] = NULL;
	}
	t->rdpmc = 0;
}

/* Maps each member's perf page; keeps them only if all allow rdpmc (never
 * on software events, nor without a PMU). */
static void map_pages(struct cs_thread *t)
{
	unsigned i;

	t->rdpmc = t->nperf > 0;
	for (i = 0; i < t->nperf && t->rdpmc; i++) {
		struct perf_event_mmap_page *pc =
			mmap(NULL, (size_t)getpagesize(), PROT_READ, MAP_SHARED, t->fds[i], 0);

		if (pc == MAP_FAILED) {
			t->rdpmc = 0;
			break;
		}
		t->pages[i] = pc;
		if (!pc->cap_user_rdpmc)
			t->rdpmc = 0;
	}
	if (!t->rdpmc)
		unmap_pages(t);
}

int cs_events_open_thread(struct cs_thread *t)
{
	struct perf_event_attr a;
	unsigned i;
	int fd;

	t->group_fd = -1;
	t->nperf = 0;
	for (i = 0; i < cs_g.nperf; i++) {
		unsigned ev = (unsigned)cs_g.perf_index[i];

		fill_attr(&cs_g.enc[ev], &a);
		fd = perf_open(&a, t->group_fd);
		if (fd < 0) {
			int err = errno;

			CS_LOG_ONCE("thread %u: event '%s' did not open (%s); "
				    "calls in such threads are not measured",
				    t->tid, cs_g.hdr->events[ev].name, strerror(err));
			cs_events_close_thread(t);
			return -err;
		}
		if (t->group_fd < 0)
			t->group_fd = fd;
		t->fds[t->nperf] = fd;
		t->perf_event[t->nperf++] = ev;
	}
	t->read_size = (unsigned)(3 + t->nperf) * 8;
	map_pages(t);
	return 0;
}

void cs_events_close_thread(struct cs_thread *t)
{
	unsigned i;

	unmap_pages(t);
	/* Not libc's close, a cancellation point: this runs in a thread's
	 * first wrapped call when a counter does not open. */
	for (i = 0; i < t->nperf; i++)
		cs_syscall6(SYS_close, t->fds[i], 0, 0, 0, 0, 0);
	t->nperf = 0;
	t->group_fd = -1;
}
