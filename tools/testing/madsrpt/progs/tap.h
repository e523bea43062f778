/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tap.h - TAP output and a millisecond clock for the harness's userspace
 * programs.  Header-only: each program is one .c file that ms_build_prog
 * compiles on its own.
 */
#ifndef MADSRPT_TAP_H
#define MADSRPT_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

/* Test points printed so far, and how many of them failed. */
static int tap_n, tap_failed;

static void tap(int ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Print the next test point, "ok N - ..." or "not ok N - ...". */
static void tap(int ok, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	if (!ok)
		tap_failed++;
	printf("%s %d - ", ok ? "ok" : "not ok", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* Milliseconds on the monotonic clock. */
static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#endif
