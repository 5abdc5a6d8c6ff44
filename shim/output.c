/* SPDX-License-Identifier: MIT */
/* The report file: created safely, mapped MAP_SHARED for the whole run,
 * blocks reserved by an atomic bump of header.used (slow paths only), and
 * sealed and trimmed at exit.  And the notes: once-lines also kept there. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <time.h>
#include <unistd.h>

#include "shim/internal.h"
#include "shim/rawsys.h"

static int out_fd = -1;
static uint64_t out_capacity;
/* The file's size: it grows by fallocate(2) as blocks are reserved, so a
 * short run never sizes (and at exit trims) a file of the whole capacity,
 * which cost ~1 ms of a 20 ms run.  fallocate only ever grows a file, so
 * racing growers (a signal handler's call) cannot shrink it under each
 * other.  Where it is not supported the file is sized whole at start. */
static uint64_t out_size;
static int out_grows; /* 0: sized whole at start (no fallocate here) */
static int out_full; /* growing failed (no room): reserve no more */
#define CS_GROW_STEP (4ull << 20)
/* Whether the file's pages get space only as they are mapped in: on tmpfs
 * (where /tmp is on many systems), with MADV_POPULATE_WRITE (Linux 5.14).
 * Growing by fallocate allocates every byte of a step, and a series block
 * reserves 256 windows of which a short run writes 16: a shell running
 * `echo hi` with 14 targets kept 4.7 MB, a loop of 600 such processes
 * 2.9 GB (a review helper).  Sparse, growing only extends the file
 * (allocating its last page), and every page is mapped in by
 * MADV_POPULATE_WRITE before anything is stored there (prefault), which
 * gets it its space or fails (no room): a reservation or a series'
 * windows that cannot be backed are given up, and no store lands in a hole
 * the file system cannot fill (a SIGBUS in the program).  A tmpfs page
 * keeps its space until the file is cut.  Not on disk file systems: with
 * large folios (ext4 since Linux 6.16) a reader of the live file reads
 * ahead into folios that span holes and pages in use, and a write fault on
 * such a page reserves space for the whole folio: on a full disk the
 * program got a SIGBUS at a store into a page that had its blocks all
 * along (review helper 51, tests/robust/test_series_folio.sh). */
static int out_sparse;
/* Series windows of the file were punched out (cs_output_seal_gone): the
 * file has holes next to pages in use, as a sparse one has, so a window
 * mapped in later (after an exec that failed) that the file system
 * cannot back must be given up, never touched into being (a SIGBUS on a
 * full disk). */
static int out_holes;
/* Counts the starts and ends of punching (cs_output_seal_gone): odd while
 * the windows no call reached are being punched out (populate_windows
 * maps none in then, cs_output_punch_gen). */
static uint64_t punch_gen;
static int punching; /* a thread is in cs_output_seal_gone's punches */

/* The system calls this file makes while the program runs (reserving runs
 * without the re-entry guard), through shim/rawsys.h. */
/* [from, len) allocated, the file at least len long. */
static long sys_fallocate(int fd, uint64_t from, uint64_t len)
{
	return cs_syscall6(SYS_fallocate, fd, 0, (long)from, (long)(len - from), 0, 0);
}

static long sys_pwritev(int fd, const struct iovec *iov, int n, uint64_t off)
{
	return cs_syscall6(SYS_pwritev, fd, (long)iov, n, (long)off, 0, 0);
}

static long sys_madvise(void *addr, uint64_t len, int advice)
{
	return cs_syscall6(SYS_madvise, (long)addr, (long)len, advice, 0, 0, 0);
}

static long sys_fstat(int fd, struct stat *st)
{
	return cs_syscall6(SYS_fstat, fd, (long)st, 0, 0, 0, 0);
}

static long sys_openat(const char *path, int flags)
{
	return cs_syscall6(SYS_openat, AT_FDCWD, (long)path, flags, 0, 0, 0);
}

static void sys_close(int fd)
{
	cs_syscall6(SYS_close, fd, 0, 0, 0, 0, 0);
}

static long sys_fcntl(int fd, int cmd, long arg)
{
	return cs_syscall6(SYS_fcntl, fd, cmd, arg, 0, 0, 0);
}

/* The program's RLIMIT_FSIZE soft limit (it may change it any time):
 * growing, zeroing or sizing the report past it would get the program a
 * SIGXFSZ, which kills by default.  UINT64_MAX if none. */
