/*
 * pread_loop: the floor for "cache-resident 4 KiB random reads, one thread, psync".
 *
 *   pread_loop FILE SECONDS [BS [OTHER]]
 *
 * Opens FILE read-only, then for SECONDS seconds issues pread(fd, buf, BS, off) at
 * random BS-aligned offsets inside the file (xorshift64, no modulo bias worth caring
 * about at these sizes), counting completed calls. The clock is checked once every
 * 1024 reads so timing costs nothing measurable. Prints one line:
 *
 *   iops=<float> ops=<n> seconds=<float> bs=<n> file_bytes=<n>
 *
 * No latency histograms, no per-op timestamps, no stats: this is what a benchmark tool
 * could at best achieve with the same syscall.
 *
 * OTHER (a diagnosis, not part of the bench) adds a second thread to the process: `idle`
 * (it only sleeps) or `tick` (it wakes every 10 ms). With more than one thread, every pread
 * takes and drops a reference on the file, which a single-threaded process skips (fdget in
 * the kernel's fs/file.c); docs/PERFORMANCE.md measured it with interleaved pairs:
 *
 *   for r in $(seq 10); do pread_loop FILE 2 4096; pread_loop FILE 2 4096 idle; done
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile int stop;

/* The second thread of OTHER=idle: never runs again. */
static void *sleeper(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

/* The second thread of OTHER=tick: wakes every 10 ms, as bakeoff's driver thread does. */
static void *ticker(void *arg)
{
	struct timespec t = { 0, 10000000 };
	(void)arg;
	while (!stop)
		nanosleep(&t, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s FILE SECONDS [BS [idle|tick]]\n", argv[0]);
		return 2;
	}
	const char *other = argc > 4 ? argv[4] : NULL;
	if (other && strcmp(other, "idle") != 0 && strcmp(other, "tick") != 0) {
		fprintf(stderr, "%s: OTHER is idle or tick, not %s\n", argv[0], other);
		return 2;
	}
	double seconds = atof(argv[2]);
	size_t bs = argc > 3 ? strtoull(argv[3], NULL, 0) : 4096;
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		perror("fstat");
		return 1;
	}
	uint64_t blocks = (uint64_t)st.st_size / bs;
	if (blocks == 0) {
		fprintf(stderr, "%s: smaller than one block\n", argv[1]);
		return 1;
	}
	char *buf;
	if (posix_memalign((void **)&buf, 4096, bs) != 0) {
		perror("posix_memalign");
		return 1;
	}
	pthread_t second;
	if (other && pthread_create(&second, NULL, strcmp(other, "idle") == 0 ? sleeper : ticker,
				    NULL) != 0) {
		fprintf(stderr, "cannot start the second thread\n");
		return 1;
	}
	uint64_t x = 0x9E3779B97F4A7C15ull, ops = 0;
	double start = now(), end = start + seconds, t = start;
	for (;;) {
		for (int i = 0; i < 1024; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			off_t off = (off_t)((x % blocks) * bs);
			if (pread(fd, buf, bs, off) != (ssize_t)bs) {
				perror("pread");
				return 1;
			}
		}
		ops += 1024;
		t = now();
		if (t >= end)
			break;
	}
	stop = 1;
	double el = t - start;
	printf("iops=%.1f ops=%llu seconds=%.3f bs=%zu file_bytes=%lld\n", ops / el,
	       (unsigned long long)ops, el, bs, (long long)st.st_size);
	free(buf);
	close(fd);
	return 0;
}
