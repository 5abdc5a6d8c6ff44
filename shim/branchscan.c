/* SPDX-License-Identifier: MIT */
/* Direct branch targets of a whole module, so that an entry patch can be
 * refused when any code of the module (not only the function itself)
 * jumps into the bytes the patch replaces.  Scanning a large library takes
 * a while, so the result is cached per build-id, in memory and on disk as
 * offsets from the load bias (valid at any load address). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <Zydis/Zydis.h>

#include "shim/internal.h"

#define CACHE_MAGIC "CSBRANCH"
#define CACHE_VERSION 2u /* 2: word-wise checksum */
#define BUILD_ID_MAX 64u

/* On-disk header, followed by count uint64_t offsets (sorted, unique). */
struct cache_header {
	char magic[8];
	uint32_t version;
	uint32_t build_id_len;
	uint8_t build_id[BUILD_ID_MAX];
	uint64_t count;
	uint64_t sum; /* FNV-1a of the offsets: catches a damaged body */
};

_Static_assert(sizeof(struct cache_header) == 96, "cache file header layout");

/* In-memory cache: one entry per build-id scanned (malloc'd offsets);
 * branch sets point into them until cs_branches_forget. */
struct mem_entry {
	struct mem_entry *next;
	uint8_t id[BUILD_ID_MAX];
	unsigned id_len;
	uint64_t *off;
	size_t n;
};

pthread_mutex_t cs_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mem_entry *mem_cache;

struct vec {
	uint64_t *v;
	size_t n, cap;
};

static int vec_push(struct vec *a, uint64_t x)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 1024;
		uint64_t *v = realloc(a->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = x;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static size_t sort_unique(uint64_t *v, size_t n)
{
	size_t i, k = 0;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 0; i < n; i++)
		if (k == 0 || v[k - 1] != v[i])
			v[k++] = v[i];
	return k;
}

static int in_ranges(const uint64_t *lo, const uint64_t *hi, unsigned n, uint64_t a)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (a >= lo[i] && a < hi[i])
			return 1;
	return 0;
}

/* Target of x at addr: a relative branch's or a rip-relative lea's.
 * Returns 1 and *t, or 0. */
static int target_of(const ZydisDecodedInstruction *x, const ZydisDecodedOperand *op, uint64_t addr,
		     uint64_t *t)
{
	unsigned i;

	for (i = 0; i < x->operand_count_visible; i++) {
		int rel = op[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && op[i].imm.is_relative;
		int lea = x->mnemonic == ZYDIS_MNEMONIC_LEA &&
			  op[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
			  op[i].mem.base == ZYDIS_REGISTER_RIP;
		ZyanU64 r;

		if ((rel || lea) && ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(x, &op[i], addr, &r))) {
			*t = r;
			return 1;
		}
	}
	return 0;
}

/* Decodes [a, end) linearly (instructions may extend to limit), adding
 * targets in the ranges to v.  Operands are decoded only for relative
 * instructions and lea: the scan of a large library stays fast.  Returns 0
 * or -ENOMEM. */
static int scan_span(const ZydisDecoder *d, uint64_t a, uint64_t end, uint64_t limit,
		     const uint64_t *lo, const uint64_t *hi, unsigned nranges, struct vec *v)
{
	ZydisDecoderContext ctx;
	ZydisDecodedInstruction x;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT_VISIBLE];

	while (a < end) {
		uint64_t t, avail = limit - a;

		if (avail > ZYDIS_MAX_INSTRUCTION_LENGTH)
			avail = ZYDIS_MAX_INSTRUCTION_LENGTH;
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(d, &ctx, (const void *)(uintptr_t)a,
								avail, &x))) {
			a++;
			continue;
		}
		if (((x.attributes & ZYDIS_ATTRIB_IS_RELATIVE) ||
		     x.mnemonic == ZYDIS_MNEMONIC_LEA) &&
		    ZYAN_SUCCESS(
			    ZydisDecoderDecodeOperands(d, &ctx, &x, op, x.operand_count_visible)) &&
		    target_of(&x, op, a, &t) && in_ranges(lo, hi, nranges, t) && vec_push(v, t))
			return -ENOMEM;
		a += x.length;
	}
	return 0;
}

/* Index of the first of the n sorted values v[] above x. */
static size_t first_above(const uint64_t *v, size_t n, uint64_t x)
{
	size_t l = 0, h = n;

	while (l < h) {
		size_t m = l + (h - l) / 2;

		if (v[m] <= x)
			l = m + 1;
		else
			h = m;
	}
	return l;
}

