/* SPDX-License-Identifier: MIT */
/* cacheshim run: runs a program under the shim, then summarizes its files. */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/swevents.h"
#include "common/targetspec.h"
#include "report/internal.h"
#include "report/pfm.h"

/* Signals that end or steer a program (kill's default, a hang-up, the
 * user signals, alarms) are passed on to it, as timeout(1) does, so that
 * `kill <launcher>` does not leave the program running on its own; the
 * launcher then reports what it did when it exits. */
static const int forwarded[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM};
#define NFORWARDED (sizeof(forwarded) / sizeof(forwarded[0]))
static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
	int saved = errno;

	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
	errno = saved;
}

#ifndef CS_LIBDIR
#define CS_LIBDIR "/usr/local/lib"
#endif

/* The shim's default; see libcacheshim(7). */
#define DEFAULT_OUTPUT "cacheshim.out.%p"

/* Rows of the summary's tables by default: a glob over a whole program
 * ('*', rb_*) made one of thousands of rows (python3 under '*': 2,200). */
#define DEFAULT_TOP 20

/* --top N: a number of rows, 0 for all.  Returns 0, or -1 (said). */
static int parse_top(const char *arg, size_t *top)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (!arg[0] || *end || errno || arg[0] == '-' || v > SIZE_MAX) {
		cs_err("run: --top wants a number of rows (0: all), not '%s'", arg);
		return -1;
	}
	*top = (size_t)v;
	return 0;
}

static void usage(FILE *out)
{
	fputs("usage: cacheshim run [-e EVENTS] [-t TARGETS] [-o OUTPUT] [--hook HOW] [-q]\n"
	      "                     [--top N] [--]\n"
	      "                     PROG [ARGS...]\n"
	      "\n"
	      "  -e, --events EVENTS    comma-separated events (CACHESHIM_EVENTS)\n"
	      "  -t, --targets TARGETS  comma-separated function globs, NAME:argN to key\n"
	      "                         by an argument (CACHESHIM_TARGETS)\n"
	      "  -o, --output PATTERN   report file name, %p = pid, %e = program\n"
	      "                         (CACHESHIM_OUTPUT, default cacheshim.out.%p)\n"
	      "      --hook HOW         how calls are caught: entry, got or both\n"
	      "                         (CACHESHIM_HOOK, default both)\n"
	      "  -q, --quiet            no summary, and no informational shim lines\n"
	      "                         (CACHESHIM_QUIET=1); its warnings stay\n"
	      "      --top N            the summary's N rows of largest total per\n"
	      "                         event (default 20, 0: all)\n"
	      "  -h, --help             this text\n",
	      out);
}

/* Returns the path of the shim to preload (static storage). */
static const char *shim_path(void)
{
	static char buf[PATH_MAX + 64];
	const char *env = getenv("CACHESHIM_LIB");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && env[0])
		return env;
	/* Run from the build tree: use the library built next to us. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(buf, sizeof(buf), "%s/.libs/libcacheshim.so", exe);
			if (access(buf, R_OK) == 0)
				return buf;
		}
	}
	return CS_LIBDIR "/libcacheshim.so";
}

/* Returns a fresh non-zero random session id. */
static uint64_t new_session(void)
{
	uint64_t v = 0;
	struct timespec ts;

	if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v)) {
		/* No entropy source: time and pid still separate runs. */
		clock_gettime(CLOCK_REALTIME, &ts);
		v = ((uint64_t)ts.tv_sec * 1000000007ull) ^ ((uint64_t)ts.tv_nsec << 20) ^
		    (uint64_t)getpid();
	}
	return v ? v : 1;
}

static int set_env(const char *name, const char *value)
{
	if (setenv(name, value, 1) != 0) {
		cs_err("run: cannot set %s: %s", name, strerror(errno));
		return -1;
	}
	return 0;
}

static int prepend_preload(const char *shim)
{
	const char *old = getenv("LD_PRELOAD");
	size_t len;
	char *v;
	int ret;

	if (!old || !old[0])
		return set_env("LD_PRELOAD", shim);
	len = strlen(shim) + 1 + strlen(old) + 1;
	v = malloc(len);
	if (!v) {
		cs_err("out of memory");
		return -1;
	}
	snprintf(v, len, "%s:%s", shim, old);
	ret = set_env("LD_PRELOAD", v);
	free(v);
	return ret;
}

/* Whether the directory part of the output pattern holds %c (a '%%'
 * being a percent sign, not the start of one). */
static int dir_has(const char *pattern, char c)
{
	const char *slash = strrchr(pattern, '/'), *p;

	for (p = pattern; slash && p < slash; p++) {
		if (*p == '%' && p + 1 < slash && p[1] == c)
			return 1;
		if (*p == '%' && p + 1 < slash && p[1] == '%')
			p++;
	}
	return 0;
}

/* The directory the shim writes into: the directory part of the output
 * pattern with %% expanded.  Returns a malloc'd string or NULL (with a
 * message) when it cannot be known: %p or %e in it (a pattern of the
 * user's environment; -o is checked before the run).  %e is the base
 * name of /proc/self/exe in each process, which a symlink, a script or an
 * exec'd child makes differ from what the launcher ran. */
static char *output_dir(const char *pattern)
{
	const char *slash = strrchr(pattern, '/'), *p;
	size_t n = 0;
	char *dir;

	if (!slash)
		return strdup(".");
	if (slash == pattern)
		return strdup("/");
	if (dir_has(pattern, 'p') || dir_has(pattern, 'e')) {
		cs_warn("run: the output directory depends on the %s (%s): cannot collect the "
			"report files",
			dir_has(pattern, 'p') ? "pid" : "program name", pattern);
		return NULL;
	}
	dir = malloc((size_t)(slash - pattern) + 1);
	if (!dir)
		return NULL;
	for (p = pattern; p < slash; p++) {
		if (*p == '%' && p + 1 < slash && p[1] == '%')
			p++;
		dir[n++] = *p;
	}
	dir[n] = '\0';
	return dir;
}

