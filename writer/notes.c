/* notes.c - what any thread or signal handler posts to the stream without
 * the writer's lock: sonde's messages (sd_writer_log, the log sink
 * libsonde sets), NOTE texts, CHILD events and process-wide drops
 * (of no thread). The drain (drain.c, writer lock held) writes them out.
 *
 * Posting never blocks nor allocates: notes take one of SD_NOTES fixed
 * slots (later ones are dropped), CHILD events a slot of a bounded
 * lock-free queue (one that finds it full is counted lost and said once),
 * drops an atomic counter. A forked child starts its own queues
 * (sd_notes_children_reset; writer.c resets the rest).
 */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "writer/writer_int.h"

void sd_writer_log(const char *line, size_t len)
{
	char buf[SD_LOG_LINE_MAX + 1];
	if (len > SD_LOG_LINE_MAX)
		len = SD_LOG_LINE_MAX;
	memcpy(buf, line, len);
	buf[len] = '\0';
	sd_writer_note(buf);
	buf[len] = '\n';
	/* write by name, not sd_sys_write (common/sys.h): tests/fault's shim
	 * fails sonde's messages here (libsonde's wrapper passes it on) */
	ssize_t w = write(STDERR_FILENO, buf, len + 1);
	(void)w;
}

/* ---- notes: from any thread, no lock ------------------------------------ */

void sd_writer_note(const char *text)
{
	unsigned slot = atomic_fetch_add(&sd_w.notes_head, 1);
	if (slot >= SD_NOTES)
		return;
	size_t n = strnlen(text, sizeof sd_w.notes[slot] - 1);
	memcpy(sd_w.notes[slot], text, n);
	sd_w.notes[slot][n] = 0;
	atomic_fetch_add(&sd_w.notes_done, 1);
}

/* The notes filled so far, in slot order. Writer lock held. */
void sd_notes_emit(void)
{
	unsigned done = atomic_load(&sd_w.notes_done);
	unsigned head = atomic_load(&sd_w.notes_head);
	if (done < head && head <= SD_NOTES)
		return; /* a note is being written; next time */
	if (done > SD_NOTES)
		done = SD_NOTES;
	while (sd_w.notes_sent < done)
		sd_stream_note(sd_w.notes[sd_w.notes_sent++]);
}

/* ---- child processes: from any thread or handler, no lock ---------------- */

void sd_writer_child_sigsafe(pid_t pid, enum sd_child_event event, int value)
{
	if (!atomic_load(&sd_w.inited) || pid <= 0 || event >= SD_CHILD_NEVENTS)
		return;
	uint64_t h = atomic_load(&sd_w.child_head);
	do {
		if (h - atomic_load(&sd_w.child_tail) >= SD_CHILD_SLOTS) {
			atomic_fetch_add(&sd_w.child_lost, 1);
			return;
		}
	} while (!atomic_compare_exchange_weak(&sd_w.child_head, &h, h + 1));
	struct sd_child_ev *e = &sd_w.child_ev[h % SD_CHILD_SLOTS];
	e->t_ns = sd_now_ns_sigsafe();
	e->pid = (int32_t)pid;
	e->value = value;
	e->event = (unsigned)event;
	atomic_store_explicit(&e->seq, h + 1, memory_order_release);
}

/* The queued CHILD events, in the order their slots were claimed, up to the
 * first one still being filled (next time). Writer lock held. */
void sd_notes_children_emit(void)
{
	uint64_t tail = atomic_load(&sd_w.child_tail);
	for (;; tail++) {
		struct sd_child_ev *e = &sd_w.child_ev[tail % SD_CHILD_SLOTS];
		if (atomic_load_explicit(&e->seq, memory_order_acquire) != tail + 1)
			break;
		sd_stream_child(e->t_ns, e->pid, e->event, e->value);
		atomic_store_explicit(&sd_w.child_tail, tail + 1, memory_order_release);
	}
	uint64_t lost = atomic_load(&sd_w.child_lost);
	if (lost != sd_w.child_lost_said && !sd_w.child_lost_said)
		sd_msg("sonde: child processes: %llu fork, spawn or wait events were not recorded "
		    "(more than %d between two writer ticks; the report may not know every child)",
		    (unsigned long long)lost, SD_CHILD_SLOTS);
	sd_w.child_lost_said = lost;
}

/* In a forked child: the queue goes on from where the parent had claimed
 * it, so no slot's `seq` (at most that position) can pass for a new event,
 * and no slot is touched (the queue's pages stay shared). The parent's
 * events are the parent's to write. */
void sd_notes_children_reset(void)
{
	atomic_store(&sd_w.child_tail, atomic_load(&sd_w.child_head));
	atomic_store(&sd_w.child_lost, 0);
	sd_w.child_lost_said = 0;
}

/* ---- process-wide drops: from any thread or handler, no lock ------------ */

void sd_writer_drop_global_sigsafe(enum sd_drop why)
{
	atomic_fetch_add_explicit(&sd_w.global_drops[why], 1, memory_order_relaxed);
}

/* The process-wide drops (DROPS of thread 0), when they changed. Writer
 * lock held. */
void sd_notes_drops_emit(void)
{
	uint64_t now[SD_DROP_NREASONS];
	int changed = 0;
	for (unsigned i = 0; i < SD_DROP_NREASONS; i++) {
		now[i] = atomic_load(&sd_w.global_drops[i]);
		changed |= now[i] != sd_w.global_drops_sent[i];
	}
	if (changed) {
		memcpy(sd_w.global_drops_sent, now, sizeof now);
		sd_stream_drops(0, now);
	}
}