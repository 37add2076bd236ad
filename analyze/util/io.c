/*
 * io.c: writing a whole buffer to a descriptor, for the analyzer's files written under a
 * temporary name (the symbol cache, the build-id archive's packs). CLI thread.
 */
#include "analyze/util/util.h"

#include <errno.h>
#include <unistd.h>

int sd_write_all(int fd, const void *p, size_t len)
{
	const char *b = p;
	while (len) {
		ssize_t w = write(fd, b, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		b += w;
		len -= (size_t)w;
	}
	return 0;
}