/* pattern made absolute: the launcher's directory, with each '%' doubled
 * (the shim expands "%%" to one), before a relative pattern.  The shim
 * opens its file when the program starts, or later in a child: a program
 * that changes directory first (`sh -c 'cd x && ./prog'`) put a relative
 * name elsewhere, and the summary found nothing.  Returns a malloc'd
 * string, or NULL (said). */
/* 0 if files can be created in dir, else an errno value. */
static int dir_unusable(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) != 0)
		return errno;
	if (!S_ISDIR(st.st_mode))
		return ENOTDIR;
	return access(dir, W_OK | X_OK) != 0 ? errno : 0;
}

/* Whether the directory part of a pattern that has no %p or %e there is
 * usable (dir_unusable, quietly). */
static int pattern_dir_usable(const char *pattern)
{
	char *dir = output_dir(pattern);
	int ok = dir && !dir_unusable(dir);

	free(dir);
	return ok;
}

static char *absolute_pattern(const char *pattern)
{
	char cwd[PATH_MAX], *abs, *o;
	const char *p;

	/* A directory only reachable by a relative path (an unreadable
	 * parent, a path longer than PATH_MAX): the pattern stays relative,
	 * as it was before patterns were made absolute. */
	if (pattern[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		abs = strdup(pattern);
	else if ((abs = malloc(2 * strlen(cwd) + 1 + strlen(pattern) + 1)) != NULL) {
		for (o = abs, p = cwd; *p; p++) {
			if (*p == '%')
				*o++ = '%';
			*o++ = *p;
		}
		/* "/" alone needs no second slash. */
		if (o[-1] != '/')
			*o++ = '/';
		strcpy(o, pattern);
	}
	if (!abs)
		cs_err("out of memory");
	return abs;
}

/* The shim's limits on the output pattern (shim/settings.c, output.c):
 * a longer CACHESHIM_OUTPUT is replaced by the default name, a file name
 * longer than NAME_MAX cannot be created. */
#define SHIM_OUTPUT_MAX 4095

/* Checks, before the program runs, what would otherwise make every
 * process of the run say "not profiling" (or write under another name)
 * and the summary find nothing: a pattern the shim does not take, a
 * directory that is not there or not writable.  what names where the
 * pattern came from, given is the pattern as the user wrote it.  Returns
 * 0, or an exit status (said). */
static int check_output(const char *pattern, const char *what, const char *given)
{
	const char *slash = strrchr(pattern, '/'), *p;
	size_t name = 0;
	char *dir;
	int err = 0;

	if (strlen(pattern) > SHIM_OUTPUT_MAX) {
		cs_err("run: %s is %zu characters long%s; the shim takes at most %d", what,
		       strlen(pattern), strcmp(pattern, given) ? " once made absolute" : "",
		       SHIM_OUTPUT_MAX);
		return CS_EXIT_USAGE;
	}
	/* The file name at its shortest: %p and %e one character each. */
	for (p = slash ? slash + 1 : pattern; *p; p++, name++) {
		if (*p == '%' && (p[1] == '%' || p[1] == 'p' || p[1] == 'e'))
			p++;
	}
	/* "dir/": the shim would try to create the directory itself. */
	if (name == 0) {
		cs_err("run: %s '%s' has no file name after its last '/'", what, pattern);
		return CS_EXIT_USAGE;
	}
	if (name > NAME_MAX) {
		cs_err("run: %s '%s': the file name is longer than %d characters", what, pattern,
		       NAME_MAX);
		return CS_EXIT_USAGE;
	}
	if (dir_has(pattern, 'p') || dir_has(pattern, 'e'))
		return 0; /* the environment's: not known before the run */
	dir = output_dir(pattern);
	if (!dir) {
		cs_err("out of memory");
		return CS_EXIT_FAIL;
	}
	err = dir_unusable(dir);
	if (err)
		cs_err("run: %s '%s': cannot create files in %s: %s", what, pattern, dir,
		       strerror(err));
	free(dir);
	return err ? CS_EXIT_FAIL : 0;
}

/* The names the shim may give its files under the output pattern, as an
 * fnmatch(3) glob of the pattern's last component: %p and %e (the pid, a
 * program name: an exec'd child's may differ) match anything, the rest
 * is literal.  A name clash makes the shim append .1, .2, ... (matched by
 * the caller).  Only those files are opened: a directory like /tmp may
 * hold thousands of others, and opening each cost more than the run. */
static char *name_glob(const char *pattern)
{
	const char *slash = strrchr(pattern, '/'), *p = slash ? slash + 1 : pattern;
	char *g = malloc(2 * strlen(p) + 1), *o = g;

	if (!g)
		return NULL;
	for (; *p; p++) {
		if (p[0] == '%' && (p[1] == 'p' || p[1] == 'e')) {
			*o++ = '*';
			p++;
			continue;
		}
		if (p[0] == '%' && p[1] == '%')
			p++;
		if (strchr("*?[\\", *p))
			*o++ = '\\';
		*o++ = *p;
	}
	*o = '\0';
	return g;
}

/* A file name the pattern's glob g gives, with or without the shim's
 * ".N" clash suffix. */
static int name_matches(const char *g, const char *name)
{
	const char *dot = strrchr(name, '.');
	char *stem;
	int ok;

	if (fnmatch(g, name, 0) == 0)
		return 1;
	if (!dot || !dot[1] || strspn(dot + 1, "0123456789") != strlen(dot + 1))
		return 0;
	stem = strndup(name, (size_t)(dot - name));
	ok = stem && fnmatch(g, stem, 0) == 0;
	free(stem);
	return ok;
}

/* A report file of the run: its path and header. */
struct run_file {
	char *path;
	struct cs_file_header h;
};

static int cmp_run_file(const void *a, const void *b)
{
	return strcmp(((const struct run_file *)a)->path, ((const struct run_file *)b)->path);
}

/* Whether the writer of an unfinished file (RUNNING) is still running:
 * its pid names a live process (not a zombie) of the same program that
 * started no later than the file was made.  The program and the start
 * rule out another process given the pid since, and one of another pid
 * namespace (init: pid 1).  A process this one may not look at is taken
 * by its start alone. */
static int writer_running(const struct cs_file_header *h)
{
	char path[64], buf[1024], exe[CS_PROGRAM_MAX];
	struct timespec real, boot;
	unsigned long long start;
	const char *p;
	long hz = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd, field;

	if (h->state != CS_STATE_RUNNING || h->pid == 0 || hz <= 0 ||
	    (kill((pid_t)h->pid, 0) != 0 && errno != EPERM))
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/exe", h->pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0'; /* both cut to CS_PROGRAM_MAX - 1 bytes */
		if (strncmp(exe, h->program, sizeof(exe) - 1))
			return 0;
	}
	snprintf(path, sizeof(path), "/proc/%u/stat", h->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* After the name in parentheses: state (field 3) ... starttime
	 * (field 22, clock ticks after boot). */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return 0;
	for (field = 2, p++; field < 21 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &start) != 1)
		return 0;
	if (clock_gettime(CLOCK_REALTIME, &real) || clock_gettime(CLOCK_BOOTTIME, &boot))
		return 1;
	/* The file's start (CLOCK_REALTIME) after boot, to a tick or two. */
	return (long double)start / hz <=
	       (long double)h->start_ns / 1e9 - (real.tv_sec - boot.tv_sec) -
		       (real.tv_nsec - boot.tv_nsec) / 1e9 + 2.0 / hz + 0.01;
}

/* Whether pid is one of the n of pids (a process with two unfinished
 * files, one of an image it left by a raw exec, is one process). */
static int pid_listed(const uint32_t *pids, size_t n, uint32_t pid)
{
	while (n--)
		if (pids[n] == pid)
			return 1;
	return 0;
}

/* Finds the report files of session in dir named by the output pattern
 * and merges them into r.  Returns the number of files merged; *running
 * (at most nrunning) gets the pids of the writers still running, and
 * *nrun how many there are. */
static size_t collect(struct cs_report *r, const char *dir, const char *pattern, uint64_t session,
		      uint32_t *running, size_t nrunning, size_t *nrun)
{
	struct cs_file_header h;
	struct dirent *de;
	const struct cs_file_header **hp;
	const char **paths;
	struct run_file *files = NULL, *nf;
	char *path, *glob;
	size_t n = 0, i, merged = 0, len, *keep;
	DIR *d;

	glob = name_glob(pattern);
	d = glob ? opendir(dir) : NULL;
	if (!d) {
		cs_warn("run: cannot read %s: %s", dir, glob ? strerror(errno) : "out of memory");
		free(glob);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		if ((de->d_type != DT_REG && de->d_type != DT_UNKNOWN) ||
		    !name_matches(glob, de->d_name))
			continue;
		len = strlen(dir) + 1 + strlen(de->d_name) + 1;
		path = malloc(len);
		if (!path)
			break;
		snprintf(path, len, "%s/%s", dir, de->d_name);
		if (cs_reader_peek(path, &h) != 0 || h.session != session) {
			free(path);
			continue;
		}
		nf = realloc(files, (n + 1) * sizeof(*nf));
		if (!nf) {
			free(path);
			break;
		}
		files = nf;
		files[n].path = path;
		files[n++].h = h;
	}
	closedir(d);
	free(glob);
	if (n)
		qsort(files, n, sizeof(*files), cmp_run_file);
	/* A copy of a process's file (the program copied it while it was
	 * written, under a name the pattern matches) would count its calls
	 * twice: the one that got furthest is read (a snapshot named first
	 * lost the calls made since). */
	hp = malloc((n ? n : 1) * sizeof(*hp));
	paths = malloc((n ? n : 1) * sizeof(*paths));
	keep = malloc((n ? n : 1) * sizeof(*keep));
	for (i = 0; hp && paths && i < n; i++) {
		hp[i] = &files[i].h;
		paths[i] = files[i].path;
	}
	if (!hp || !paths || !keep || cs_reader_copies(hp, paths, n, keep)) {
		cs_err("out of memory");
	} else {
		for (i = 0; i < n; i++) {
			if (keep[i] != i)
				cs_warn("run: %s is a copy of %s (the file of the same process, "
					"pid %u): read once",
					files[i].path, files[keep[i]].path, files[i].h.pid);
			else if (cs_report_add_file(r, files[i].path) >= 0) {
				merged++;
				if (writer_running(&files[i].h) &&
				    !pid_listed(running, *nrun < nrunning ? *nrun : nrunning,
						files[i].h.pid) &&
				    (*nrun)++ < nrunning)
					running[*nrun - 1] = files[i].h.pid;
			}
		}
	}
	free(hp);
	free(paths);
	free(keep);
	for (i = 0; i < n; i++)
		free(files[i].path);
	free(files);
	return merged;
}

/* Whether some target of r's files has a name glob matches.  A file
 * keeps a name's first CS_TARGET_NAME_MAX - 1 bytes: a name that long
 * is matched as the defining module's symbol table has it (*syms made
 * when first needed), else a glob matching its end (a C++ name's) was
 * said to match nothing. */
static int glob_matched(const struct cs_report *r, const char *glob, struct cs_symbols **syms)
{
	const struct cs_target_info *t, *tmp;
	char *full;
	int m;

	HASH_ITER(hh, r->targets, t, tmp) {
		size_t base;

		if (fnmatch(glob, t->k.name, 0) == 0)
			return 1;
		/* A compiler clone (foo.constprop.0) is wrapped for the name it
		 * was made from, as the shim matches it (shim/entry.c:
		 * match_name): 'foo' matched it. */
		base = cs_target_clone_base_len(t->k.name);
		if (base < strnlen(t->k.name, sizeof(t->k.name))) {
			char b[sizeof(t->k.name)];

			memcpy(b, t->k.name, base);
			b[base] = '\0';
			if (fnmatch(glob, b, 0) == 0)
				return 1;
		}
		if (!t->mod || strnlen(t->k.name, sizeof(t->k.name)) < sizeof(t->k.name) - 1)
			continue;
		if (!*syms)
			*syms = cs_symbols_new(NULL);
		full = cs_symbols_name_at(*syms, t->mod->path, t->mod->build_id,
					  t->mod->build_id_len, t->k.offset, t->k.name);
		m = full && fnmatch(glob, full, 0) == 0;
		free(full);
		if (m)
			return 1;
	}
	return 0;
}

/* Whether some target of r's files is the function that the address
 * target spec (MODULE+0xOFFSET) names: at that offset in a module whose
 * file name MODULE matches, as the shim takes it (shim/entry.c:
 * address_here).  Its name is no help: the symbol's, when there is one. */
static int address_matched(const struct cs_report *r, const char *spec)
{
	const char *plus = strrchr(spec, '+');
	const struct cs_target_info *t, *tmp;
	char mod[CS_TARGET_NAME_MAX + 9];
	unsigned long long off;

	if (!plus || (size_t)(plus - spec) >= sizeof(mod))
		return 0;
	memcpy(mod, spec, (size_t)(plus - spec));
	mod[plus - spec] = '\0';
	errno = 0;
	off = strtoull(plus + 1, NULL, 16);
	if (errno)
		return 0;
	HASH_ITER(hh, r->targets, t, tmp) {
		if (!t->mod || t->k.offset != off)
			continue;
		if (fnmatch(mod, cs_util_basename(t->mod->path), 0) == 0)
			return 1;
	}
	return 0;
}

/* Says each function glob of list (CACHESHIM_TARGETS' syntax) that no
 * target of r's files matched: once for the whole run, where each of its
 * processes said it at start (CACHESHIM_UNMATCHED=run: a shell script's
 * helper processes said it ~70 times, review helper 56), and knowing the
 * functions of libraries loaded later too. */
static void say_unmatched(const struct cs_report *r, const char *list)
{
	/* Static: 256 KiB. */
	static char tok[CS_TARGET_PATTERN_MAX + 9],
		seen[CS_MAX_TARGET_PATTERNS][CS_TARGET_PATTERN_MAX + 9];
	const char *rest = list, *b;
	size_t n, namelen, i;
	unsigned argn, nseen = 0, k;
	int one_pid = 1; /* every file is one process's (an exec chain) */
	int left = 0; /* a file filled up before some functions were wrapped */
	struct cs_symbols *syms = NULL;

	for (i = 1; i < r->nfiles; i++)
		one_pid &= r->files[i].pid == r->files[0].pid;
	for (i = 0; i < r->nfiles; i++)
		left |= r->files[i].targets_left;
	while ((b = cs_util_next_item(&rest, &n))) {
		if (!n || n >= sizeof(tok))
			continue;
		memcpy(tok, b, n);
		tok[n] = '\0';
		if (cs_target_spec(tok, &namelen, &argn) != CS_TSPEC_OK)
			continue;
		tok[namelen] = '\0';
		/* Listed twice (f,f:arg1): the shim takes it once. */
		for (k = 0; k < nseen && strcmp(seen[k], tok); k++)
			;
		if (k < nseen)
			continue;
		if (nseen < CS_MAX_TARGET_PATTERNS)
			strcpy(seen[nseen++], tok);
		if (glob_matched(r, tok, &syms) || (strchr(tok, '+') && address_matched(r, tok)))
			continue;
		if (left)
			cs_warn("run: target '%s' is in no report file of this run: a report file "
				"filled up before the functions it matched could be wrapped",
				tok);
		else
			cs_warn("run: target '%s' matched no function in %s", tok,
				one_pid ? "the program" : "any of the program's processes");
	}
	cs_symbols_free(syms);
}

/* The shim's notes (lines it says once per process about what its file
 * lacks), which it left to the launcher (CACHESHIM_UNMATCHED=run): each
 * said once for all of the run's processes, as the shim says them, with
 * how many of the files hold it when not all. */
static void say_notes(const struct cs_report *r)
{
	struct cs_note_info **v;
	size_t i, n;

	v = cs_merge_notes(r, &n);
	for (i = 0; i < n; i++) {
		if (v[i]->nfiles < r->nfiles)
			cs_err("%s [%zu of %zu files]", v[i]->text, v[i]->nfiles, r->nfiles);
		else
			cs_err("%s", v[i]->text);
	}
	free(v);
}

/* Why the dynamic loader will run prog in secure mode (AT_SECURE), where
 * it ignores LD_PRELOAD, so that prog is not measured: set-user-ID or
 * set-group-ID to someone else, or file capabilities for a user other
 * than root (see libcacheshim(7)).  prog is looked up as execvp(3) does.
 * NULL when none (or prog was not found: the exec says why). */
static const char *secure_reason(const char *prog)
{
	const char *path, *p, *end;
	char buf[PATH_MAX];
	struct stat st;
	size_t len;
	int found = 0;

	if (!prog[0])
		return NULL;
	if (strchr(prog, '/')) {
		found = stat(prog, &st) == 0 && S_ISREG(st.st_mode);
		if (found && snprintf(buf, sizeof(buf), "%s", prog) >= (int)sizeof(buf))
			found = 0;
	} else {
		path = getenv("PATH");
		if (!path)
			path = "/bin:/usr/bin"; /* glibc's execvp's default */
		for (p = path; !found; p = end + 1) {
			end = strchr(p, ':');
			if (!end)
				end = p + strlen(p);
			len = (size_t)(end - p);
			if (snprintf(buf, sizeof(buf), "%.*s%s%s", (int)len, p, len ? "/" : "",
				     prog) < (int)sizeof(buf) &&
			    stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
				found = 1;
			if (!*end)
				break;
		}
	}
	if (!found)
		return NULL;
	if ((st.st_mode & S_ISUID) && st.st_uid != getuid())
		return "is set-user-ID";
	if ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP) && st.st_gid != getgid())
		return "is set-group-ID";
	if (getuid() != 0 && getxattr(buf, "security.capability", NULL, 0) > 0)
		return "has file capabilities";
	return NULL;
}

