/* ctorwrap.c - a library whose constructor and destructor call every libc
 * name libsonde wraps (tests/e2e/round3.sh, case ctorwrap).
 *
 * Linked into the program (as Python links its own libraries), its
 * constructor runs before libsonde's and its destructor after libsonde's:
 * the wrappers are called before sonde has resolved anything and after it
 * has stopped. ctorwrap_main.c calls the same sweep from main, with sonde
 * running. Each call prints one line "PHASE NAME RESULT" (RESULT the same
 * with or without sonde), and the test compares the whole output with a
 * plain run and checks that every function libsonde exports is named here.
 *
 * Output goes through write(2) on a private buffer: a destructor runs after
 * stdio may have been flushed and closed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *phase;
static volatile sig_atomic_t got;

static void say(const char *name, const char *fmt, ...)
{
	char buf[256];
	int n = snprintf(buf, sizeof buf, "%s %s ", phase, name);
	va_list ap;
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
	va_end(ap);
	buf[n++] = '\n';
	ssize_t w = write(STDOUT_FILENO, buf, (size_t)n);
	(void)w;
}

struct cond_pair {
	pthread_mutex_t *m;
	pthread_cond_t *c;
	int *flag;
};

static void *cond_signaller(void *arg)
{
	struct cond_pair *p = arg;
	pthread_mutex_lock(p->m);
	*p->flag = 1;
	pthread_cond_signal(p->c);
	pthread_mutex_unlock(p->m);
	return NULL;
}

static void on_sig(int sig)
{
	got = sig;
}

/* Locks, condition variables and barriers: the free and the busy path (a
 * lock this thread holds, tried with a deadline already past). */
static void locks(void)
{
	struct timespec past = {0, 0};
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	say("pthread_mutex_lock", "%d", pthread_mutex_lock(&m));
	say("pthread_mutex_timedlock", "%d", pthread_mutex_timedlock(&m, &past));
	say("pthread_mutex_clocklock", "%d", pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &past));
	pthread_mutex_unlock(&m);
	say("pthread_mutex_timedlock.free", "%d", pthread_mutex_timedlock(&m, &past));
	pthread_mutex_unlock(&m);
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_t em;
	pthread_mutex_init(&em, &ma);
	pthread_mutex_lock(&em);
	say("pthread_mutex_lock.errorcheck_again", "%d", pthread_mutex_lock(&em));
	pthread_mutex_unlock(&em);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_t rm;
	pthread_mutex_init(&rm, &ma);
	pthread_mutex_lock(&rm);
	say("pthread_mutex_lock.recursive_again", "%d", pthread_mutex_lock(&rm));
	say("pthread_mutex_unlock.recursive", "%d %d", pthread_mutex_unlock(&rm),
	    pthread_mutex_unlock(&rm));
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	say("pthread_rwlock_rdlock", "%d", pthread_rwlock_rdlock(&l));
	say("pthread_rwlock_timedrdlock", "%d", pthread_rwlock_timedrdlock(&l, &past));
	say("pthread_rwlock_clockrdlock", "%d",
	    pthread_rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &past));
	say("pthread_rwlock_timedwrlock", "%d", pthread_rwlock_timedwrlock(&l, &past));
	say("pthread_rwlock_clockwrlock", "%d",
	    pthread_rwlock_clockwrlock(&l, CLOCK_MONOTONIC, &past));
	for (int i = 0; i < 3; i++)
		pthread_rwlock_unlock(&l);
	say("pthread_rwlock_wrlock", "%d", pthread_rwlock_wrlock(&l));
	say("pthread_rwlock_rdlock.own_writer", "%d", pthread_rwlock_rdlock(&l));
	pthread_rwlock_unlock(&l);
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	pthread_mutex_lock(&m);
	say("pthread_cond_timedwait", "%d", pthread_cond_timedwait(&c, &m, &past));
	say("pthread_cond_clockwait", "%d", pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &past));
	pthread_mutex_unlock(&m);
	/* pthread_cond_wait returns once signalled: a thread signals until
	 * the waiter is back */
	static pthread_mutex_t wm = PTHREAD_MUTEX_INITIALIZER;
	static pthread_cond_t wc = PTHREAD_COND_INITIALIZER;
	static int flag;
	flag = 0;
	pthread_t th;
	pthread_mutex_lock(&wm);
	pthread_create(&th, NULL, cond_signaller, &(struct cond_pair){&wm, &wc, &flag});
	int r = 0;
	while (!flag && r == 0)
		r = pthread_cond_wait(&wc, &wm);
	pthread_mutex_unlock(&wm);
	pthread_join(th, NULL);
	say("pthread_cond_wait", "%d %d", r, flag);
	pthread_barrier_t b;
	pthread_barrier_init(&b, NULL, 1);
	say("pthread_barrier_wait", "%d", pthread_barrier_wait(&b) == PTHREAD_BARRIER_SERIAL_THREAD);
	pthread_barrier_destroy(&b);
}

