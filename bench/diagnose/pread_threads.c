/*
 * pread_threads: what a second thread in the process costs a bare pread loop.
 *
 *   pread_threads FILE SECONDS MODE
 *
 * MODE 0: one thread (the kernel's fdget skips the file reference: the descriptor table has
 * one user). MODE 1: the same loop with a second thread that only sleeps (every pread now
 * takes and drops a reference on the file). MODE 2: the second thread wakes every 10 ms.
 * 4 KiB reads at random 4 KiB-aligned offsets, xorshift64 as in ../pread_loop.c; prints
 * "mode=M iops=N". How docs/PERFORMANCE.md measured it (interleaved pairs, 2 s each):
 *
 *   gcc -O2 -o /tmp/pt bench/diagnose/pread_threads.c -lpthread
 *   for r in $(seq 10); do /tmp/pt FILE 2 0; /tmp/pt FILE 2 1; done
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *sleeper(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

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
	if (argc < 4) {
		fprintf(stderr, "usage: %s FILE SECONDS MODE(0|1|2)\n", argv[0]);
		return 2;
	}
	double seconds = atof(argv[2]);
	int mode = atoi(argv[3]);
	int fd = open(argv[1], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		perror(argv[1]);
		return 1;
	}
	size_t bs = 4096;
	uint64_t blocks = (uint64_t)st.st_size / bs;
	char *buf;
	if (blocks == 0 || posix_memalign((void **)&buf, 4096, bs) != 0) {
		fprintf(stderr, "%s: empty, or no memory\n", argv[1]);
		return 1;
	}
	pthread_t other;
	if (mode == 1)
		pthread_create(&other, NULL, sleeper, NULL);
	if (mode == 2)
		pthread_create(&other, NULL, ticker, NULL);
	uint64_t x = 0x9E3779B97F4A7C15ull, ops = 0;
	double start = now(), end = start + seconds, t = start;
	for (;;) {
		for (int i = 0; i < 1024; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			if (pread(fd, buf, bs, (off_t)((x % blocks) * bs)) != (ssize_t)bs) {
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
	printf("mode=%d iops=%.0f\n", mode, ops / (t - start));
	return 0;
}