/* After the run: the summary of the session's report files (unless
 * quiet); and when the shim was told to leave them to the launcher
 * (launcher), its notes and the targets that matched nothing. */
static void summarize(const char *prog, const char *pattern, uint64_t session, const char *shim,
		      int quiet, int launcher, const char *targets, size_t top, const char *secure)
{
	struct cs_output_opts o = {
		.summary = 1, .truncate = 1, .no_notes = launcher, .top = top, .say_more = 1};
	struct cs_symbols *syms = NULL;
	struct cs_report *r;
	char *dir, *eprog, *edir;
	uint32_t running[8];
	size_t n, nrun = 0;

	dir = output_dir(pattern);
	if (!dir)
		return;
	r = cs_merge_new(CS_BY_FUNCTION);
	if (!r) {
		free(dir);
		cs_err("out of memory");
		return;
	}
	/* Quiet, only the targets are wanted (say_unmatched): no call
	 * site's values are merged (0.38 s of a 230 MB report from ruby
	 * under rb_*), nor the calibration (~0.1 ms of every run). */
	r->targets_only = quiet;
	cs_reader_targets_only(quiet);
	n = collect(r, dir, pattern, session, running, sizeof(running) / sizeof(running[0]), &nrun);
	if (launcher)
		say_notes(r);
	/* Background jobs, daemons: the summary is made when the program
	 * ends, and a process still running then made more calls later
	 * (or its first ones), which only `cacheshim report` of its file
	 * shows.  Unsaid, the summary looked whole. */
	if (nrun && !quiet) {
		char pids[128];
		size_t k, len = 0;

		pids[0] = '\0';
		for (k = 0; k < nrun && k < sizeof(running) / sizeof(running[0]); k++)
			len += (size_t)snprintf(pids + len, sizeof(pids) - len, "%s%u",
						k ? ", " : "", running[k]);
		cs_warn("run: %zu process%s of this run %s still running when the program "
			"ended (pid%s %s%s): the summary has %s calls until then; `cacheshim "
			"report` of the files in %s once %s ended has all",
			nrun, nrun == 1 ? "" : "es", nrun == 1 ? "was" : "were",
			nrun == 1 ? "" : "s", pids, nrun > k ? " and more" : "",
			nrun == 1 ? "its" : "their", dir, nrun == 1 ? "it has" : "they have");
	}
	if (n == 0) {
		/* Not "was the library loaded?": it was, and ld.so left it
		 * out, as it does for every such program. */
		if (!quiet && secure)
			cs_warn("run: %s %s: the dynamic loader ignores LD_PRELOAD in it, so "
				"it was not measured (no report file of this run in %s)",
				prog, secure, dir);
		else if (!quiet)
			cs_warn("run: no report file of this run in %s (was %s loaded?)", dir,
				shim);
	} else if (!quiet) {
		syms = cs_symbols_new(NULL);
		/* The program and the directory as the user gave them:
		 * escaped, as cs_err escapes its messages. */
		eprog = cs_util_escape_dup(prog);
		edir = cs_util_escape_dup(dir);
		fprintf(stderr, "\n cacheshim summary of %s (%zu report file%s in %s)\n\n",
			eprog ? eprog : "?", n, n == 1 ? "" : "s", edir ? edir : "?");
		free(eprog);
		free(edir);
		cs_table_print(stderr, r, syms, &o);
		fputc('\n', stderr);
	}
	if (n && launcher && targets)
		say_unmatched(r, targets);
	cs_symbols_free(syms);
	cs_merge_free(r);
	free(dir);
}

