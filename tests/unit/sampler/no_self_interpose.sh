#!/bin/bash
# no_self_interpose.sh - unit.sys.no_self_interpose: libsonde's own code calls
# none of the functions libsonde wraps for the program.
#
# usage: no_self_interpose.sh LIBSONDE ARCH NM OBJDUMP READELF OBJECT...
#        (OBJECT: the runtime's object files, libsonde's whole content; an
#        argument may hold several, separated by ';', as CMake's
#        $<TARGET_OBJECTS:...> gives them)
#
# libsonde exports wrappers of libc functions (close, read, write, syscall,
# nanosleep, pthread_mutex_lock, ...: sampler/interpose/) for the program.
# A call of one of those names inside libsonde binds to libsonde's own wrapper
# (it is linked without -Bsymbolic), which then passes it on: a cost, and a
# circle between the runtime's objects. The runtime makes its system calls
# through common/sys.h and reaches the real libc functions through
# common/real.h instead. This test fails when it no longer does:
#
#   - the interposed names are the functions libsonde.so exports (nm -D),
#     its public sonde_* API aside;
#   - no runtime object but those of sampler/interpose/ (the wrappers, one
#     file per thing they guard: every object in a folder named interpose)
#     may refer to one (nm -u: every reference, calls and addresses taken),
#     except those KEPT below, which the runtime makes by name on purpose;
#   - in each object of sampler/interpose/ a reference to one (objdump -dr)
#     may only be in a wrapper itself, made on the program's behalf (execl
#     calls execv, signal calls sigaction, syscall(SYS_close) calls close),
#     and none in its data;
#   - libsonde.so's own dynamic relocations against interposed names
#     (readelf -r: its PLT and GOT) are all accounted for by the objects
#     checked, so that the list of objects cannot be short.
#
# Skipped (77) on an architecture without a trap of sonde's own
# (common/arch/generic: sd_sys is libc's syscall(), by name).
set -u
LIB=$1 ARCH=$2 NM=$3 OBJDUMP=$4 READELF=$5
shift 5

# OBJECT-BASENAME:NAME, each with why it is called by name.
KEPT=(
	# the stream's writes (writer/outfile.c) and sonde's messages
	# (sd_writer_log in writer/notes.c, and log.c's stderr before a sink is
	# set): tests/fault's shim (preloaded before libsonde) fails them through
	# libsonde's PLT
	outfile.c.o:write
	notes.c.o:write
	log.c.o:write
	# a message written from the signal handler (say.c), as every message
	say.c.o:write
	# perf_event_open: tests/fault's shim fails it in syscall()
	counters.c.o:syscall
	perf.c.o:syscall
	# sonde's timers: tests/fault's shim fails them (the wrapper passes them on)
	sources.c.o:timer_create
	# PAPI and libpfm4 loaded through the dlopen wrapper, which records the
	# modules and updates the handler's loader snapshot; in the analyzer,
	# which links these objects too, libc's dlopen
	papi_dl.c.o:dlopen
)

fail() {
	echo "FAIL: $*"
	bad=1
}
bad=0

if [ "$ARCH" = generic ]; then
	echo "SKIP: common/arch/generic: the runtime's system calls go through libc's syscall() by name"
	exit 77
fi
for tool in "$NM" "$OBJDUMP" "$READELF"; do
	command -v "$tool" >/dev/null || { echo "SKIP: no $tool"; exit 77; }
done
[ -f "$LIB" ] || { echo "FAIL: no $LIB"; exit 1; }

objs=()
for arg in "$@"; do
	IFS=';' read -r -a parts <<<"$arg"
	for o in "${parts[@]}"; do
		[ -n "$o" ] && objs+=("$o")
	done
done

