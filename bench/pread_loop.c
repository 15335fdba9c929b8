/*
 * pread_loop: the floor for "cache-resident 4 KiB random reads, one thread, psync".
 *
 *   pread_loop FILE SECONDS [BS]
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
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s FILE SECONDS [BS]\n", argv[0]);
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
	double el = t - start;
	printf("iops=%.1f ops=%llu seconds=%.3f bs=%zu file_bytes=%lld\n", ops / el,
	       (unsigned long long)ops, el, bs, (long long)st.st_size);
	free(buf);
	close(fd);
	return 0;
}
