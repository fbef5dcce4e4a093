#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"

static const char *kind(mode_t mode)
{
    return S_ISDIR(mode)    ? "a folder"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISSOCK(mode) ? "a socket"
                            : "a device";
}

/* The descriptor of `path`, opened without blocking and checked regular; -1 and the sentence. */
static int open_checked(const char *path, const char *what, const char *remedy, char *error,
                        size_t size)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        snprintf(error, size, "cannot read %s %s: %s", what, path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(error, size, "%s %s is not a regular file (%s); %s", what, path, kind(st.st_mode),
                 remedy);
        close(fd);
        return -1;
    }
    return fd;
}

FILE *pa_open_regular(const char *path, const char *what, const char *remedy, char *error,
                      size_t size)
{
    int fd = open_checked(path, what, remedy, error, size);
    if (fd < 0)
        return NULL;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    FILE *file = fdopen(fd, "r");
    if (!file) {
        snprintf(error, size, "cannot read %s %s: %s", what, path, strerror(errno));
        close(fd);
    }
    return file;
}

void pa_require_regular(const char *path, const char *what, const char *remedy)
{
    char error[1024];
    int fd = open_checked(path, what, remedy, error, sizeof error);
    if (fd < 0)
        pa_fail(2, "%s", error);
    close(fd);
}
