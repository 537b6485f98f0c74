/* s3.h — the S3-compatible backend of the store interface (store.h).
 *
 * A dataset's store lives in one bucket under a key prefix, with the layout
 * of the local backend: <prefix>/blocks/<mh>, <prefix>/data/<mh>,
 * <prefix>/checkpoints/<mh>, <prefix>/refs/head, <prefix>/refs/branches/<n>.
 * Objects are written with one PUT (or a completed multipart upload), which
 * S3 makes visible atomically; refs are compare-and-swapped with conditional
 * PUTs (If-None-Match: * / If-Match: <etag>), see docs/decisions.md. */
#ifndef SILT_STORE_S3_H
#define SILT_STORE_S3_H

#include <stdbool.h>

#include "store/s3_client.h"
#include "store/store.h"

/* Opens the store of the dataset under `prefix` (silt_s3_valid_prefix; ""
 * is the bucket's root) in cfg's bucket. With `create`, the bucket is
 * created when missing; otherwise a missing bucket is SILT_ENOTFOUND.
 * The first ref update on the handle checks that the service honours
 * conditional writes and fails with SILT_EUNSUPPORTED ("… ignores
 * conditional writes …; refusing to update refs") when it does not.
 * object_path is NULL for this backend. Caller owns *out (silt_store_free). */
int silt_store_open_s3(silt_store **out, const silt_s3_config *cfg, const char *prefix, bool create);

#endif