static uint64_t fsize_limit(void)
{
	struct rlimit rl;
	long ret = cs_syscall6(SYS_prlimit64, 0, RLIMIT_FSIZE, 0, (long)&rl, 0, 0);

	if (ret < 0 || rl.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	return (uint64_t)rl.rlim_cur;
}

/* Whether fd's file lies on a tmpfs (out_sparse). */
static int on_tmpfs(int fd)
{
	struct statfs fs;

	return fstatfs(fd, &fs) == 0 && fs.f_type == TMPFS_MAGIC;
}

/* Whether this kernel knows MADV_POPULATE_WRITE (Linux 5.14; a seccomp
 * filter may refuse it too): an empty range is checked for its advice
 * only.  Asked before the file first grows, which allocates only a step's
 * last page when sparse: found out after, the whole step had to be
 * allocated at once, and on a tmpfs with less room than a step (where
 * grow takes just what a reservation needs) the program ran unprofiled. */
static int populate_known(void)
{
	return sys_madvise((void *)4096, 0, MADV_POPULATE_WRITE) == 0;
}

static char out_path[PATH_MAX]; /* absolute: the program may chdir */
static int out_fd_floor = 3; /* lowest number for a descriptor of ours (cs_fd_high) */
static dev_t out_dev; /* identity of the report file, to know our descriptor */
static ino_t out_ino;
static int out_closed; /* closed on purpose (exit, fork): never reopened */

/* A descriptor of the report file, or -1.  The program may have closed
 * ours (daemons close every descriptor they did not open) and opened a
 * file of its own that got the same number: growing, zeroing or trimming
 * through it would damage that file.  So the number is trusted only while
 * it still names our file (device and inode); otherwise the file is opened
 * again by its path (and the number left to the program), or, if that is
 * not our file either, -1: the report stops growing and is not trimmed. */
static int report_fd(void)
{
	struct stat st;
	int old = __atomic_load_n(&out_fd, __ATOMIC_ACQUIRE);
	long fd;

	if (old >= 0 && sys_fstat(old, &st) == 0 && st.st_dev == out_dev && st.st_ino == out_ino)
		return old;
	if (__atomic_load_n(&out_closed, __ATOMIC_ACQUIRE))
		return -1;
	fd = sys_openat(out_path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && (sys_fstat((int)fd, &st) || st.st_dev != out_dev || st.st_ino != out_ino)) {
		sys_close((int)fd);
		fd = -1;
	}
	/* Up among our numbers: it would otherwise take the lowest free one,
	 * which the program (a daemon that closed 0, 1 and 2) is about to
	 * open for itself. */
	if (fd >= 0 && fd < out_fd_floor) {
		long high = sys_fcntl((int)fd, F_DUPFD_CLOEXEC, out_fd_floor);

		sys_close((int)fd);
		fd = high >= 0 ? high : -1;
	}
	/* Another thread may have reopened it meanwhile: one copy is kept. */
	if (!__atomic_compare_exchange_n(&out_fd, &old, (int)fd, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		if (fd >= 0)
			sys_close((int)fd);
		return old >= 0 ? report_fd() : -1;
	}
	return (int)fd;
}

/* Makes the file at least end bytes long.  Returns 0 or -errno. */
static int grow(uint64_t end)
{
	uint64_t size = __atomic_load_n(&out_size, __ATOMIC_ACQUIRE), want, limit;
	long ret;
	int fd;

	if (end <= size)
		return 0;
	want = (end + CS_GROW_STEP - 1) & ~(CS_GROW_STEP - 1);
	if (want > out_capacity)
		want = out_capacity;
	limit = fsize_limit();
	if (end > limit)
		return -EFBIG;
	if (want > limit)
		want = end > (limit & ~4095ull) ? end : limit & ~4095ull;
	fd = report_fd();
	if (fd < 0)
		return -EBADF;
	/* Sparse: only the last page, which makes the file want bytes long
	 * and never shorter (a racing grower's fallocate cannot undo it as a
	 * racing ftruncate could). */
	ret = sys_fallocate(fd, out_sparse && want - 4096 > size ? want - 4096 : size, want);
	if ((ret == -ENOSPC || ret == -EDQUOT) && want > ((end + 65535) & ~65535ull)) {
		/* Less room than a whole step: just what this reservation needs. */
		want = (end + 65535) & ~65535ull;
		ret = sys_fallocate(fd, out_sparse && want - 4096 > size ? want - 4096 : size,
				    want);
	}
	if (ret < 0)
		return (int)ret;
	while (size < want && !__atomic_compare_exchange_n(&out_size, &size, want, 1,
							   __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
		;
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char *prog_name(void)
{
	const char *slash = strrchr(cs_g.hdr_program, '/');

	return slash ? slash + 1 : cs_g.hdr_program;
}

/* Creates a file that did not exist, never following a planted symlink;
 * on a name clash appends .1, .2, ...  Returns the fd or -errno. */
static int create_exclusive(const char *base, char *path, size_t pathlen)
{
	int fd, i;

	for (i = 0; i < 1000; i++) {
		if (i == 0)
			snprintf(path, pathlen, "%s", base);
		else if (snprintf(path, pathlen, "%s.%d", base, i) >= (int)pathlen)
			return -ENAMETOOLONG;
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

/* The report file is made unnamed (O_TMPFILE) in its directory and given
 * its name only once its header is whole (publish): a process killed
 * between the create and the header's magic (a SIGKILL to a script that
 * forks, timeout -s KILL) left an empty file behind, which made
 * `cacheshim report` of all the run's files fail ("bad magic").  Where
 * O_TMPFILE or naming it that way is not possible, the file is created
 * by its name as before (tmpfile_off). */
static int tmpfile_off;

static int open_unnamed(const char *base)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(base, '/');
	size_t n;

	if (tmpfile_off)
		return -1;
	if (!slash) {
		snprintf(dir, sizeof(dir), ".");
	} else {
		n = slash == base ? 1 : (size_t)(slash - base);
		if (n >= sizeof(dir))
			return -1;
		memcpy(dir, base, n);
		dir[n] = 0;
	}
	return open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
}

/* Gives the unnamed file fd its name, base or base.1, base.2, ... (never
 * an existing file's, as create_exclusive).  Returns 0 or -errno. */
static int publish(int fd, const char *base, char *path, size_t pathlen)
{
	char proc[64];
	int i, err;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	for (i = 0; i < 1000; i++) {
		if (i == 0)
			snprintf(path, pathlen, "%s", base);
		else if (snprintf(path, pathlen, "%s.%d", base, i) >= (int)pathlen)
			return -ENAMETOOLONG;
		if (linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		err = errno;
		/* Without /proc: by the descriptor itself (needs
		 * CAP_DAC_READ_SEARCH). */
		if (err != EEXIST && linkat(fd, "", AT_FDCWD, path, AT_EMPTY_PATH) == 0)
			return 0;
		if (err != EEXIST)
			return -err;
	}
	return -EEXIST;
}

/* A relative name made absolute: the file is reopened by its path later
 * (report_fd), and after a chdir a relative name would be someone else's
 * file. */
static void path_absolute(void)
{
	char cwd[PATH_MAX], rel[PATH_MAX];

	if (out_path[0] == '/')
		return;
	memcpy(rel, out_path, sizeof(rel));
	if (getcwd(cwd, sizeof(cwd)) &&
	    snprintf(out_path, sizeof(out_path), "%s/%s", cwd, rel) >= (int)sizeof(out_path))
		memcpy(out_path, rel, sizeof(rel));
}

int cs_fd_high(int fd, int or_none)
{
	struct rlimit rl;
	int high = CS_FD_HIGH, moved, small = 0;

	/* Programs get the lowest free number for each file they open: a
	 * descriptor of ours up there is not reused by a program that closed
	 * it (daemons close every descriptor they did not open), nor taken by
	 * a dup2 that counts up from 3.  Below the soft limit, so that the
	 * descriptor table does not grow much. */
	if (fd < 0)
		return fd;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < (rlim_t)high + 64) {
		small = rl.rlim_cur <= 128;
		high = small ? (int)rl.rlim_cur / 2 : (int)rl.rlim_cur - 64;
	}
	if (high < 3)
		high = 3;
	out_fd_floor = high;
	if (fd >= high)
		return fd;
	moved = -1;
	if (small) {
		/* A small table: the highest free number, counting down, so
		 * that the numbers the program's opens get stay its own (at a
		 * limit of 8 the report file took 3, and the program's first
		 * open got 4). */
		int n;

		for (n = (int)rl.rlim_cur - 1; n >= high && moved < 0; n--)
			moved = fcntl(fd, F_DUPFD_CLOEXEC, n);
	} else {
		moved = fcntl(fd, F_DUPFD_CLOEXEC, high);
	}
	/* Closed by the system call, not libc's close: that is a
	 * cancellation point, and a thread the program had asked to cancel
	 * was cancelled here, in its first wrapped call (a new thread's
	 * counters), before the target ran. */
	if (moved < 0 && or_none) {
		/* No number free up there: a low one kept would be one the
		 * program runs out of (600 threads each with a counter and a
		 * file of their own: ~100 of the program's opens failed with
		 * EMFILE). */
		sys_close(fd);
		errno = EMFILE;
		return -1;
	}
	if (moved < 0)
		return fd;
	sys_close(fd);
	return moved;
}

static int map_new_file(void)
{
	char base[PATH_MAX];
	struct cs_file_header *hdr;
	struct rlimit as;
	struct stat st;
	int fd, err, named;

	err = cs_settings_output_path(cs_g.settings.output, getpid(), prog_name(), base,
				      sizeof(base));
	if (err) {
		cs_log("CACHESHIM_OUTPUT expands to a path that is too long; not profiling");
		return err;
	}
	fd = open_unnamed(base);
	named = fd < 0;
	if (named)
		fd = create_exclusive(base, out_path, sizeof(out_path));
	else
		snprintf(out_path, sizeof(out_path), "%s", base); /* for messages */
	if (fd < 0) {
		cs_log("cannot create report file '%s': %s; not profiling", base, strerror(-fd));
		return fd;
	}
	fd = cs_fd_high(fd, 0); /* the report's: kept low if it must */
	if (named)
		path_absolute();
	if (fstat(fd, &st) < 0) {
		err = -errno;
		cs_log("cannot size report file '%s': %s; not profiling", out_path, strerror(errno));
		goto fail;
	}
	out_dev = st.st_dev;
	out_ino = st.st_ino;
	out_closed = 0;
	out_capacity = cs_g.settings.capacity;
	if (out_capacity > (fsize_limit() & ~4095ull)) {
		/* The program's file size limit: a smaller report, not a
		 * SIGXFSZ. */
		out_capacity = fsize_limit() & ~4095ull;
		if (out_capacity < CS_HEADER_SIZE + (64u << 10)) {
			err = -EFBIG;
			cs_log("file size limit (RLIMIT_FSIZE) too small for a report file; not "
			       "profiling");
			goto fail;
		}
	}
	if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY &&
	    out_capacity > (as.rlim_cur / 8 & ~4095ull)) {
		/* The mapping counts against the program's address-space
		 * limit: an eighth of it at most, so that the program's own
		 * allocations that fit without us fit with us. */
		out_capacity = as.rlim_cur / 8 & ~4095ull;
		if (out_capacity < CS_HEADER_SIZE + (64u << 10)) {
			err = -ENOMEM;
			cs_log("address-space limit (RLIMIT_AS) too small for a report file; not "
			       "profiling");
			goto fail;
		}
	}
	out_fd = fd;
	out_size = 0;
	out_full = 0;
	out_holes = 0;
	out_sparse = on_tmpfs(fd) && populate_known();
	/* With less room than a growth step, grow takes what it needs; a
	 * later reservation that finds no room makes the file full. */
	err = grow(CS_HEADER_SIZE);
	out_grows = err == 0;
	out_fd = -1;
	if (err == -EOPNOTSUPP || err == -ENOSYS) {
		/* No fallocate on this file system: a sparse file of the whole
		 * capacity.  Never after ENOSPC: a store into a page the file
		 * system cannot back is a SIGBUS in the program. */
		out_size = out_capacity;
		err = ftruncate(fd, (off_t)out_capacity) < 0 ? -errno : 0;
	}
	if (err < 0) {
		cs_log("cannot size report file '%s': %s; not profiling", out_path, strerror(-err));
		goto fail;
	}
	hdr = mmap(NULL, out_capacity, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (hdr == MAP_FAILED) {
		err = -errno;
		cs_log("cannot map report file '%s': %s; not profiling", out_path, strerror(errno));
		goto fail;
	}
	/* No readahead on faults: with large folios, the first touch of the
	 * header page made the kernel allocate and zero a large chunk of the
	 * file (~1 ms, a twentieth of a short program's run); blocks are
	 * faulted in page by page as they are reserved anyway. */
	madvise(hdr, out_capacity, MADV_RANDOM);
	/* The header's page backed before it is written (out_sparse). */
	if (out_sparse && madvise(hdr, CS_HEADER_SIZE, MADV_POPULATE_WRITE) != 0) {
		err = -errno;
		if (err == -EINVAL && out_grows) {
			/* Known (populate_known) yet refused here: all of the
			 * file so far allocated, as every later step will be. */
			out_sparse = 0;
			err = (int)sys_fallocate(fd, 0, out_size);
		} else if (err == -EINVAL) {
			out_sparse = 0;
			err = 0;
		}
		if (err < 0) {
			munmap(hdr, out_capacity);
			/* (A page that cannot be backed says EFAULT.) */
			cs_log("cannot size report file '%s': %s; not profiling", out_path,
			       strerror(err == -EFAULT ? ENOSPC : -err));
			goto fail;
		}
	}
	hdr->version = CS_FORMAT_VERSION;
	hdr->header_size = CS_HEADER_SIZE;
	hdr->capacity = out_capacity;
	hdr->used = CS_HEADER_SIZE;
	hdr->state = CS_STATE_RUNNING;
	hdr->pid = (uint32_t)getpid();
	hdr->ppid = (uint32_t)getppid();
	hdr->start_ns = now_ns();
	hdr->session = cs_g.settings.session;
	hdr->features = CS_FEATURE_NESTED_FIRST;
	snprintf(hdr->program, sizeof(hdr->program), "%s", cs_g.hdr_program);
	/* The magic last: a reader never sees a half-made header as valid. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(hdr->magic, CS_MAGIC, 8);
	if (!named) {
		err = publish(fd, base, out_path, sizeof(out_path));
		if (err) {
			/* Not so here: by its name, as before. */
			munmap(hdr, out_capacity);
			close(fd);
			tmpfile_off = 1;
			return map_new_file();
		}
		path_absolute();
	}
	out_fd = fd;
	cs_g.hdr = hdr;
	return 0;
fail:
	close(fd);
	if (named)
		unlink(out_path);
	return err;
}

int cs_output_open(void)
{
	return map_new_file();
}

int cs_output_populate(const void *p, uint64_t len)
{
	uint64_t off = (uint64_t)((const char *)p - (const char *)cs_g.hdr), q;
	uint64_t first = off & ~4095ull, end = (off + len + 4095) & ~4095ull;

	if (!len || sys_madvise((char *)cs_g.hdr + first, end - first, MADV_POPULATE_WRITE) == 0)
		return 0;
	/* A sparse file's page the file system could not back (no room):
	 * nothing may be stored there.  So too in a file with punched holes
	 * (an exec failed after the seal): touching such a page on a full
	 * disk was a SIGBUS. */
	if (out_sparse || __atomic_load_n(&out_holes, __ATOMIC_RELAXED))
		return -1;
	/* Without MADV_POPULATE_WRITE (before Linux 5.14): touch each page by
	 * an atomic add of 0, which writes back whatever another thread may
	 * have stored there meanwhile (its faults then count as page faults). */
	for (q = off; q < off + len; q = (q & ~4095ull) + 4096)
		__atomic_fetch_add((volatile char *)cs_g.hdr + q, 0, __ATOMIC_RELAXED);
	return 0;
}

/* Maps every page of [off, off + size) in now: a block's first touch
 * would otherwise happen inside some later call's bracket (an enclosing
 * target's, say) and count as that call's page faults.  And this runs
 * inside an enclosing call's bracket itself when a nested call needs a
 * new block, so the pages are mapped by MADV_POPULATE_WRITE, which the
 * kernel does not count as page-fault events; touching them is the
 * fallback for kernels without it (their faults then count there).
 *
 * Zeros are written over the block through the file first: on ext4 the
 * first write fault on each page of a shared file mapping allocates its
 * block in page_mkwrite (5-13 us a page, measured; a short ruby run has
 * ~300 pages of blocks), while one pwritev allocates the whole range and
 * leaves the faults cheap.  Only the block's own bytes are written (the
 * page it ends in may hold the next block, which another thread may be
 * writing already); the range was never written, so the zeros change
 * nothing.  If the write fails the faults just cost more.  Blocks under
 * 24 KB skip the write: for a few pages the extra system call costs more
 * than it saves (measured on ext4 here, µs a page, write + populate against
 * populate alone: 12 KB blocks 3.6-6.0 against 3.0-4.4; 20 KB about even;
 * 40 KB 1.6-2.2 against 2.8-3.0; 320 KB 1.1 against 2.8-3.8). */
#define CS_ZERO_WRITE_MIN (24u << 10)

static int prefault(uint64_t off, uint64_t size)
{
	static char zeros[4096];
	struct iovec iov[64];
	uint64_t first = (off + 4095) & ~4095ull, end = off + size, p, q;
	/* Never past the program's RLIMIT_FSIZE: that write would be its SIGXFSZ. */
	int n, fd = size >= CS_ZERO_WRITE_MIN && end <= fsize_limit() ? report_fd() : -1;

	for (p = first; fd >= 0 && p < end;) {
		for (n = 0, q = p; n < 64 && q < end; n++, q += iov[n - 1].iov_len) {
			iov[n].iov_base = zeros;
			iov[n].iov_len = end - q < sizeof(zeros) ? end - q : sizeof(zeros);
		}
		if (sys_pwritev(fd, iov, n, p) != (long)(q - p))
			break;
		p = q;
	}
	/* Mapped from the block's first page on, though that page may hold
	 * the block before it: that block may have left its tail unmapped
	 * (a series' later windows are mapped as calls reach them), and
	 * mapping a page in writes nothing. */
	return cs_output_populate((char *)cs_g.hdr + off, size);
}

int cs_output_no_room(void)
{
	return __atomic_load_n(&out_full, __ATOMIC_RELAXED);
}

int cs_output_prefault(const void *p, uint64_t len)
{
	/* Closed at exit, the windows no call reached are holes
	 * (punch_unused): none is mapped in any more (filled again). */
	if (__atomic_load_n(&out_closed, __ATOMIC_ACQUIRE))
		return -1;
	return prefault((uint64_t)((const char *)p - (const char *)cs_g.hdr), len);
}

static void pad_at(uint64_t off, uint64_t size)
{
	struct cs_block *b = (struct cs_block *)((char *)cs_g.hdr + off);

	__atomic_store_n(&b->size, (uint32_t)size, __ATOMIC_RELAXED);
	cs_output_publish(b, CS_BLOCK_PAD);
}

void *cs_output_reserve(uint32_t size)
{
	return cs_output_reserve_skewed(size, size, 8, 0);
}

__thread uint64_t cs_tls_refusal;

/* No block: why, for the calls that go unrecorded for it (cs_lost_call). */
static void *refused(uint64_t why)
{
	cs_tls_refusal = why;
	return NULL;
}

void *cs_output_reserve_skewed(uint32_t size, uint32_t populate, uint32_t align, uint32_t skew)
{
	struct cs_file_header *hdr = cs_g.hdr;
	uint64_t off = __atomic_load_n(&hdr->used, __ATOMIC_RELAXED), pad, end;
	struct cs_block *b;

	/* Full: nothing reserved any more, not even space (each try moved
	 * header.used on, and the sealed file was trimmed to a sparse one of
	 * the whole capacity: review helper 51). */
	if (__atomic_load_n(&out_full, __ATOMIC_RELAXED))
		return refused(CS_LOST_NO_ROOM);
	/* Blocks are 8-byte multiples, so a padding block (at least its
	 * 8-byte header) fits any gap to a larger alignment. */
	do {
		pad = (align - ((off + skew) & (align - 1))) & (align - 1);
		if (off & CS_USED_SEALED)
			return refused(CS_LOST_SEALED);
		if (off + pad + size > out_capacity)
			return refused(CS_LOST_FILE_FULL);
	} while (!__atomic_compare_exchange_n(&hdr->used, &off, off + pad + size, 1,
					      __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	end = off + pad + size;
	/* No room on the file system (or a page that cannot be backed): the
	 * reservation stays unused, and nothing is reserved after it. */
	if (out_full || grow(end) < 0)
		goto full;
	if (pad) {
		if (prefault(off, pad) < 0)
			goto full;
		pad_at(off, pad);
		off += pad;
	}
	b = (struct cs_block *)((char *)hdr + off);
	if (prefault(off, populate < size ? populate : size) < 0)
		goto full;
	__atomic_store_n(&b->size, size, __ATOMIC_RELAXED);
	return b;
full:
	out_full = 1;
	/* The reservation left a zero-size block, where a reader's walk ends:
	 * another thread's reservation already under way may still succeed
	 * past it, and its calls would be in no row and in no count (review
	 * helper 52).  Where this block's first page can be backed, a pad
	 * over the whole reservation keeps the walk going. */
	if (cs_syscall6(SYS_madvise, (long)((char *)hdr + (off & ~4095ull)), 4096,
			MADV_POPULATE_WRITE, 0, 0, 0) == 0)
		pad_at(off, end - off);
	return refused(CS_LOST_NO_ROOM);
}

/* Call-site and nested blocks (9-19 KB with one event) each cost a system
 * call and populate-only faults at 3-9 us a page when reserved one by one
 * (below CS_ZERO_WRITE_MIN); a thread that has made CS_ARENA_AFTER bytes
 * of them reserves the rest in arenas, as large as what it made so far
 * (32 to 256 KB), whose pages are written with zeros and mapped in one go
 * at ~1 us a page.  The unused part of an arena is a padding block, so
 * the file stays walkable at every moment: a block is carved off its
 * front by writing the padding header of what remains behind it first,
 * then the block's size over the old padding header (one 4-byte store: a
 * reader sees the arena either whole or split); the block keeps the
 * padding type until it is published.  A thread's first blocks are
 * reserved alone, so that the many threads of a program that starts a
 * thread per task, each making a call site or two, leave no unused arena
 * behind; and an exiting thread's unused rest goes to a few spare slots
 * that the next arena is taken from. */
#define CS_ARENA_AFTER (24u << 10)
#define CS_ARENA_MIN (32u << 10)
#define CS_ARENA_MAX (256u << 10)
#define CS_SPARES 8

/* Unused arena ends of exited threads: offset / 8 << 16 | length / 8
 * (at most CS_ARENA_MAX), 0 = empty slot. */
static uint64_t spares[CS_SPARES];

/* Takes size bytes off the front of a's unused part. */
static struct cs_block *split(struct cs_arena *a, uint64_t size)
{
	struct cs_block *b = (struct cs_block *)((char *)cs_g.hdr + a->next);

	if (a->end > a->next + size)
		pad_at(a->next + size, a->end - a->next - size);
	__atomic_store_n(&b->size, (uint32_t)size, __ATOMIC_RELEASE);
	a->next += size;
	return b;
}

/* Makes a spare of at least need bytes a's arena.  Returns 1 if one was. */
static int take_spare(struct cs_arena *a, uint64_t need)
{
	unsigned i;

	for (i = 0; i < CS_SPARES; i++) {
		uint64_t v = __atomic_load_n(&spares[i], __ATOMIC_ACQUIRE);

		if (v && (v & 0xffff) * 8 >= need &&
		    __atomic_compare_exchange_n(&spares[i], &v, 0, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			a->next = (v >> 16) * 8;
			a->end = a->next + (v & 0xffff) * 8;
			return 1;
		}
	}
	return 0;
}

void cs_output_arena_release(struct cs_arena *a)
{
	uint64_t len = a->end - a->next, v;
	unsigned i;

	/* A rest too small for a site block would hold a slot for good (a
	 * running thread moving to a new arena leaves such rests). */
	if (!cs_g.hdr || len < cs_site_block_size(cs_g.nevents) + CS_SITE_ALIGN ||
	    len > CS_ARENA_MAX)
		return;
	v = a->next / 8 << 16 | len / 8;
	for (i = 0; i < CS_SPARES; i++) {
		uint64_t empty = 0;

		if (__atomic_compare_exchange_n(&spares[i], &empty, v, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			break;
	}
	a->next = a->end = 0;
}

/* A block reserved on its own, counted as the thread's. */
static void *alone(struct cs_arena *a, uint32_t size, uint32_t align)
{
	void *b = cs_output_reserve_skewed(size, size, align, 0);

	if (b)
		a->used += size;
	return b;
}

void *cs_output_carve(struct cs_arena *a, uint32_t size, uint32_t align)
{
	uint64_t pad = (align - (a->next & (align - 1))) & (align - 1), want;
	struct cs_block *b;

	/* As cs_output_reserve: nothing new once the file is sealed (at exit,
	 * or while an exec is under way). */
	if (__atomic_load_n(&cs_g.hdr->used, __ATOMIC_ACQUIRE) & CS_USED_SEALED)
		return refused(CS_LOST_SEALED);
	if (!a->end || a->next + pad + size > a->end) {
		want = (a->used + 4095) & ~4095ull;
		want = want < CS_ARENA_MIN ? CS_ARENA_MIN : want > CS_ARENA_MAX ? CS_ARENA_MAX : want;
		/* A thread's first blocks, or a block too big for an arena. */
		if (a->used < CS_ARENA_AFTER || size + CS_SITE_ALIGN > want)
			return alone(a, size, align);
		/* The rest of the old arena may serve another thread. */
		cs_output_arena_release(a);
		if (!take_spare(a, size + CS_SITE_ALIGN)) {
			b = cs_output_reserve_skewed((uint32_t)want, (uint32_t)want, CS_SITE_ALIGN, 0);
			if (!b) /* no room for an arena near the end of the file */
				return alone(a, size, align);
			/* A new arena: one padding block until it is carved. */
			cs_output_publish(b, CS_BLOCK_PAD);
			a->next = (uint64_t)((char *)b - (char *)cs_g.hdr);
			a->end = a->next + want;
		}
		pad = (align - (a->next & (align - 1))) & (align - 1);
	}
	if (pad)
		split(a, pad);
	a->used += size;
	return split(a, size);
}

void cs_output_publish(void *block, uint32_t type)
{
	__atomic_store_n(&((struct cs_block *)block)->type, type, __ATOMIC_RELEASE);
}

/* The seal's stores: nothing reserved from now on, COMPLETE.  Returns
 * the bytes used. */
static uint64_t seal_stores(struct cs_file_header *hdr)
{
	uint64_t used = __atomic_fetch_or(&hdr->used, CS_USED_SEALED, __ATOMIC_ACQ_REL);

	hdr->end_ns = now_ns();
	__atomic_store_n(&hdr->state, CS_STATE_COMPLETE, __ATOMIC_RELEASE);
	return used & ~CS_USED_SEALED;
}

void cs_output_seal_stores(void)
{
	if (cs_g.hdr)
		seal_stores(cs_g.hdr);
}

void cs_output_seal(void)
{
	struct cs_file_header *hdr = cs_g.hdr;
	uint64_t used;
	int fd;

	if (!hdr)
		return;
	used = seal_stores(hdr);
	/* Threads still running keep updating blocks below `used`; nothing
	 * can be reserved beyond it any more, so trimming is safe. */
	used = (used + 4095) & ~4095ull;
	fd = report_fd();
	if (fd < 0 || ftruncate(fd, (off_t)used) < 0) {
		/* The file keeps its reserved size: still a valid report. */
	} else if (out_grows) {
		__atomic_store_n(&out_size, used, __ATOMIC_RELEASE);
	}
}

void cs_output_unseal(void)
{
	struct cs_file_header *hdr = cs_g.hdr;

	struct stat st;
	int fd;

	if (!hdr || (!out_grows && (out_capacity > fsize_limit() || report_fd() < 0 ||
				    ftruncate(out_fd, (off_t)out_capacity) < 0)))
		return;
	/* The size the seal's trim left, read back: a reservation's growth
	 * racing the seal may have set out_size past it after the trim (review
	 * helper 51), and stores there would be a SIGBUS. */
	fd = out_grows ? report_fd() : -1;
	if (fd >= 0 && sys_fstat(fd, &st) == 0)
		__atomic_store_n(&out_size, (uint64_t)st.st_size, __ATOMIC_RELEASE);
	hdr->end_ns = 0;
	__atomic_store_n(&hdr->state, CS_STATE_RUNNING, __ATOMIC_RELEASE);
	__atomic_fetch_and(&hdr->used, ~CS_USED_SEALED, __ATOMIC_ACQ_REL);
}

/* Holes smaller than this are not worth their fallocate: on ext4 each is
 * a journal transaction (~0.1-0.2 ms, at the exit of every process). */
#define CS_PUNCH_MIN (64u << 10)

/* At most this many holes a seal (~50 us each on ext4): a process whose
 * 64 targets were each called a few times made 67, 3-4 ms at its exit;
 * the later series blocks keep their windows allocated. */
#define CS_PUNCH_MAX 16

/* [from, to) of the file, rounded inwards to whole pages, made a hole if
 * at least CS_PUNCH_MIN.  Returns 1 if it was, 0 if too small, -errno. */
static int punch(int fd, uint64_t from, uint64_t to)
{
	long r;

	from = (from + 4095) & ~4095ull;
	to &= ~4095ull;
	if (to < from + CS_PUNCH_MIN)
		return 0;
	r = cs_syscall6(SYS_fallocate, fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (long)from,
			(long)(to - from), 0, 0);
	return r < 0 ? (int)r : 1;
}

/* The series windows of the sealed file [0, used) that no call ever
 * reached, given back to the file system.  A series block reserves 256
 * windows (~330 KB with one event), of which a process making a few
 * hundred calls uses 16; on a disk file system the file grew by fallocate
 * over all of them, so each short process of a build or of a shell script
 * run under the shim kept ~1 MB on disk (a shell loop of 3,000 processes
 * with malloc and free as targets: 3.3 GB, now 1.1 GB).  Their bytes were
 * zeros and read as zeros.  A window is stored into only after it is
 * mapped in by a system call (populate_windows, cs_output_prefault), which
 * gets it space or fails (no store into a hole the file system cannot
 * fill: a SIGBUS), so a seal undone (an exec that failed) is no danger:
 * once there are holes, a failed MADV_POPULATE_WRITE gives the windows
 * up (out_holes; touching them was the SIGBUS, test_holes_fulldisk.sh),
 * and where the kernel has none, nothing is punched.
 * The padding blocks are left allocated: a thread may be carving a block
 * off one right now, storing into it directly.  Each hole costs a journal
 * transaction on ext4 (~0.15 ms): at most one per series block, those of
 * a process whose targets were called often enough have none. */
static void punch_unused(const struct cs_file_header *hdr, uint64_t used, int fd)
{
	uint64_t off = CS_HEADER_SIZE;
	unsigned holes = 0;

	while (off + sizeof(struct cs_block) <= used && holes < CS_PUNCH_MAX) {
		const struct cs_block *b = (const struct cs_block *)((const char *)hdr + off);
		uint32_t size = __atomic_load_n(&b->size, __ATOMIC_ACQUIRE);
		int r = 0;

		if (size < sizeof(*b) || size % 8 || size > used - off)
			return; /* a reservation interrupted, or not ours to read */
		if (__atomic_load_n(&b->type, __ATOMIC_ACQUIRE) == CS_BLOCK_SERIES &&
		    size >= sizeof(struct cs_series_block)) {
			const struct cs_series_block *sb = (const struct cs_series_block *)b;
			uint64_t ready = __atomic_load_n(&sb->ready, __ATOMIC_SEQ_CST);

			if (ready < CS_SERIES_WINDOWS &&
			    sb->window_size * CS_SERIES_WINDOWS <= size - sizeof(*sb))
				r = punch(fd, off + sizeof(*sb) + ready * sb->window_size, off + size);
		}
		if (r == -EOPNOTSUPP || r == -ENOSYS || r == -EPERM)
			return; /* not on this file system (or refused): no more tries */
		holes += r == 1;
		off += size;
	}
}

uint64_t cs_output_punch_gen(void)
{
	return __atomic_load_n(&punch_gen, __ATOMIC_SEQ_CST);
}

void cs_output_seal_gone(void)
{
	uint64_t used;
	int fd;

	if (!cs_g.hdr)
		return;
	cs_output_seal();
	/* On a tmpfs the windows no call reached were never backed. */
	if (out_sparse || __atomic_load_n(&cs_g.sandboxed, __ATOMIC_ACQUIRE))
		return;
	/* Without MADV_POPULATE_WRITE a window is mapped in by touching it,
	 * which in a hole the file system cannot fill is a SIGBUS: a file
	 * unsealed again (an exec that failed) must have no holes then. */
	if (!populate_known())
		return;
	used = __atomic_load_n(&cs_g.hdr->used, __ATOMIC_ACQUIRE) & ~CS_USED_SEALED;
	fd = report_fd();
	/* One thread at a time (an _exit in one thread while another
	 * execs): two starts would make the count even again while both
	 * punch, and a thread mapping windows in would not see them. */
	if (fd < 0 || __atomic_exchange_n(&punching, 1, __ATOMIC_ACQ_REL))
		return;
	__atomic_store_n(&out_holes, 1, __ATOMIC_RELAXED);
	/* Odd before any series' ready is read (sequentially consistent, as
	 * the other side's), even again once every punch is made: a thread
	 * raising ready meanwhile is either seen here, or sees the count
	 * move (or odd) and lowers it again.  A count taken once, at the
	 * start, was no guard: a thread that read it after the increment
	 * mapped windows in, filled them, and the punch of its block, made
	 * after, took its calls (test_holes_race.sh). */
	__atomic_fetch_add(&punch_gen, 1, __ATOMIC_SEQ_CST);
	punch_unused(cs_g.hdr, used, fd);
	__atomic_fetch_add(&punch_gen, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&punching, 0, __ATOMIC_RELEASE);
}

void cs_output_close(void)
{
	int fd;

	if (!cs_g.hdr)
		return;
	cs_output_seal_gone();
	/* Only a descriptor that is still ours is closed. */
	fd = report_fd();
	__atomic_store_n(&out_closed, 1, __ATOMIC_RELEASE);
	if (fd >= 0)
		sys_close(fd);
	out_fd = -1;
}

void cs_output_forget(void)
{
	int fd;

	/* A forked child's file is a new one: the parent's spares are not in it. */
	memset(spares, 0, sizeof(spares));
	/* Nor is a punch another thread of the parent was making (an odd
	 * count would keep the child's series from ever growing). */
	__atomic_store_n(&punch_gen, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&punching, 0, __ATOMIC_RELAXED);
	if (cs_g.hdr)
		munmap(cs_g.hdr, out_capacity);
	fd = out_fd >= 0 ? report_fd() : -1;
	__atomic_store_n(&out_closed, 1, __ATOMIC_RELEASE);
	if (fd >= 0)
		sys_close(fd);
	out_fd = -1;
	cs_g.hdr = NULL;
}

/* ---- notes (cs_log_note): lines also kept in the file ---- */

/* Writes text into a note block of the report file: 0, or -1 when there
 * is no file (yet, or under the program's seccomp filter, which may
 * refuse the file's growth) or no room. */
static int keep_note(const char *text, size_t n)
{
	struct cs_note_block *b;

	if (!cs_g.hdr || cs_g.sandboxed)
		return -1;
	b = cs_output_reserve(sizeof(*b));
	if (!b)
		return -1;
	memcpy(b->text, text, n);
	memset(b->text + n, 0, sizeof(b->text) - n);
	cs_output_publish(b, CS_BLOCK_NOTE);
	return 0;
}

void cs_log_note(const char *fmt, ...)
{
	char text[CS_NOTE_TEXT];
	int saved = errno, n;
	va_list ap;

	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(text) - 1)
		n = (int)sizeof(text) - 1;
	cs_log_printable(text, (size_t)n);
	if (keep_note(text, (size_t)n) < 0 || !cs_g.settings.launcher)
		cs_log("%s", text);
	errno = saved;
}