/* Decodes every range, restarting at each function start inside it, into
 * v (sorted, unique).  Returns 0 or -ENOMEM. */
static int scan(const uint64_t *lo, const uint64_t *hi, unsigned nranges, const uint64_t *starts,
		size_t nstarts, struct vec *v)
{
	ZydisDecoder d;
	unsigned r;

	ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (r = 0; r < nranges; r++) {
		uint64_t a = lo[r];
		size_t s;

		if (hi[r] <= lo[r])
			continue;
		for (s = first_above(starts, nstarts, lo[r]); s < nstarts && starts[s] < hi[r];
		     s++) {
			if (scan_span(&d, a, starts[s], hi[r], lo, hi, nranges, v))
				return -ENOMEM;
			a = starts[s];
		}
		if (scan_span(&d, a, hi[r], hi[r], lo, hi, nranges, v))
			return -ENOMEM;
	}
	v->n = sort_unique(v->v, v->n);
	return 0;
}

static uint64_t checksum(const uint64_t *v, size_t n)
{
	/* A 64-bit FNV-1a step per word in four independent lanes: a
	 * byte-wise chain of multiplies was ~1.5 ms for libruby's list. */
	uint64_t h[4] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull, 0x9e3779b97f4a7c15ull,
			 0xc2b2ae3d27d4eb4full};
	size_t i;

	for (i = 0; i < n; i++)
		h[i & 3] = (h[i & 3] ^ v[i]) * 0x100000001b3ull;
	/* Each step is one-to-one in the word or lane it takes in, so a
	 * change in any one word changes the result. */
	for (i = 1; i < 4; i++)
		h[0] = (h[0] * 0x100000001b3ull) ^ h[i];
	return h[0] ^ n;
}

/* Cache directory into dir (created 0700 when missing when create is
 * set).  Returns 0 or -1. */
static int cache_dir(char *dir, size_t len, int create)
{
	const char *x = secure_getenv("XDG_CACHE_HOME");
	const char *home = secure_getenv("HOME");
	int n;

	if (x && x[0] == '/') {
		if (create && mkdir(x, 0700) && errno != EEXIST)
			return -1;
		n = snprintf(dir, len, "%s/cacheshim", x);
	} else if (home && home[0] == '/') {
		n = snprintf(dir, len, "%s/.cache", home);
		if (n < 0 || (size_t)n >= len)
			return -1;
		if (create && mkdir(dir, 0700) && errno != EEXIST)
			return -1;
		n = snprintf(dir, len, "%s/.cache/cacheshim", home);
	} else {
		return -1;
	}
	if (n < 0 || (size_t)n >= len)
		return -1;
	if (create && mkdir(dir, 0700) && errno != EEXIST)
		return -1;
	return 0;
}

