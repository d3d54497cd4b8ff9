#ifndef CWALINDEX_H
#define CWALINDEX_H

/* A wrapper of SQLite's unix VFS that keeps a database's WAL index (the
 * file SQLite calls "-shm") in another directory, a RAM one such as
 * /run/ifmeter, while the database and its WAL stay where they are.
 *
 * Why: the WAL index is a memory-mapped file that only coordinates the
 * processes that have the database open; SQLite rebuilds it from the WAL
 * whenever its first user opens it. Beside the store, every commit dirties
 * about five of its 4 KiB pages, which the kernel then writes to the disk:
 * about 40 % of what a commit under tunnel lives writes (bench/TRIES.md).
 * In a RAM directory those writes never reach the disk. SQLite has this as
 * a compile-time option (SQLITE_SHM_DIRECTORY) that Debian's build lacks.
 *
 * How: a database opened through this VFS with the URI parameter
 * `walindex=DIR` maps its WAL index through a second unix-VFS file, the
 * anchor, DIR/ifmeter-<device>-<inode>.db: empty, at the database file's
 * mode and owner, named by the database file's identity so that every
 * process opening the same store meets the same anchor and the same
 * DIR/ifmeter-<device>-<inode>.db-shm. Locking, mapping and recovery stay
 * SQLite's own code; only the file they work on moves. Without the
 * parameter, or when the anchor can be neither created nor opened (DIR
 * missing, as after a reboot before the daemon starts), the WAL index
 * stays beside the database, as SQLite places it. */

/* The VFS's name, for sqlite3_open_v2. */
extern const char *const ifm_walindex_vfs_name;

/* Registers the VFS once (not as the default); later calls do nothing.
 * Returns an SQLite result code. */
int ifm_walindex_register(void);

#endif
