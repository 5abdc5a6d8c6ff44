/* SPDX-License-Identifier: MIT */
/* Events: libpfm4 encodings and a start-up probe (once, in the
 * constructor), and the per-thread perf_event group (at a thread's first
 * call).  Failures here are logged once and the event is left out; the
 * program always runs on. */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim/internal.h"

static int perf_open(struct perf_event_attr *attr, int group_fd)
{
	return (int)syscall(SYS_perf_event_open, attr, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
}

static void fill_attr(const struct cs_event_enc *e, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = e->perf_type;
	a->config = e->config;
	a->config1 = e->config1;
	a->config2 = e->config2;
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

/* One line explaining why perf_event_open failed with err for name. */
static void explain_open_failure(const char *name, const struct cs_event_enc *e, int err)
{
	int hw = e->perf_type == PERF_TYPE_HARDWARE || e->perf_type == PERF_TYPE_HW_CACHE ||
		 e->perf_type == PERF_TYPE_RAW || e->perf_type >= PERF_TYPE_MAX;

	if (hw && (err == ENOENT || err == EOPNOTSUPP || err == ENODEV))
		cs_log("event '%s' cannot be counted: no hardware PMU visible "
		       "(virtual machine?); continuing without it",
		       name);
	else if (err == EACCES || err == EPERM)
		cs_log("event '%s' denied by kernel.perf_event_paranoid=%d "
		       "(sysctl -w kernel.perf_event_paranoid=1 or lower allows it); "
		       "continuing without it",
		       name, paranoid_level());
	else
		cs_log("event '%s' cannot be opened: %s; continuing without it", name,
		       strerror(err));
}

/* Encodes name with libpfm4 into e.  Returns 0 or -EINVAL (logged). */
static int encode(const char *name, struct cs_event_enc *e)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	int ret;

	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	/* Count user space only unless the event string says otherwise. */
	ret = pfm_get_os_event_encoding(name, PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (ret != PFM_SUCCESS) {
		cs_log("event '%s': %s (see `cacheshim list`); continuing without it", name,
		       pfm_strerror(ret));
		return -EINVAL;
	}
	e->kind = CS_EVENT_PERF;
	e->perf_type = attr.type;
	e->config = attr.config;
	e->config1 = attr.config1;
	e->config2 = attr.config2;
	e->exclude_kernel = attr.exclude_kernel;
	e->exclude_hv = attr.exclude_hv;
	return 0;
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

/* True when a hardware cycles counter opens: a PMU is visible. */
static int have_pmu(void)
{
	struct cs_event_enc e = {.kind = CS_EVENT_PERF,
				 .perf_type = PERF_TYPE_HARDWARE,
				 .config = PERF_COUNT_HW_CPU_CYCLES,
				 .exclude_kernel = 1,
				 .exclude_hv = 1};

	return probe("cycles", &e, 1) == 0;
}

static void choose_defaults(struct cs_settings *s)
{
	static const char *const with_pmu[] = {"tsc", "perf::PAGE-FAULTS", "perf::CYCLES",
					       "perf::INSTRUCTIONS"};
	static const char *const no_pmu[] = {"tsc", "perf::PAGE-FAULTS"};
	int pmu = have_pmu();
	const char *const *list = pmu ? with_pmu : no_pmu;
	unsigned n = pmu ? 4 : 2, i;
	char line[256] = "";

	for (i = 0; i < n; i++) {
		strcpy(s->events[i], list[i]);
		if (i)
			strcat(line, ",");
		strcat(line, list[i]);
	}
	s->nevents = n;
	cs_log("CACHESHIM_EVENTS not set or names no event; measuring %s%s", line,
	       pmu ? "" : " (no hardware PMU visible: virtual machine?)");
}

int cs_events_setup(struct cs_settings *s, struct cs_file_header *hdr)
{
	unsigned i, n = 0;
	int ret;

	ret = pfm_initialize();
	if (ret != PFM_SUCCESS)
		cs_log("libpfm4 initialization failed: %s; only tsc is available",
		       pfm_strerror(ret));
	if (!s->nevents)
		choose_defaults(s);

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
			if (ret == PFM_SUCCESS && !encode(s->events[i], e)) {
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
	for (i = 0; i < t->nperf; i++)
		close(t->fds[i]);
	t->nperf = 0;
	t->group_fd = -1;
}
