// SPDX-License-Identifier: GPL-2.0
/*
 * Windowed filters across hosts. Each host's filter rotates on its own
 * timer, so a generation's index (0, the newest, 1, ...) means different
 * things on two hosts, and its rotation count even more so. What they
 * share is the wall clock: join starts every filter's period on a
 * multiple of P = W / G since the Unix epoch (age_ms = now mod P), so
 * the generation that became the newest at time t holds epoch
 * round(t / P) on every host. Blocks travel with their epoch; a receiver
 * maps it to its own generation index (fleet.c). Rounding absorbs clock
 * skew and timer drift below P / 2.
 */
#include "bloomsync.h"

/* P = W / G in ms; 0 for a plain filter or a window rotated only by hand. */
uint64_t window_period(uint32_t window_ms, uint32_t generations)
{
	return generations ? window_ms / generations : 0;
}

/*
 * The epoch of a filter's newest generation, which became the newest
 * @age_ms before @now_ms (CLOCK_REALTIME): the nearest multiple of P.
 */
int64_t epoch_of_newest(uint64_t now_ms, uint64_t age_ms, uint64_t period)
{
	if (!period)
		return 0;
	if (age_ms > now_ms)
		age_ms = now_ms;
	return (int64_t)((now_ms - age_ms + period / 2) / period);
}

/* IMPORT's age_ms that puts a new filter's rotations on the schedule. */
uint32_t age_for_schedule(uint64_t now_ms, uint64_t period)
{
	return period ? (uint32_t)(now_ms % period) : 0;
}