/* Ends this process the way the child ended, so that a shell or make
 * sees the same status as without cacheshim. */
static int pass_status(int status)
{
	struct rlimit no_core = {0, 0};
	struct sigaction sa;
	sigset_t set;
	int sig;

	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (!WIFSIGNALED(status))
		return CS_EXIT_FAIL;
	sig = WTERMSIG(status);
	fflush(stdout);
	fflush(stderr);
	/* The child already dumped core if it was going to. */
	setrlimit(RLIMIT_CORE, &no_core);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	/* glibc's raise refuses the two signals it keeps for itself (32
	 * and 33, still a program's death when it was sent them); they
	 * have their default action here, and kill sends them. */
	if (raise(sig) != 0)
		kill(getpid(), sig);
	/* A signal whose default is to be ignored (SIGCHLD, SIGWINCH ...)
	 * cannot kill a process: say it the way shells do. */
	return 128 + sig;
}

/* Appends list to *acc with a comma: -e and -t may be repeated, like
 * perf stat's -e (a second one silently replacing the first lost events
 * or targets).  Returns 0 or -1 (said). */
static int append_list(char **acc, const char *list)
{
	char *v;

	if (!*acc) {
		v = strdup(list);
	} else if (asprintf(&v, "%s,%s", *acc, list) < 0) {
		v = NULL;
	}
	if (!v) {
		cs_err("out of memory");
		return -1;
	}
	free(*acc);
	*acc = v;
	return 0;
}

