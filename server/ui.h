/* ui.h — the web UI's embedded static files (server/ui.c serves them at
 * /ui/). The table is generated at build time by tools/embed_ui.py from ui/
 * and uPlot (CMakeLists.txt); it is sorted by path (bytewise) and lives for
 * the whole process. Each asset's bytes are followed by a NUL that `len`
 * does not count.
 */
#ifndef SILT_SERVER_UI_H
#define SILT_SERVER_UI_H

#include <stddef.h>

#include "http.h"

typedef struct silt_ui_asset {
    const char *path;         /* under /ui/, no leading '/': "index.html", "vendor/uPlot.min.css" */
    const char *content_type; /* from the extension */
    const char *etag;         /* strong, quoted: "\"0123456789abcdef\"" */
    const unsigned char *data;
    size_t len;
} silt_ui_asset;

extern const silt_ui_asset SILT_UI_ASSETS[];
extern const size_t SILT_UI_NASSETS;

/* The routes of ui.c: /ui/… and `/`; and of odf_catalog.c, silt's own
 * read routes under /odf/ that the UI needs (docs/server.md). */
extern const srv_route_table SRV_UI_ROUTES;
extern const srv_route_table SRV_UI_ROOT_ROUTES;
extern const srv_route_table SRV_ODF_CATALOG_ROUTES;

#endif