# The interposed names: every function libsonde.so exports but its API.
mapfile -t names < <("$NM" -D --defined-only "$LIB" | awk '$2 ~ /^[TWi]$/ && $3 !~ /^sonde_/ { print $3 }' | sort -u)
[ "${#names[@]}" -ge 20 ] || { echo "FAIL: only ${#names[@]} interposed names in $LIB: ${names[*]}"; exit 1; }
declare -A name_set kept_set
for n in "${names[@]}"; do name_set[$n]=1; done
for k in "${KEPT[@]}"; do kept_set[$k]=1; done
is_name() { [ -n "${name_set[$1]:-}" ]; }
is_kept() { [ -n "${kept_set[$1:$2]:-}" ]; }
for must in close read write syscall nanosleep pthread_mutex_lock; do
	is_name "$must" || fail "$LIB does not export $must (is it the runtime?)"
done

used=() # the interposed names some object refers to, allowed
kept_seen=()
interpose=() # the wrappers' objects: sampler/interpose/*.c
for o in "${objs[@]}"; do
	[ -f "$o" ] || { fail "no object $o"; continue; }
	base=$(basename "$o")
	if [ "$(basename "$(dirname "$o")")" = interpose ]; then
		interpose+=("$o")
		continue
	fi
	while read -r sym; do
		is_name "$sym" || continue
		used+=("$sym")
		if is_kept "$base" "$sym"; then
			kept_seen+=("$base:$sym")
		else
			fail "$o refers to $sym, which binds to libsonde's own wrapper: use common/sys.h (sd_sys_*) or common/real.h (sd_real_*); a call that must stay by name goes on KEPT, with why"
		fi
	done < <("$NM" -u "$o" | awk '{ print $NF }' | sed 's/@.*//' | sort -u)
done

[ "${#interpose[@]}" -gt 0 ] ||
	fail "no object of sampler/interpose/ (the wrappers) is among the objects given"
for o in "${interpose[@]}"; do
	src=$(basename "$o" .o)
	# code: each relocation against an interposed name, with the function it is in
	while read -r fn sym; do
		is_name "$sym" || continue
		used+=("$sym")
		is_name "${fn%%.*}" || # else a wrapper, on the program's behalf
			fail "interpose/$src: $fn refers to $sym (its own wrapper): use REAL($sym) or an sd_real_* function"
	done < <("$OBJDUMP" -dr "$o" | awk '
		/^[0-9a-f]+ <[^>]+>:$/ { fn = $2; gsub(/[<>:]/, "", fn); next }
		/R_[A-Z0-9_]+[ \t]/ { for (i = 1; i < NF; i++) if ($i ~ /^R_[A-Z0-9_]+$/) {
			s = $(i + 1); sub(/[-+]0x[0-9a-f]+$/, "", s); print fn, s } }')
	# data: no table of interposed functions (debug and unwind tables aside)
	while read -r sec sym; do
		is_name "$sym" && fail "interpose/$src: section $sec refers to $sym"
	done < <("$READELF" -rW "$o" | awk '
		/^Relocation section/ { sec = $3; gsub(/\047/, "", sec); next }
		sec !~ /^\.rela?\.(text|debug|eh_frame)/ && NF >= 5 && $1 ~ /^[0-9a-f]+$/ { s = $5; sub(/@.*/, "", s); print sec, s }')
done

# libsonde.so: every interposed name it binds through its PLT or GOT is one
# the objects above refer to (else an object is missing from the list).
mapfile -t bound < <("$READELF" -rW "$LIB" | awk '/^Relocation section/ { r = 1; next } /^Symbol table/ { r = 0 } r && NF >= 5 && $1 ~ /^[0-9a-f]+$/ { s = $5; sub(/@.*/, "", s); print s }' | sort -u)
for sym in "${bound[@]}"; do
	is_name "$sym" || continue
	printf '%s\n' "${used[@]}" | grep -qx "$sym" ||
		fail "libsonde.so binds $sym through its PLT or GOT, but no object given refers to it: the list of objects is incomplete"
done

# A kept call that is gone is taken off the list.
for k in "${KEPT[@]}"; do
	printf '%s\n' "${kept_seen[@]}" | grep -qx "$k" ||
		fail "$k is listed as kept by name, but no such object calls it: take it off KEPT"
done

[ "$bad" = 0 ] || exit 1
echo "ok: ${#objs[@]} objects, ${#names[@]} interposed names; referred to by name only in the wrappers of ${#interpose[@]} sampler/interpose/ objects and on purpose (${KEPT[*]})"