static int cache_path(char *path, size_t len, const uint8_t *id, unsigned id_len, int create)
{
	char dir[4096], hex[2 * BUILD_ID_MAX + 1];
	unsigned i;
	int n;

	if (cache_dir(dir, sizeof(dir), create))
		return -1;
	for (i = 0; i < id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	hex[2 * id_len] = 0;
	n = snprintf(path, len, "%s/branches-%s.bin", dir, hex);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, (const char *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

/* Maps the offsets cached on disk for build-id id.  Every check failing
 * (size, magic, version, build-id, order, checksum, offsets outside the
 * executable ranges) means no cache.  Mapped rather than read: libruby's
 * list is ~500 KB, and reading it into fresh memory (its page faults, the
 * copy, then a rebased copy) was a third of the shim's start-up in ruby.
 * Returns 0 and *map (*maplen bytes; the offsets follow the header), or
 * -1. */
static int disk_read(const uint8_t *id, unsigned id_len, uint64_t base, const uint64_t *lo,
		     const uint64_t *hi, unsigned nranges, void **map, size_t *maplen)
{
	const struct cache_header *h;
	char path[4096 + 64];
	const uint64_t *v;
	struct stat st;
	void *p = MAP_FAILED;
	size_t i, len = 0;
	int fd;

	if (cache_path(path, sizeof(path), id, id_len, 0))
		return -1;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (uint64_t)st.st_size < sizeof(*h) || (uint64_t)st.st_size > SIZE_MAX / 2)
		goto fail;
	len = (size_t)st.st_size;
	/* Private and read-only: a writer replaces the file by rename, never
	 * in place, so the mapped contents do not change under us. */
	p = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	h = p;
	v = (const uint64_t *)(h + 1);
	if (memcmp(h->magic, CACHE_MAGIC, sizeof(h->magic)) || h->version != CACHE_VERSION ||
	    h->build_id_len != id_len || memcmp(h->build_id, id, id_len) ||
	    h->count > (len - sizeof(*h)) / sizeof(uint64_t) ||
	    len != sizeof(*h) + h->count * sizeof(uint64_t) || checksum(v, h->count) != h->sum)
		goto fail;
	/* Sorted, and inside the executable ranges: the ends are checked
	 * against them, the rest only for order (one compare per offset;
	 * the checksum already vouches for the contents). */
	for (i = 1; i < h->count; i++)
		if (v[i] <= v[i - 1])
			goto fail;
	if (h->count && (!in_ranges(lo, hi, nranges, base + v[0]) ||
			 !in_ranges(lo, hi, nranges, base + v[h->count - 1])))
		goto fail;
	/* Used now: the least recently used files are the ones pruned. */
	futimens(fd, NULL);
	close(fd);
	*map = p;
	*maplen = len;
	return 0;
fail:
	if (p != MAP_FAILED)
		munmap(p, len);
	close(fd);
	return -1;
}

/* Writes the offsets for build-id id: temporary file, then rename, so a
 * reader sees a whole file or none.  Failures are silent (no cache). */
/* The cache keeps at most this many modules' files: every rebuilt library
 * or program has a new build-id, and its old file would stay forever. */
#define CACHE_MAX_FILES 256

struct cache_entry {
	struct timespec mtime;
	char name[160]; /* branches-<hex build-id, up to 64 bytes>.bin[.pid.tmp] */
};

static int older(const void *a, const void *b)
{
	const struct cache_entry *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	return (x->mtime.tv_nsec > y->mtime.tv_nsec) - (x->mtime.tv_nsec < y->mtime.tv_nsec);
}

/* Removes the least recently used files (a hit refreshes a file's mtime)
 * beyond CACHE_MAX_FILES, and temporary files of writers that died more
 * than an hour ago.  Only our own regular files named like ours. */
static void prune(const char *dir)
{
	struct cache_entry *e = NULL, *grown;
	size_t n = 0, cap = 0, i;
	struct dirent *d;
	struct stat st;
	DIR *dp;
	int dfd;

	dp = opendir(dir);
	if (!dp)
		return;
	dfd = dirfd(dp);
	while ((d = readdir(dp))) {
		size_t len = strlen(d->d_name);
		int tmp = len > 4 && !strcmp(d->d_name + len - 4, ".tmp");

		if (strncmp(d->d_name, "branches-", 9) || len >= sizeof(e->name) ||
		    fstatat(dfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode) ||
		    st.st_uid != geteuid())
			continue;
		if (tmp) {
			if (st.st_mtime < time(NULL) - 3600)
				unlinkat(dfd, d->d_name, 0);
			continue;
		}
		if (len < 4 || strcmp(d->d_name + len - 4, ".bin"))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 512;
			grown = realloc(e, cap * sizeof(*e));
			if (!grown)
				break;
			e = grown;
		}
		e[n].mtime = st.st_mtim;
		memcpy(e[n].name, d->d_name, len + 1);
		n++;
	}
	if (n > CACHE_MAX_FILES) {
		qsort(e, n, sizeof(*e), older);
		for (i = 0; i < n - CACHE_MAX_FILES; i++)
			unlinkat(dfd, e[i].name, 0);
	}
	free(e);
	closedir(dp);
}

static void disk_write(const uint8_t *id, unsigned id_len, const uint64_t *off, size_t n)
{
	struct cache_header h;
	char path[4096 + 64], tmp[4096 + 96];
	int fd, k;

	if (cache_path(path, sizeof(path), id, id_len, 1))
		return;
	k = snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	if (k < 0 || (size_t)k >= sizeof(tmp))
		return;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, CACHE_MAGIC, sizeof(h.magic));
	h.version = CACHE_VERSION;
	h.build_id_len = id_len;
	memcpy(h.build_id, id, id_len);
	h.count = n;
	h.sum = checksum(off, n);
	if (write_all(fd, &h, sizeof(h)) || write_all(fd, off, n * sizeof(*off))) {
		close(fd);
		unlink(tmp);
		return;
	}
	if (close(fd) || rename(tmp, path)) {
		unlink(tmp);
		return;
	}
	*strrchr(path, '/') = '\0';
	prune(path);
}

static struct mem_entry *mem_find(const uint8_t *id, unsigned id_len)
{
	struct mem_entry *e;

	for (e = mem_cache; e; e = e->next)
		if (e->id_len == id_len && !memcmp(e->id, id, id_len))
			return e;
	return NULL;
}

/* Remembers offsets for id, taking ownership of off (malloc'd).  Returns
 * the entry, or NULL (memory short: off freed). */