/* Whether the comma-separated list has an entry that is not blank (the
 * shim skips blank ones). */
static int has_entry(const char *list)
{
	return list[strspn(list, ", \t\n\v\f\r")] != '\0';
}

/* Checks each entry of list (from what: -t or CACHESHIM_TARGETS) as the
 * shim will take it (common/targetspec.c): the shim ignores a bad one
 * with a line on the program's stderr, and the run measures less than
 * was asked, or nothing.  Returns 0, or an exit status (said). */
static int check_targets(const char *list, const char *what)
{
	static const char *const why[] = {
		[CS_TSPEC_SUFFIX] = "expected NAME or NAME:argN",
		[CS_TSPEC_ARGN] = "N in :argN must be 1..16",
		[CS_TSPEC_NO_NAME] = "no function name",
		[CS_TSPEC_CHARS] = "not a function name or glob",
		[CS_TSPEC_ADDRESS] = "neither a function name nor MODULE+0xOFFSET",
	};
	/* Static: 256 KiB. */
	static char tok[CS_TARGET_PATTERN_MAX + 9],
		seen[CS_MAX_TARGET_PATTERNS][CS_TARGET_PATTERN_MAX + 9];
	const char *rest = list, *b;
	unsigned nseen = 0, argn, i;
	enum cs_target_spec_error err;
	size_t n, namelen;
	int k;

	while ((b = cs_util_next_item(&rest, &n))) {
		if (!n)
			continue;
		if (n < sizeof(tok)) {
			memcpy(tok, b, n);
			tok[n] = '\0';
			err = cs_target_spec(tok, &namelen, &argn);
		}
		/* The shim takes a name or glob of up to CS_TARGET_PATTERN_MAX
		 * - 1 characters (shim/settings.c). */
		if (n >= sizeof(tok) || (err == CS_TSPEC_OK && namelen >= CS_TARGET_PATTERN_MAX)) {
			/* Its start, not cut inside a UTF-8 character. */
			for (k = 20; k > 0 && ((unsigned char)b[k] & 0xc0) == 0x80; k--)
				;
			cs_err("run: %s: '%.*s...' is longer than %u characters", what, k, b,
			       CS_TARGET_PATTERN_MAX - 1);
			return CS_EXIT_USAGE;
		}
		if (err != CS_TSPEC_OK) {
			cs_err("run: %s: '%s': %s%s", what, tok, why[err],
			       err == CS_TSPEC_SUFFIX || err == CS_TSPEC_CHARS ? cs_target_spec_hint(tok)
									: "");
			return CS_EXIT_USAGE;
		}
		tok[namelen] = '\0';
		for (i = 0; i < nseen && strcmp(seen[i], tok); i++)
			;
		if (i < nseen)
			continue; /* listed twice: the shim takes it once */
		if (nseen == CS_MAX_TARGET_PATTERNS) {
			cs_err("run: %s: more than %d functions or patterns", what,
			       CS_MAX_TARGET_PATTERNS);
			return CS_EXIT_USAGE;
		}
		strcpy(seen[nseen++], tok);
	}
	return 0;
}

