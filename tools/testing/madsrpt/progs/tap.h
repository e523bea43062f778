/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tap.h - TAP output, a millisecond clock and ARRAY_SIZE() for the
 * harness's userspace programs.  Header-only: each program is one .c file
 * that is compiled on its own, and the functions are static inline so that
 * a program may leave some of them unused.
 */
#ifndef MADSRPT_TAP_H
#define MADSRPT_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Test points printed so far, and how many of them failed. */
static int tap_n, tap_failed;

static inline void vtap(int ok, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* tap() for a caller with the arguments in a va_list. */
static inline void vtap(int ok, const char *fmt, va_list ap)
{
	tap_n++;
	if (!ok)
		tap_failed++;
	printf("%s %d - ", ok ? "ok" : "not ok", tap_n);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
}

static inline void tap(int ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Print the next test point, "ok N - ..." or "not ok N - ...". */
static inline void tap(int ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vtap(ok, fmt, ap);
	va_end(ap);
}

/* Milliseconds on the monotonic clock. */
static inline double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#endif