static struct mem_entry *mem_add(const uint8_t *id, unsigned id_len, uint64_t *off, size_t n)
{
	struct mem_entry *e = calloc(1, sizeof(*e));

	if (!e) {
		free(off);
		return NULL;
	}
	memcpy(e->id, id, id_len);
	e->id_len = id_len;
	e->off = off;
	e->n = n;
	e->next = mem_cache;
	mem_cache = e;
	return e;
}

static void use(struct cs_branch_set *out, const struct mem_entry *e, uint64_t base)
{
	out->off = e->off;
	out->n = e->n;
	out->base = base;
}

int cs_branches_scan_ranges(const uint64_t *lo, const uint64_t *hi, unsigned nranges,
			    const uint64_t *starts, size_t nstarts, uint64_t base,
			    const uint8_t *build_id, unsigned build_id_len, int disk,
			    struct cs_branch_set *out)
{
	struct vec v = {NULL, 0, 0};
	struct mem_entry *e;
	size_t i, maplen;
	void *map;
	int err;

	memset(out, 0, sizeof(*out));
	if (build_id_len > BUILD_ID_MAX || !build_id)
		build_id_len = 0;
	if (build_id_len) {
		pthread_mutex_lock(&cs_cache_lock);
		e = mem_find(build_id, build_id_len);
		if (e)
			use(out, e, base);
		pthread_mutex_unlock(&cs_cache_lock);
		if (e)
			return 0;
		/* The disk file's mapping belongs to this set alone and is
		 * unmapped with it, at the end of the patching pass: a mapping
		 * kept for later passes would turn someone truncating the file
		 * meanwhile into a SIGBUS in the program. */
		if (disk && !disk_read(build_id, build_id_len, base, lo, hi, nranges, &map, &maplen)) {
			out->off = (const uint64_t *)((const struct cache_header *)map + 1);
			out->n = ((const struct cache_header *)map)->count;
			out->base = base;
			out->map = map;
			out->maplen = maplen;
			return 0;
		}
	}
	err = scan(lo, hi, nranges, starts, nstarts, &v);
	if (err) {
		free(v.v);
		return err;
	}
	if (!v.v && !(v.v = malloc(1)))
		return -ENOMEM;
	/* Addresses become offsets from the load bias, valid at any load
	 * address. */
	for (i = 0; i < v.n; i++)
		v.v[i] -= base;
	if (!build_id_len) {
		out->owned = v.v;
		out->off = v.v;
		out->n = v.n;
		out->base = base;
		return 0;
	}
	pthread_mutex_lock(&cs_cache_lock);
	if (disk)
		disk_write(build_id, build_id_len, v.v, v.n);
	e = mem_find(build_id, build_id_len);
	if (e)
		free(v.v); /* another thread's pass got there first */
	else
		e = mem_add(build_id, build_id_len, v.v, v.n);
	if (e)
		use(out, e, base);
	pthread_mutex_unlock(&cs_cache_lock);
	return e ? 0 : -ENOMEM;
}

int cs_branches_scan(struct cs_elf_module *m, uint64_t base, int disk, struct cs_branch_set *out)
{
	uint64_t lo[16], hi[16];
	const uint64_t *starts = NULL;
	const uint8_t *id = NULL;
	unsigned nranges = cs_elf_exec_ranges(m, lo, hi, 16);
	size_t nstarts = cs_elf_fde_starts(m, &starts);
	unsigned id_len = cs_elf_build_id(m, &id);

	return cs_branches_scan_ranges(lo, hi, nranges, starts, nstarts, base, id, id_len, disk,
				       out);
}

int cs_branches_inside(const struct cs_branch_set *s, uint64_t lo, uint64_t hi)
{
	/* Modulo 2^64: a module loaded below the address it was linked at
	 * has a "negative" load bias, and its offsets are its link-time
	 * addresses (no early return on lo < base: that skipped the check for
	 * such modules, and an unsafe patch crashed the program). */
	size_t i = first_above(s->off, s->n, lo - s->base);

	return i < s->n && s->off[i] + s->base < hi;
}

void cs_branches_free(struct cs_branch_set *s)
{
	free(s->owned);
	if (s->map)
		munmap(s->map, s->maplen);
	memset(s, 0, sizeof(*s));
}

void cs_branches_forget(void)
{
	struct mem_entry *e, *next;

	pthread_mutex_lock(&cs_cache_lock);
	for (e = mem_cache; e; e = next) {
		next = e->next;
		free(e->off);
		free(e);
	}
	mem_cache = NULL;
	pthread_mutex_unlock(&cs_cache_lock);
}
