// SQLite 3, Debian package libsqlite3-dev: the ordered index of stored ids (storage.backend = fs).
#include <sqlite3.h>