static int count_objects(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)info;
	(void)size;
	++*(int *)data;
	return 0;
}

static void *thread_fn(void *arg)
{
	return (char *)arg + 1;
}

/* Forks a child that runs fn(how) and reports the child's exit status. */
/* A clone(CLONE_VM) child: shares the program's memory, touches none. */
static int clone_child(void *arg)
{
	(void)arg;
	return 8;
}

static void child(const char *name, void (*fn)(int), int how)
{
	pid_t pid = fork();
	if (pid == 0) {
		fn(how);
		_exit(99);
	}
	int st = -1;
	pid_t r = waitpid(pid, &st, 0);
	say(name, "%s %d", r == pid ? "waited" : "lost", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static void run_exec(int how)
{
	char *argv[] = {"true", NULL};
	char *envp[] = {NULL};
	int fd;
	switch (how) {
	case 0: execve("/bin/true", argv, envp); break;
	case 1: execv("/bin/true", argv); break;
	case 2: execvp("true", argv); break;
	case 3: execvpe("true", argv, environ); break;
	case 4:
		fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
		fexecve(fd, argv, environ);
		break;
	case 5: execl("/bin/true", "true", (char *)NULL); break;
	case 6: execlp("true", "true", (char *)NULL); break;
	case 7: execle("/bin/true", "true", (char *)NULL, envp); break;
	case 8: _exit(7);
	case 9: _Exit(8);
	}
}

static void sweep(const char *ph)
{
	phase = ph;
	char b[8];
	int p[2];

	/* descriptors */
	int fd = open("/dev/null", O_RDONLY);
	say("close", "%d", close(fd));
	fd = open("/dev/null", O_RDONLY);
	say("syscall.close", "%ld", syscall(SYS_close, fd));
	fd = open("/dev/null", O_RDONLY);
	say("close_range", "%d", close_range((unsigned)fd, (unsigned)fd, 0));
	fd = open("/dev/null", O_RDONLY);
	say("syscall.close_range", "%ld", syscall(SYS_close_range, fd, fd, 0));
	say("syscall.getpid", "%d", syscall(SYS_getpid) == getpid());
	fd = dup2(STDERR_FILENO, 900);
	closefrom(900);
	int gone = fcntl(900, F_GETFD) == -1 && errno == EBADF;
	say("closefrom", "%d %d", fd, gone);
	say("pipe2", "%d", pipe2(p, O_CLOEXEC));
	say("write", "%zd", write(p[1], "abc", 3));
	say("read", "%zd", read(p[0], b, 3));
	say("syscall.write", "%ld", syscall(SYS_write, p[1], "de", 2));
	say("syscall.read", "%ld", syscall(SYS_read, p[0], b, 2));
	say("dup2", "%d", dup2(p[0], 901) == 901);
	say("dup3", "%d", dup3(p[1], 902, O_CLOEXEC) == 902);
	close(901);
	close(902);

	/* timers */
	timer_t tm;
	struct sigevent sev = {.sigev_notify = SIGEV_NONE};
	int made = timer_create(CLOCK_MONOTONIC, &sev, &tm);
	say("timer_create", "%d", made);
	if (made == 0)
		timer_delete(tm);
	int ktm = -1;
	long kmade = syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &ktm);
	say("syscall.timer_create", "%ld", kmade);
	if (kmade == 0)
		syscall(SYS_timer_delete, ktm);

	/* signals */
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sig;
	sigemptyset(&sa.sa_mask);
	say("sigaction", "%d", sigaction(SIGUSR1, &sa, &old));
	got = 0;
	raise(SIGUSR1);
	say("sigaction.delivered", "%d", got);
	say("signal", "%d", signal(SIGUSR2, on_sig) != SIG_ERR);
	stack_t ss = {.ss_sp = malloc(1 << 16), .ss_size = 1 << 16}, os;
	say("sigaltstack", "%d", sigaltstack(&ss, NULL));
	say("sigaltstack.query", "%d", sigaltstack(NULL, &os) == 0 && os.ss_sp == ss.ss_sp);
	ss.ss_flags = SS_DISABLE;
	say("sigaltstack.disable", "%d", sigaltstack(&ss, NULL));
	free(ss.ss_sp);
	int r;
	sigset_t set, was;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	say("pthread_sigmask", "%d", pthread_sigmask(SIG_BLOCK, &set, &was));
	say("sigprocmask", "%d", sigprocmask(SIG_SETMASK, NULL, &set) == 0 &&
					sigismember(&set, SIGUSR1) == 1);
	raise(SIGUSR1);
	struct timespec zero = {0, 0};
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	say("sigtimedwait", "%d", sigtimedwait(&set, NULL, &zero));
	raise(SIGUSR1);
	say("sigwaitinfo", "%d", sigwaitinfo(&set, NULL));
	raise(SIGUSR1);
	int sig = 0;
	r = sigwait(&set, &sig);
	say("sigwait", "%d %d", r, sig);
	raise(SIGUSR1);
	got = 0;
	sigemptyset(&set);
	r = sigsuspend(&set);
	say("sigsuspend", "%d %d %d", r, errno == EINTR, got);
	sigprocmask(SIG_SETMASK, &was, NULL);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {.it_value = {0, 2000}};
	got = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	r = pause();
	say("pause", "%d %d %d", r, errno == EINTR, got);
	sigaction(SIGUSR1, &old, NULL);

	/* blocking calls */
	struct timespec ms = {0, 1000000};
	say("nanosleep", "%d", nanosleep(&ms, NULL));
	say("clock_nanosleep", "%d", clock_nanosleep(CLOCK_MONOTONIC, 0, &ms, NULL));
	say("usleep", "%d", usleep(100));
	say("sleep", "%u", sleep(0));
	ssize_t w = write(p[1], "x", 1);
	(void)w;
	struct pollfd pf = {.fd = p[0], .events = POLLIN};
	say("poll", "%d", poll(&pf, 1, 0));
	say("ppoll", "%d", ppoll(&pf, 1, &zero, NULL));
	fd_set rd;
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	struct timeval tv = {0, 0};
	say("select", "%d", select(p[0] + 1, &rd, NULL, NULL, &tv));
	FD_SET(p[0], &rd);
	say("pselect", "%d", pselect(p[0] + 1, &rd, NULL, NULL, &zero, NULL));
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN}, out;
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	say("epoll_wait", "%d", epoll_wait(ep, &out, 1, 0));
	say("epoll_pwait", "%d", epoll_pwait(ep, &out, 1, 0, NULL));
	close(ep);
	close(p[0]);
	close(p[1]);
	sem_t sem;
	sem_init(&sem, 0, 1);
	say("sem_wait", "%d", sem_wait(&sem));
	r = sem_timedwait(&sem, &zero);
	say("sem_timedwait", "%d %d", r, errno == ETIMEDOUT);
	r = sem_clockwait(&sem, CLOCK_MONOTONIC, &zero);
	say("sem_clockwait", "%d %d", r, errno == ETIMEDOUT);
	sem_destroy(&sem);
	int sp[2];
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp);
	w = write(sp[0], "abcdef", 6);
	say("recv", "%zd", recv(sp[1], b, 2, 0));
	say("recvfrom", "%zd", recvfrom(sp[1], b, 2, 0, NULL, NULL));
	struct iovec iov = {.iov_base = b, .iov_len = 2};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	say("recvmsg", "%zd", recvmsg(sp[1], &mh, 0));
	close(sp[0]);
	close(sp[1]);
	int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	snprintf(un.sun_path + 1, sizeof un.sun_path - 1, "sonde-ctorwrap-%d-%s", getpid(), ph);
	bind(ls, (struct sockaddr *)&un, sizeof un);
	listen(ls, 1);
	r = accept(ls, NULL, NULL);
	say("accept", "%d %d", r, errno == EAGAIN);
	r = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
	say("accept4", "%d %d", r, errno == EAGAIN);
	close(ls);

	/* threads, loader */
	pthread_t th;
	void *ret = NULL;
	char base[2];
	struct timespec far, far_mono;
	clock_gettime(CLOCK_REALTIME, &far);
	clock_gettime(CLOCK_MONOTONIC, &far_mono);
	far.tv_sec += 10;
	far_mono.tv_sec += 10;
	say("pthread_create", "%d", pthread_create(&th, NULL, thread_fn, base));
	r = pthread_join(th, &ret);
	say("pthread_join", "%d %d", r, ret == base + 1);
	say("pthread_create", "%d", pthread_create(&th, NULL, thread_fn, base));
	r = pthread_timedjoin_np(th, &ret, &far);
	say("pthread_timedjoin_np", "%d %d", r, ret == base + 1);
	say("pthread_create", "%d", pthread_create(&th, NULL, thread_fn, base));
	r = pthread_clockjoin_np(th, &ret, CLOCK_MONOTONIC, &far_mono);
	say("pthread_clockjoin_np", "%d %d", r, ret == base + 1);
	locks();
	say("sched_yield", "%d", sched_yield());
	int objs = 0;
	r = dl_iterate_phdr(count_objects, &objs);
	say("dl_iterate_phdr", "%d %d", r, objs > 0);
	void *h = dlopen("libm.so.6", RTLD_NOW);
	say("dlopen", "%d", h != NULL);
	say("dlclose", "%d", h ? dlclose(h) : -1);
	h = dlmopen(LM_ID_NEWLM, "libm.so.6", RTLD_NOW);
	say("dlmopen", "%d", h != NULL);
	if (h)
		dlclose(h);

	/* processes: exec and exit in children, waited for */
	static const char *const names[] = {"execve", "execv",  "execvp", "execvpe", "fexecve",
					    "execl",  "execlp", "execle", "_exit",   "_Exit"};
	for (int i = 0; i < 10; i++)
		child(names[i], run_exec, i);
	pid_t pid = fork();
	if (pid == 0)
		_exit(3);
	int st = 0;
	struct rusage ru;
	r = wait4(pid, &st, 0, &ru) == pid;
	say("wait4", "%d %d", r, WEXITSTATUS(st));
	pid = fork();
	if (pid == 0)
		_exit(4);
	r = waitpid(pid, &st, 0) == pid;
	say("waitpid", "%d %d", r, WEXITSTATUS(st));
	pid = fork();
	if (pid == 0)
		_exit(5);
	r = wait(&st) == pid;
	say("wait", "%d %d", r, WEXITSTATUS(st));
	pid = fork();
	if (pid == 0)
		_exit(6);
	siginfo_t si;
	r = waitid(P_PID, (id_t)pid, &si, WEXITED);
	say("waitid", "%d %d", r, si.si_status);
	pid = fork();
	if (pid == 0)
		_exit(7);
	r = waitpid(pid, &st, 0) == pid;
	say("fork", "%d %d", r, WEXITSTATUS(st));
	static char clone_stack[64 * 1024] __attribute__((aligned(16)));
	pid = clone(clone_child, clone_stack + sizeof clone_stack, CLONE_VM | SIGCHLD, NULL);
	r = pid > 0 && waitpid(pid, &st, 0) == pid;
	say("clone", "%d %d", r, WEXITSTATUS(st));
	char *targv[] = {"true", NULL};
	r = posix_spawn(&pid, "/bin/true", NULL, NULL, targv, environ);
	say("posix_spawn", "%d %d %d", r, waitpid(pid, &st, 0) == pid, WEXITSTATUS(st));
	r = posix_spawnp(&pid, "true", NULL, NULL, targv, environ);
	say("posix_spawnp", "%d %d %d", r, waitpid(pid, &st, 0) == pid, WEXITSTATUS(st));
	/* a root, a namespace, that stay what they were */
	errno = 0;
	r = chroot("/");
	say("chroot", "%d %d", r, r ? errno : 0);
	r = unshare(0);
	say("unshare", "%d %d", r, r ? errno : 0);
	errno = 0;
	r = setns(-1, 0);
	say("setns", "%d %d", r, r ? errno : 0);
}

void ctorwrap_sweep(const char *ph)
{
	sweep(ph);
}

__attribute__((constructor)) static void ctorwrap_ctor(void)
{
	sweep("ctor");
}

__attribute__((destructor)) static void ctorwrap_dtor(void)
{
	sweep("dtor");
}