/* See internal.h.  The shim leaves an unknown name out with a line on
 * the program's stderr, and the run measures less than was asked; an
 * event that is known but cannot be opened on this machine (no PMU) is
 * the shim's to say.  libpfm4 is loaded only when a name needs it (it
 * costs milliseconds); when it cannot be, the shim says so itself. */
int cs_run_check_events(const char *cmd, const char *list, const char *what)
{
	struct perf_event_attr attr;
	uint64_t config;
	char tok[CS_EVENT_NAME_MAX + 1], seen[CS_MAX_EVENTS][CS_EVENT_NAME_MAX + 1];
	const char *rest = list, *b, *why;
	int loaded = 0, ret = 0, r;
	unsigned nseen = 0, i;
	size_t n;

	while (!ret && (b = cs_util_next_item(&rest, &n))) {
		if (n >= sizeof(tok) - 1) {
			cs_err("%s: %s: event '%.*s' is longer than %u characters", cmd, what,
			       (int)n, b, CS_EVENT_NAME_MAX - 1);
			ret = CS_EXIT_USAGE;
		} else if (n) {
			memcpy(tok, b, n);
			tok[n] = '\0';
			for (i = 0; i < nseen && strcmp(seen[i], tok); i++)
				;
			if (i < nseen)
				continue; /* listed twice: the shim takes it once */
			/* The shim keeps the first 16 and says so in the
			 * program's stderr: the run measured less than asked. */
			if (nseen == CS_MAX_EVENTS) {
				cs_err("%s: %s: more than %u events ('%s' and later)", cmd,
				       what, CS_MAX_EVENTS, tok);
				ret = CS_EXIT_USAGE;
				break;
			}
			strcpy(seen[nseen++], tok);
			if (tok[0] == '@' && !cs_preset_bits(tok)) {
				char names[CS_PRESET_NAMES_MAX];

				cs_err("%s: %s: '%s' is not a preset (%s)", cmd, what, tok,
				       cs_preset_names(names, sizeof(names)));
				ret = CS_EXIT_USAGE;
			} else if (tok[0] != '@' && strcmp(tok, "tsc") &&
				   (cs_libpfm_env() || !cs_sw_event_config(tok, &config))) {
				/* (perf's software events the shim encodes
				 * itself need no libpfm4 here either.) */
				if (!loaded) {
					loaded = -1;
					if (cs_pfm_load(&why) == 0 &&
					    cs_pfm.initialize() == PFM_SUCCESS)
						loaded = 1;
				}
				r = loaded > 0 ? cs_pfm_encode(tok, &attr) : PFM_SUCCESS;
				if (r != PFM_SUCCESS) {
					cs_err("%s: %s: event '%s': %s (`cacheshim list` shows "
					       "the events known here)",
					       cmd, what, tok, cs_pfm.strerror(r));
					ret = CS_EXIT_USAGE;
				}
			}
		}
	}
	if (loaded > 0)
		cs_pfm.terminate();
	return ret;
}

/* Why ld.so could not preload the file at path, or NULL when it is a
 * readable regular file with the ELF header of an x86-64 shared object.
 * ld.so only prints an error and runs the program unmeasured
 * (CACHESHIM_LIB=/tmp, =/etc/passwd).  Returns static text. */
static const char *not_loadable(const char *path)
{
	static char buf[64];
	unsigned char h[EI_NIDENT + 4];
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(buf, sizeof(buf), "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return buf;
	}
	n = S_ISREG(st.st_mode) ? read(fd, h, sizeof(h)) : 0;
	close(fd);
	if (!S_ISREG(st.st_mode))
		return S_ISDIR(st.st_mode) ? "a directory, not a library" : "not a regular file";
	if (n < (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG) != 0)
		return "not an ELF file";
	/* e_type and e_machine follow e_ident, little-endian here. */
	if (h[EI_CLASS] != ELFCLASS64 || h[EI_DATA] != ELFDATA2LSB ||
	    (h[EI_NIDENT + 2] | h[EI_NIDENT + 3] << 8) != EM_X86_64)
		return "not an x86-64 ELF file";
	if ((h[EI_NIDENT] | h[EI_NIDENT + 1] << 8) != ET_DYN)
		return "not a shared library";
	return NULL;
}

