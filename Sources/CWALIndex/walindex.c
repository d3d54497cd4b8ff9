// The WAL-index VFS: SQLite's unix VFS, with the WAL index of a database
// opened with `walindex=DIR` mapped through an anchor file in DIR
// (include/cwalindex.h says why). Every method but the four shared-memory
// ones goes to the unix VFS's own file of the database, unchanged.
#include "cwalindex.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const ifm_walindex_vfs_name = "ifmeter-walindex";

typedef struct {
    sqlite3_file base;
    /* The unix VFS's files, in the memory SQLite allocated after this
     * struct (szOsFile counts both). */
    sqlite3_file *database;
    sqlite3_file *anchor;
    /* The anchor's name (sqlite3_create_filename: the unix VFS keeps the
     * pointer and reads URI parameters behind it); NULL: no `walindex`. */
    sqlite3_filename anchorName;
    /* Which file holds the WAL index, decided at the first shared-memory
     * call and kept: every later call must reach the same mapping. */
    enum { undecided, inAnchor, besideDatabase } holder;
    mode_t mode;
    uid_t owner;
    gid_t group;
} IndexedFile;

static sqlite3_vfs *unixVFS;

/* The unix VFS reads its own pAppData in xOpen: its methods are always
 * called with its own sqlite3_vfs, never with this one. */

// ---- The anchor

/* Creates the anchor at the database's mode and owner (the unix VFS gives
 * the -shm its anchor's), then opens it. A symbolic link there is refused
 * (NOFOLLOW): the index would be wherever it points. */
static int openAnchor(IndexedFile *file) {
    const char *path = sqlite3_filename_database(file->anchorName);
    // Something else planted at either name (a FIFO would be opened, a
    // directory fail late): every process then keeps the index beside the
    // database alike.
    char index[PATH_MAX];
    struct stat status;
    if (snprintf(index, sizeof index, "%s-shm", path) >= (int)sizeof index) return SQLITE_CANTOPEN;
    if (lstat(path, &status) == 0 && !S_ISREG(status.st_mode)) return SQLITE_CANTOPEN;
    if (lstat(index, &status) == 0 && !S_ISREG(status.st_mode)) return SQLITE_CANTOPEN;
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, file->mode & 0777);
    if (fd >= 0) {
        // open(2) applied the umask; the owner's choice of mode is the rule.
        int failed = fchmod(fd, file->mode & 0777) != 0;
        if (geteuid() == 0) failed |= fchown(fd, file->owner, file->group) != 0;
        close(fd);
        if (failed) {
            unlink(path);
            return SQLITE_CANTOPEN;
        }
    } else if (errno != EEXIST) {
        return SQLITE_CANTOPEN;
    }
    int flags = SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW;
    int rc = unixVFS->xOpen(unixVFS, file->anchorName, file->anchor, flags, NULL);
    if (rc != SQLITE_OK && file->anchor->pMethods != NULL) {
        file->anchor->pMethods->xClose(file->anchor);
        file->anchor->pMethods = NULL;
    }
    return rc;
}

/* The file whose shared memory SQLite maps: the anchor, or, with no
 * `walindex` or an anchor that cannot be had, the database itself. */
static sqlite3_file *indexHolder(IndexedFile *file) {
    if (file->holder == undecided) {
        file->holder = file->anchorName != NULL && openAnchor(file) == SQLITE_OK ? inAnchor : besideDatabase;
    }
    return file->holder == inAnchor ? file->anchor : file->database;
}

// ---- io methods

#define DATABASE(file) (((IndexedFile *)(file))->database)
#define FORWARD(method, ...) return DATABASE(file)->pMethods->method(DATABASE(file), __VA_ARGS__)

static int indexedClose(sqlite3_file *file) {
    IndexedFile *indexed = (IndexedFile *)file;
    if (indexed->holder == inAnchor) indexed->anchor->pMethods->xClose(indexed->anchor);
    int rc = indexed->database->pMethods->xClose(indexed->database);
    sqlite3_free_filename(indexed->anchorName);
    indexed->anchorName = NULL;
    return rc;
}

