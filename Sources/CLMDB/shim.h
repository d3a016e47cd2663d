#ifndef EVENTSTORE_CLMDB_SHIM_H
#define EVENTSTORE_CLMDB_SHIM_H

#include <lmdb.h>

// Only what Swift cannot call well lives here.

/// The compile-time LMDB version as one integer (major * 10000 + minor * 100 + patch).
static inline int clmdb_version_full(void) {
    return MDB_VERSION_MAJOR * 10000 + MDB_VERSION_MINOR * 100 + MDB_VERSION_PATCH;
}

#endif