/* LD_PRELOAD splits at spaces and colons and cannot quote: a library
 * path with one would not be loaded, and the run measure nothing.  A
 * name without a slash is looked for by ld.so (LD_LIBRARY_PATH, its
 * cache, the system directories), not in this directory: it is left to
 * ld.so.  A relative path with a slash is made absolute, as the output
 * pattern is: ld.so opens it from each process's own directory, and a
 * program that changes directory before it runs a child lost the shim in
 * the child.  Returns the path to preload (static storage, or shim
 * itself), or NULL (said). */
static const char *check_shim(const char *shim)
{
	static char abs[PATH_MAX];
	const char *why;

	if (strpbrk(shim, " \t\n:")) {
		cs_err("run: cannot preload %s: LD_PRELOAD cannot hold a path with a space or "
		       "a colon (set CACHESHIM_LIB to a path without)",
		       shim);
		return NULL;
	}
	if (!strchr(shim, '/'))
		return shim;
	why = not_loadable(shim);
	if (why) {
		cs_err("run: cannot preload %s: %s", shim, why);
		return NULL;
	}
	/* Kept relative when its absolute path is one LD_PRELOAD cannot
	 * hold (a space in the current directory's path). */
	if (shim[0] != '/' && realpath(shim, abs) && !strpbrk(abs, " \t\n:"))
		return abs;
	return shim;
}