static int indexedRead(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) { FORWARD(xRead, buffer, amount, offset); }
static int indexedWrite(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) { FORWARD(xWrite, buffer, amount, offset); }
static int indexedTruncate(sqlite3_file *file, sqlite3_int64 size) { FORWARD(xTruncate, size); }
static int indexedSync(sqlite3_file *file, int flags) { FORWARD(xSync, flags); }
static int indexedFileSize(sqlite3_file *file, sqlite3_int64 *size) { FORWARD(xFileSize, size); }
static int indexedLock(sqlite3_file *file, int level) { FORWARD(xLock, level); }
static int indexedUnlock(sqlite3_file *file, int level) { FORWARD(xUnlock, level); }
static int indexedCheckReservedLock(sqlite3_file *file, int *result) { FORWARD(xCheckReservedLock, result); }
static int indexedSectorSize(sqlite3_file *file) { return DATABASE(file)->pMethods->xSectorSize(DATABASE(file)); }
static int indexedDeviceCharacteristics(sqlite3_file *file) { return DATABASE(file)->pMethods->xDeviceCharacteristics(DATABASE(file)); }
static int indexedFetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **pages) { FORWARD(xFetch, offset, amount, pages); }
static int indexedUnfetch(sqlite3_file *file, sqlite3_int64 offset, void *page) { FORWARD(xUnfetch, offset, page); }

static int indexedFileControl(sqlite3_file *file, int operation, void *argument) {
    // Whether another process uses the WAL index is a question for the
    // file that holds it.
    if (operation == SQLITE_FCNTL_EXTERNAL_READER) {
        sqlite3_file *holder = indexHolder((IndexedFile *)file);
        return holder->pMethods->xFileControl(holder, operation, argument);
    }
    FORWARD(xFileControl, operation, argument);
}

static int indexedShmMap(sqlite3_file *file, int page, int pageSize, int extend, void volatile **memory) {
    sqlite3_file *holder = indexHolder((IndexedFile *)file);
    return holder->pMethods->xShmMap(holder, page, pageSize, extend, memory);
}

static int indexedShmLock(sqlite3_file *file, int offset, int count, int flags) {
    sqlite3_file *holder = indexHolder((IndexedFile *)file);
    return holder->pMethods->xShmLock(holder, offset, count, flags);
}

static void indexedShmBarrier(sqlite3_file *file) {
    sqlite3_file *holder = indexHolder((IndexedFile *)file);
    holder->pMethods->xShmBarrier(holder);
}

static int indexedShmUnmap(sqlite3_file *file, int deleteIndex) {
    sqlite3_file *holder = indexHolder((IndexedFile *)file);
    return holder->pMethods->xShmUnmap(holder, deleteIndex);
}

static const sqlite3_io_methods indexedMethods = {
    .iVersion = 3,
    .xClose = indexedClose,
    .xRead = indexedRead,
    .xWrite = indexedWrite,
    .xTruncate = indexedTruncate,
    .xSync = indexedSync,
    .xFileSize = indexedFileSize,
    .xLock = indexedLock,
    .xUnlock = indexedUnlock,
    .xCheckReservedLock = indexedCheckReservedLock,
    .xFileControl = indexedFileControl,
    .xSectorSize = indexedSectorSize,
    .xDeviceCharacteristics = indexedDeviceCharacteristics,
    .xShmMap = indexedShmMap,
    .xShmLock = indexedShmLock,
    .xShmBarrier = indexedShmBarrier,
    .xShmUnmap = indexedShmUnmap,
    .xFetch = indexedFetch,
    .xUnfetch = indexedUnfetch,
};

// ---- VFS methods

