#include <sqlite3.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* sqlite3_db_config takes variable arguments, which Swift cannot pass. */
static inline int ifm_sqlite_checkpoint_on_close(sqlite3 *db, int enabled) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, enabled ? 0 : 1, (int *)0);
}

/* A store is data, never code: no trigger or view runs, the schema cannot
   be written through SQL, and no value longer than `max_length` is read. */
static inline int ifm_sqlite_harden(sqlite3 *db, int max_length) {
    int status = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, (int *)0);
    if (status == SQLITE_OK) status = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, (int *)0);
    if (status == SQLITE_OK) status = sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);
    if (status == SQLITE_OK) status = sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)0);
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, max_length);
    return status;
}

/* Every file SQLite's unix VFS opens goes through here: a link is never
   followed and a FIFO never waited on (a name swapped after any check
   cannot make SQLite block or write elsewhere); only a regular file, a
   directory opened to sync it, /dev/urandom or /dev/null is kept. */
static int ifm_sqlite_open_file(const char *path, int flags, int mode) {
    int fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
    if (fd < 0) return fd;
    struct stat info;
    int kept = fstat(fd, &info) == 0
        && (S_ISREG(info.st_mode)
            || (S_ISDIR(info.st_mode) && (flags & (O_ACCMODE | O_CREAT)) == O_RDONLY)
            || (S_ISCHR(info.st_mode) && (strcmp(path, "/dev/urandom") == 0 || strcmp(path, "/dev/null") == 0)));
    if (!kept) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    /* O_NONBLOCK was only for the open: SQLite's reads and writes are whole. */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

/* Installs `ifm_sqlite_open_file` in the unix VFS, for every connection of
   the process; and caps the memory SQLite may take (0: no cap). */
static inline int ifm_sqlite_install_safe_open(sqlite3_int64 heap_limit) {
    sqlite3_vfs *vfs = sqlite3_vfs_find("unix");
    if (vfs == 0 || vfs->iVersion < 3 || vfs->xSetSystemCall == 0) return SQLITE_ERROR;
    if (heap_limit > 0) sqlite3_hard_heap_limit64(heap_limit);
    return vfs->xSetSystemCall(vfs, "open", (sqlite3_syscall_ptr)ifm_sqlite_open_file);
}
