/* unit.h - the few helpers every unit test uses (tests/unit/).
 *
 * No framework: a test program is a table of cases; `prog CASE` runs one
 * case (ctest gives each case its own process and timeout, tests/unit/
 * CMakeLists.txt), `prog` alone runs them all in turn. A failed check prints
 * file:line, the expression and the values compared, and exits 1; exit 77
 * skips with a printed reason.
 */
#ifndef SONDE_TESTS_UNIT_H
#define SONDE_TESTS_UNIT_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(cond)                                                                     \
	do {                                                                            \
		if (!(cond)) {                                                          \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			exit(1);                                                        \
		}                                                                       \
	} while (0)

#define CHECK_EQ(a, b)                                                                  \
	do {                                                                            \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                        \
		if (a_ != b_) {                                                         \
			fprintf(stderr, "%s:%d: check failed: %s == %s (%" PRIu64 " != %" PRIu64 \
				", signed %" PRId64 " != %" PRId64 ")\n", __FILE__, __LINE__, #a, \
				#b, a_, b_, (int64_t)a_, (int64_t)b_);                  \
			exit(1);                                                        \
		}                                                                       \
	} while (0)

#define CHECK_STR(a, b)                                                                 \
	do {                                                                            \
		const char *a_ = (a), *b_ = (b);                                        \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                \
			fprintf(stderr, "%s:%d: check failed: %s == %s\n  got:  %s\n  want: %s\n", \
				__FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)",         \
				b_ ? b_ : "(null)");                                    \
			exit(1);                                                        \
		}                                                                       \
	} while (0)

struct unit_case {
	const char *name;
	void (*fn)(void);
};

/* main() of a test program: runs case argv[1] in this process, or every
 * case, each in a child process of its own (state such as the context tree
 * only grows). */
static inline int unit_main(int argc, char **argv, const struct unit_case *cases, size_t n)
{
	int failed = 0;
	for (size_t i = 0; i < n; i++) {
		if (argc > 1) {
			if (strcmp(argv[1], cases[i].name) != 0)
				continue;
			cases[i].fn();
			printf("ok %s\n", cases[i].name);
			return 0;
		}
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			cases[i].fn();
			printf("ok %s\n", cases[i].name);
			fflush(NULL);
			_exit(0);
		}
		int st = 0;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 77)) {
			printf("FAILED %s\n", cases[i].name);
			failed = 1;
		}
	}
	if (argc > 1) {
		fprintf(stderr, "%s: no case '%s'\n", argv[0], argv[1]);
		return 2;
	}
	return failed;
}

#define UNIT_MAIN(...)                                                                  \
	int main(int argc, char **argv)                                                 \
	{                                                                               \
		static const struct unit_case cases_[] = {__VA_ARGS__};                 \
		return unit_main(argc, argv, cases_, sizeof cases_ / sizeof cases_[0]); \
	}

#endif