static int indexedOpen(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *file, int flags, int *outFlags) {
    (void)vfs;
    // The WAL, temporary files and the rest are the unix VFS's files as
    // they are: SQLite allocated room enough for one.
    if (!(flags & SQLITE_OPEN_MAIN_DB) || name == NULL) return unixVFS->xOpen(unixVFS, name, file, flags, outFlags);

    IndexedFile *indexed = (IndexedFile *)file;
    memset(indexed, 0, sizeof *indexed);
    indexed->database = (sqlite3_file *)(indexed + 1);
    indexed->anchor = (sqlite3_file *)((char *)indexed->database + unixVFS->szOsFile);
    int rc = unixVFS->xOpen(unixVFS, name, indexed->database, flags, outFlags);
    if (rc != SQLITE_OK) return rc;  // base.pMethods stays NULL: SQLite calls no xClose

    const char *directory = sqlite3_uri_parameter(name, "walindex");
    struct stat status;
    if (directory != NULL && directory[0] == '/' && stat(name, &status) == 0) {
        // Named by the database file's identity: every process opening
        // this store meets the same anchor, and a store moved aside and
        // replaced gets an index of its own.
        char *path = sqlite3_mprintf("%s/ifmeter-%llx-%llx.db", directory,
                                     (unsigned long long)status.st_dev, (unsigned long long)status.st_ino);
        if (path != NULL) {
            indexed->anchorName = sqlite3_create_filename(path, "", "", 0, NULL);
            sqlite3_free(path);
        }
        indexed->mode = status.st_mode;
        indexed->owner = status.st_uid;
        indexed->group = status.st_gid;
    }
    indexed->base.pMethods = &indexedMethods;
    return SQLITE_OK;
}

static int indexedDelete(sqlite3_vfs *vfs, const char *name, int syncDirectory) {
    (void)vfs;
    return unixVFS->xDelete(unixVFS, name, syncDirectory);
}

static int indexedAccess(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    (void)vfs;
    return unixVFS->xAccess(unixVFS, name, flags, result);
}

static int indexedFullPathname(sqlite3_vfs *vfs, const char *name, int size, char *output) {
    (void)vfs;
    return unixVFS->xFullPathname(unixVFS, name, size, output);
}

static void *indexedDlOpen(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return unixVFS->xDlOpen(unixVFS, name);
}

static void indexedDlError(sqlite3_vfs *vfs, int size, char *message) {
    (void)vfs;
    unixVFS->xDlError(unixVFS, size, message);
}

static void (*indexedDlSym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return unixVFS->xDlSym(unixVFS, handle, symbol);
}

static void indexedDlClose(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    unixVFS->xDlClose(unixVFS, handle);
}

static int indexedRandomness(sqlite3_vfs *vfs, int size, char *output) {
    (void)vfs;
    return unixVFS->xRandomness(unixVFS, size, output);
}

static int indexedSleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return unixVFS->xSleep(unixVFS, microseconds);
}

static int indexedCurrentTime(sqlite3_vfs *vfs, double *time) {
    (void)vfs;
    return unixVFS->xCurrentTime(unixVFS, time);
}

static int indexedGetLastError(sqlite3_vfs *vfs, int size, char *message) {
    (void)vfs;
    return unixVFS->xGetLastError(unixVFS, size, message);
}

static int indexedCurrentTimeInt64(sqlite3_vfs *vfs, sqlite3_int64 *time) {
    (void)vfs;
    return unixVFS->xCurrentTimeInt64(unixVFS, time);
}

static sqlite3_vfs indexedVFS;
static int registration = SQLITE_ERROR;

static void registerOnce(void) {
    unixVFS = sqlite3_vfs_find("unix");
    if (unixVFS == NULL || unixVFS->iVersion < 2) return;
    indexedVFS = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(IndexedFile) + 2 * unixVFS->szOsFile,
        .mxPathname = unixVFS->mxPathname,
        .zName = ifm_walindex_vfs_name,
        .xOpen = indexedOpen,
        .xDelete = indexedDelete,
        .xAccess = indexedAccess,
        .xFullPathname = indexedFullPathname,
        .xDlOpen = indexedDlOpen,
        .xDlError = indexedDlError,
        .xDlSym = indexedDlSym,
        .xDlClose = indexedDlClose,
        .xRandomness = indexedRandomness,
        .xSleep = indexedSleep,
        .xCurrentTime = indexedCurrentTime,
        .xGetLastError = indexedGetLastError,
        .xCurrentTimeInt64 = indexedCurrentTimeInt64,
    };
    registration = sqlite3_vfs_register(&indexedVFS, 0);
}

int ifm_walindex_register(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, registerOnce);
    return registration;
}
