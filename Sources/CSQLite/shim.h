#include <sqlite3.h>

/* sqlite3_db_config takes variable arguments, which Swift cannot pass. */
static inline int ifm_sqlite_checkpoint_on_close(sqlite3 *db, int enabled) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, enabled ? 0 : 1, (int *)0);
}