int cs_cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"events", required_argument, NULL, 'e'}, {"targets", required_argument, NULL, 't'},
		{"output", required_argument, NULL, 'o'}, {"quiet", no_argument, NULL, 'q'},
		{"hook", required_argument, NULL, 'H'}, {"help", no_argument, NULL, 'h'},
		{"top", required_argument, NULL, 'T'}, {NULL, 0, NULL, 0},
	};
	const char *output = NULL, *hook = NULL, *shim, *env_output, *given_output;
	char *events = NULL, *targets = NULL, *own_output = NULL;
	struct sigaction ign, dfl, old_int, old_quit, old_chld, old_pipe, fwd, old_fwd[NFORWARDED];
	sigset_t held, old_mask;
	size_t i;
	int c, quiet = 0, pfd[2], status, child_errno = 0, ret, unmatched_later;
	size_t top = DEFAULT_TOP;
	const char *env_unmatched;
	char session[32];
	uint64_t sid;
	ssize_t n;
	pid_t pid;

	/* Every line of ours goes to stderr, which may be a pipe nobody
	 * reads any more (`cacheshim run prog 2>&1 | head -1`): its SIGPIPE
	 * ended us with status 141 instead of the program's (the table at
	 * the end), or of ours (a usage error, "cannot run").  The program
	 * gets the disposition back. */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old_pipe);

	/* '+': everything after PROG belongs to PROG. */
	while ((c = getopt_long(argc, argv, "+e:t:o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			/* The shim would measure its default events, and for
			 * -t nothing at all: not what was asked. */
			if (!has_entry(optarg)) {
				cs_err("run: -e '%s' names no event", optarg);
				return CS_EXIT_USAGE;
			}
			if (append_list(&events, optarg))
				return CS_EXIT_FAIL;
			break;
		case 't':
			if (!has_entry(optarg)) {
				cs_err("run: -t '%s' names no function", optarg);
				return CS_EXIT_USAGE;
			}
			if (append_list(&targets, optarg))
				return CS_EXIT_FAIL;
			break;
		case 'o':
			output = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'H':
			if (strcmp(optarg, "entry") && strcmp(optarg, "got") &&
			    strcmp(optarg, "both")) {
				cs_err("run: --hook '%s' is not entry, got or both", optarg);
				return CS_EXIT_USAGE;
			}
			hook = optarg;
			break;
		case 'T':
			if (parse_top(optarg, &top))
				return CS_EXIT_USAGE;
			break;
		case 'h':
			usage(stdout);
			return cs_util_stdout_done();
		default:
			usage(stderr);
			return CS_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		cs_err("run: no program given");
		usage(stderr);
		return CS_EXIT_USAGE;
	}
	if (output && !output[0]) {
		cs_err("run: empty --output");
		return CS_EXIT_USAGE;
	}
	/* Without targets the shim measures nothing ("not profiling"), and
	 * the summary would only find no file. */
	if (!targets && (!getenv("CACHESHIM_TARGETS") || !has_entry(getenv("CACHESHIM_TARGETS")))) {
		cs_err("run: no functions to measure: give -t NAME (or set CACHESHIM_TARGETS)");
		return CS_EXIT_USAGE;
	}
	ret = targets ? check_targets(targets, "-t")
		      : check_targets(getenv("CACHESHIM_TARGETS"), "CACHESHIM_TARGETS");
	if (ret)
		return ret;
	/* The launcher would guess %e from PROG, the shim takes it from
	 * /proc/self/exe: a symlink or a script and the summary looked in
	 * the wrong directory. */
	if (output && (dir_has(output, 'e') || dir_has(output, 'p'))) {
		cs_err("run: --output '%s': %s may only be in the file name, not in the "
		       "directory",
		       output, dir_has(output, 'e') ? "%e (the program name)" : "%p (the pid)");
		return CS_EXIT_USAGE;
	}

	/* A pattern the launcher chooses (-o, or the default) is made
	 * absolute, so that the files land where the summary looks whatever
	 * directory the program moves to; one the user put in the
	 * environment is the shim's business and is passed on as it is. */
	env_output = getenv("CACHESHIM_OUTPUT");
	given_output = output;
	if (output || !env_output || !env_output[0]) {
		own_output = absolute_pattern(output ? output : DEFAULT_OUTPUT);
		if (!own_output)
			return CS_EXIT_FAIL;
		output = own_output;
		/* The directory reachable by its relative path only (the cwd
		 * below an unreadable parent): relative then. */
		if (!dir_has(output, 'p') && !dir_has(output, 'e') &&
		    !pattern_dir_usable(output) &&
		    pattern_dir_usable(given_output ? given_output : DEFAULT_OUTPUT)) {
			free(own_output);
			own_output = strdup(given_output ? given_output : DEFAULT_OUTPUT);
			if (!own_output) {
				cs_err("out of memory");
				return CS_EXIT_FAIL;
			}
			output = own_output;
		}
	} else {
		output = env_output;
	}
	if (given_output)
		ret = check_output(output, "--output", given_output);
	else if (own_output)
		ret = check_output(output, "the default --output", DEFAULT_OUTPUT);
	else
		ret = check_output(output, "CACHESHIM_OUTPUT", output);
	if (ret)
		return ret;

	if (events)
		ret = cs_run_check_events("run", events, "-e");
	else if (getenv("CACHESHIM_EVENTS"))
		ret = cs_run_check_events("run", getenv("CACHESHIM_EVENTS"),
					  "CACHESHIM_EVENTS");
	if (ret)
		return ret;

	shim = check_shim(shim_path());
	if (!shim)
		return CS_EXIT_FAIL;
	/* Targets that match no function are said once at the end, from
	 * the run's files, where the files can be found (and unless the
	 * user chose otherwise): not with a relative pattern (one of the
	 * environment, passed on as it is), by which a process that changed
	 * directory writes where the summary does not look, and a target
	 * wrapped only there was said to match no function in the program.
	 * "run" is what an enclosing cacheshim run set, not the user: this
	 * run's files are not the enclosing run's (another session), so
	 * this run says them. */
	env_unmatched = getenv("CACHESHIM_UNMATCHED");
	unmatched_later = (!env_unmatched || !strcmp(env_unmatched, "run")) &&
			  output[0] == '/' && !dir_has(output, 'p') && !dir_has(output, 'e');
	sid = new_session();
	snprintf(session, sizeof(session), "%llu", (unsigned long long)sid);
	if (set_env("CACHESHIM_SESSION", session) ||
	    (events && set_env("CACHESHIM_EVENTS", events)) ||
	    (targets && set_env("CACHESHIM_TARGETS", targets)) ||
	    (own_output && set_env("CACHESHIM_OUTPUT", own_output)) ||
	    (hook && set_env("CACHESHIM_HOOK", hook)) ||
	    (quiet && set_env("CACHESHIM_QUIET", "1")) ||
	    (unmatched_later && set_env("CACHESHIM_UNMATCHED", "run")) ||
	    (!unmatched_later && env_unmatched && !strcmp(env_unmatched, "run") &&
	     unsetenv("CACHESHIM_UNMATCHED")) ||
	    prepend_preload(shim))
		return CS_EXIT_FAIL;

	/* exec failures come back through a close-on-exec pipe: a child
	 * that exits 127 on its own is not a failed exec. */
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		cs_err("run: pipe: %s", strerror(errno));
		return CS_EXIT_FAIL;
	}
	fflush(stdout);
	fflush(stderr);
	/* Like time(1) and perf stat: ^C and ^\ go to the program (same
	 * process group), and we live on to report what it did. */
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	/* SIGCHLD ignored (inherited through exec from a parent that
	 * ignores it) makes the kernel reap the child at once: waitpid
	 * failed with ECHILD, and the status and the summary were lost.
	 * The program gets the disposition back, as it would have it
	 * without cacheshim. */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGCHLD, &dfl, &old_chld);
	/* Forwarded signals are held until the child's pid is known. */
	memset(&fwd, 0, sizeof(fwd));
	fwd.sa_handler = forward;
	sigemptyset(&fwd.sa_mask);
	fwd.sa_flags = SA_RESTART;
	sigemptyset(&held);
	for (i = 0; i < NFORWARDED; i++)
		sigaddset(&held, forwarded[i]);
	sigprocmask(SIG_BLOCK, &held, &old_mask);
	for (i = 0; i < NFORWARDED; i++)
		sigaction(forwarded[i], &fwd, &old_fwd[i]);
	pid = fork();
	if (pid < 0) {
		cs_err("run: fork: %s", strerror(errno));
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		sigaction(SIGCHLD, &old_chld, NULL);
		for (i = 0; i < NFORWARDED; i++)
			sigaction(forwarded[i], &old_fwd[i], NULL);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		close(pfd[0]);
		close(pfd[1]);
		return CS_EXIT_FAIL;
	}
	if (pid == 0) {
		sigaction(SIGPIPE, &old_pipe, NULL);
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		sigaction(SIGCHLD, &old_chld, NULL);
		for (i = 0; i < NFORWARDED; i++)
			sigaction(forwarded[i], &old_fwd[i], NULL);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		close(pfd[0]);
		execvp(argv[optind], argv + optind);
		child_errno = errno;
		/* If even this fails the parent sees a plain exit 127. */
		if (write(pfd[1], &child_errno, sizeof(child_errno)) < 0)
			child_errno = 0;
		_exit(child_errno == EACCES ? 126 : 127);
	}
	child_pid = pid;
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	close(pfd[1]);
	do
		n = read(pfd[0], &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			cs_err("run: waitpid: %s", strerror(errno));
			return CS_EXIT_FAIL;
		}
	}
	child_pid = 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGCHLD, &old_chld, NULL);
	for (i = 0; i < NFORWARDED; i++)
		sigaction(forwarded[i], &old_fwd[i], NULL);
	if (n == (ssize_t)sizeof(child_errno)) {
		struct stat st;

		/* exec says EACCES of a directory: said as a shell says it. */
		if (child_errno == EACCES && strchr(argv[optind], '/') &&
		    stat(argv[optind], &st) == 0 && S_ISDIR(st.st_mode))
			child_errno = EISDIR;
		cs_err("run: cannot run %s: %s", argv[optind], strerror(child_errno));
		return child_errno == EACCES || child_errno == EPERM || child_errno == EISDIR ? 126
											    : 127;
	}
	if (!quiet || unmatched_later)
		summarize(argv[optind], output, sid, shim, quiet, unmatched_later,
			  targets ? targets : getenv("CACHESHIM_TARGETS"), top,
			  secure_reason(argv[optind]));
	fflush(stdout);
	fflush(stderr);
	return pass_status(status);
}
