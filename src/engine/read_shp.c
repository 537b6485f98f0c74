/* read_shp.c — ESRI Shapefile reader for the Read phase (ReadStep
 * EsriShapefile): .shp + .dbf (optionally inside a .zip archive) -> NDJSON.
 *
 * The input is either a .shp file (its .dbf next to it) or a ZIP archive;
 * archives are extracted with libarchive into the caller's scratch directory
 * (entries with absolute paths or ".." components are skipped, never written)
 * and the .shp is chosen by `subPath` (exact relative path, else a glob where
 * '*' does not cross '/'), or must be the only .shp in the archive.
 *
 * Every record becomes one JSON object: the dbf attributes in field order,
 * typed (N without decimals -> BIGINT, N with decimals and F -> DOUBLE,
 * C -> VARCHAR, L -> BOOLEAN, D -> DATE, other types -> VARCHAR; dbf NULLs
 * and unparsable numbers -> null), then "geometry": the shape as GeoJSON text
 * with sorted keys, as kamu writes it ({"coordinates":…,"type":…}; 2-D;
 * Point, MultiPoint, PolyLine -> LineString / MultiLineString, Polygon ->
 * Polygon / MultiPolygon where each clockwise ring starts a polygon and
 * counter-clockwise rings are its holes; vertex order is kept; a null shape
 * -> null). Text that is not valid UTF-8 is taken as ISO-8859-1.
 * Invariants: shapelib handles are closed on every path; nothing is written
 * outside `tmpdir` and `ndjson_path`.
 */
#include "engine/read.h"

#include "util/buf.h"
#include "util/error.h"
#include "util/fsutil.h"

#include <archive.h>
#include <archive_entry.h>
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <shapefil.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct shp_list {
    char **v;
    size_t n, cap;
} shp_list;

static int list_push(shp_list *l, const char *s)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 8;
        char **nv = realloc(l->v, nc * sizeof *nv);
        if (!nv)
            return silt_err(SILT_ENOMEM, "out of memory");
        l->v = nv;
        l->cap = nc;
    }
    if (!(l->v[l->n] = strdup(s)))
        return silt_err(SILT_ENOMEM, "out of memory");
    l->n++;
    return 0;
}

static void list_free(shp_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

static bool ends_with_ci(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcasecmp(s + n - m, suffix);
}

static int list_join(silt_buf *b, const shp_list *l)
{
    int rc = 0;
    for (size_t i = 0; i < l->n && !rc; i++)
        rc = silt_buf_printf(b, "%s%s", i ? ", " : "", l->v[i]);
    return rc;
}

/* An archive entry path that stays inside the extraction directory. */
static bool safe_entry(const char *p)
{
    if (!*p || p[0] == '/')
        return false;
    const char *s = p;
    while (*s) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 2 && s[0] == '.' && s[1] == '.')
            return false;
        if (!e)
            break;
        s = e + 1;
    }
    return true;
}

static int extract_zip(const char *path, const char *display, const char *dir, shp_list *shps)
{
    int rc = silt_fs_mkdirs(dir);
    if (rc)
        return rc;
    struct archive *ar = archive_read_new();
    if (!ar)
        return silt_err(SILT_ENOMEM, "out of memory");
    archive_read_support_format_zip(ar);
    if (archive_read_open_filename(ar, path, 65536) != ARCHIVE_OK) {
        rc = silt_err(SILT_EINVAL, "%s: cannot open the archive: %s", display, archive_error_string(ar));
        archive_read_free(ar);
        return rc;
    }
    struct archive_entry *ent;
    int st;
    while (!rc && (st = archive_read_next_header(ar, &ent)) == ARCHIVE_OK) {
        const char *name = archive_entry_pathname(ent);
        if (!name || archive_entry_filetype(ent) != AE_IFREG || !safe_entry(name))
            continue;
        char *dst = silt_path_join(dir, name, NULL);
        if (!dst) {
            rc = silt_err(SILT_ENOMEM, "out of memory");
            break;
        }
        char *slash = strrchr(dst, '/');
        *slash = '\0';
        rc = silt_fs_mkdirs(dst);
        *slash = '/';
        FILE *f = rc ? NULL : fopen(dst, "wb");
        if (!rc && !f)
            rc = silt_err(SILT_EIO, "%s: cannot extract '%s': %s", display, name, strerror(errno));
        const void *blk;
        size_t sz;
        la_int64_t off;
        while (!rc) {
            int r = archive_read_data_block(ar, &blk, &sz, &off);
            if (r == ARCHIVE_EOF)
                break;
            if (r != ARCHIVE_OK) {
                rc = silt_err(SILT_EINVAL, "%s: cannot extract '%s': %s", display, name, archive_error_string(ar));
                break;
            }
            if (fseeko(f, (off_t)off, SEEK_SET) != 0 || fwrite(blk, 1, sz, f) != sz)
                rc = silt_err(SILT_EIO, "%s: cannot extract '%s'", display, name);
        }
        if (f && fclose(f) != 0 && !rc)
            rc = silt_err(SILT_EIO, "%s: cannot extract '%s'", display, name);
        if (!rc && ends_with_ci(name, ".shp"))
            rc = list_push(shps, name);
        free(dst);
    }
    if (!rc && st != ARCHIVE_EOF)
        rc = silt_err(SILT_EINVAL, "%s: cannot read the archive: %s", display, archive_error_string(ar));
    archive_read_free(ar);
    return rc;
}

/* Chooses the .shp of an extracted archive; *out is malloc'd. */
static int choose_shp(const char *display, const char *dir, const char *sub_path, const shp_list *shps, char **out)
{
    *out = NULL;
    shp_list m = {0};
    int rc = 0;
    silt_buf names = SILT_BUF_INIT;
    if (sub_path && *sub_path) {
        for (size_t i = 0; i < shps->n && !rc; i++)
            if (!strcmp(shps->v[i], sub_path))
                rc = list_push(&m, shps->v[i]);
        bool exact = m.n > 0;
        for (size_t i = 0; i < shps->n && !rc && !exact; i++)
            if (fnmatch(sub_path, shps->v[i], FNM_PATHNAME) == 0)
                rc = list_push(&m, shps->v[i]);
        if (!rc && m.n == 0) {
            rc = list_join(&names, shps);
            rc = rc ? rc
                    : silt_err(SILT_EINVAL, "%s: no .shp file in the archive matches subPath '%s' (found: %s)", display,
                               sub_path, shps->n ? names.data : "none");
        } else if (!rc && m.n > 1) {
            rc = list_join(&names, &m);
            rc = rc ? rc
                    : silt_err(SILT_EINVAL, "%s: several .shp files match subPath '%s': %s", display, sub_path,
                               names.data);
        }
    } else if (shps->n == 0) {
        rc = silt_err(SILT_EINVAL, "%s: the archive does not contain any .shp file", display);
    } else if (shps->n > 1) {
        rc = list_join(&names, shps);
        rc = rc ? rc
                : silt_err(SILT_EINVAL, "%s: the archive contains several .shp files (%s); set subPath to choose one",
                           display, names.data);
    } else {
        rc = list_push(&m, shps->v[0]);
    }
    if (!rc && !(*out = silt_path_join(dir, m.v[0], NULL)))
        rc = silt_err(SILT_ENOMEM, "out of memory");
    silt_buf_free(&names);
    list_free(&m);
    return rc;
}

/* ---- JSON text ---------------------------------------------------------- */

static bool valid_utf8(const unsigned char *s)
{
    while (*s) {
        unsigned c = *s;
        int n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
        if (n < 0)
            return false;
        s++;
        for (int i = 0; i < n; i++, s++)
            if ((*s & 0xC0) != 0x80)
                return false;
    }
    return true;
}

static int put_json_str(silt_buf *b, const char *s)
{
    bool latin1 = !valid_utf8((const unsigned char *)s);
    int rc = silt_buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p && !rc; p++) {
        unsigned c = *p;
        if (c == '"' || c == '\\')
            rc = silt_buf_printf(b, "\\%c", c);
        else if (c < 0x20)
            rc = silt_buf_printf(b, "\\u%04x", c);
        else if (latin1 && c >= 0x80)
            rc = silt_buf_printf(b, "%c%c", (char)(0xC0 | (c >> 6)), (char)(0x80 | (c & 0x3F)));
        else
            rc = silt_buf_putc(b, (char)c);
    }
    return rc ? rc : silt_buf_putc(b, '"');
}

/* ---- geometry ----------------------------------------------------------- */

static int put_pt(silt_buf *g, const SHPObject *o, int i)
{
    int rc = silt_buf_putc(g, '[');
    rc = rc ? rc : silt_read_json_number(g, o->padfX[i]);
    rc = rc ? rc : silt_buf_putc(g, ',');
    rc = rc ? rc : silt_read_json_number(g, o->padfY[i]);
    return rc ? rc : silt_buf_putc(g, ']');
}

static int put_ring(silt_buf *g, const SHPObject *o, int part)
{
    int start = o->panPartStart[part];
    int end = part + 1 < o->nParts ? o->panPartStart[part + 1] : o->nVertices;
    if (start < 0 || end > o->nVertices || start > end)
        return silt_err(SILT_ECORRUPT, "invalid part bounds");
    int rc = silt_buf_putc(g, '[');
    for (int i = start; i < end && !rc; i++) {
        if (i > start)
            rc = silt_buf_putc(g, ',');
        rc = rc ? rc : put_pt(g, o, i);
    }
    return rc ? rc : silt_buf_putc(g, ']');
}

static double ring_area2(const SHPObject *o, int part)
{
    int start = o->panPartStart[part];
    int end = part + 1 < o->nParts ? o->panPartStart[part + 1] : o->nVertices;
    double a = 0;
    for (int i = start; i + 1 < end; i++)
        a += o->padfX[i] * o->padfY[i + 1] - o->padfX[i + 1] * o->padfY[i];
    return a;
}

/* GeoJSON text of a shape into `g` (empty = null geometry). */
static int shape_geojson(silt_buf *g, const SHPObject *o, const char *display, int rec)
{
    if (o->nSHPType == SHPT_NULL || o->nVertices == 0)
        return 0;
    int rc = 0;
    switch (o->nSHPType) {
    case SHPT_POINT:
    case SHPT_POINTZ:
    case SHPT_POINTM:
        rc = silt_buf_puts(g, "{\"coordinates\":");
        rc = rc ? rc : put_pt(g, o, 0);
        return rc ? rc : silt_buf_puts(g, ",\"type\":\"Point\"}");
    case SHPT_MULTIPOINT:
    case SHPT_MULTIPOINTZ:
    case SHPT_MULTIPOINTM:
        rc = silt_buf_puts(g, "{\"coordinates\":[");
        for (int i = 0; i < o->nVertices && !rc; i++) {
            if (i)
                rc = silt_buf_putc(g, ',');
            rc = rc ? rc : put_pt(g, o, i);
        }
        return rc ? rc : silt_buf_puts(g, "],\"type\":\"MultiPoint\"}");
    case SHPT_ARC:
    case SHPT_ARCZ:
    case SHPT_ARCM: {
        if (o->nParts <= 1) {
            SHPObject one = *o;
            int zero = 0;
            one.nParts = 1;
            one.panPartStart = &zero;
            rc = silt_buf_puts(g, "{\"coordinates\":");
            rc = rc ? rc : put_ring(g, &one, 0);
            rc = rc ? rc : silt_buf_puts(g, ",\"type\":\"LineString\"}");
        } else {
            rc = silt_buf_puts(g, "{\"coordinates\":[");
            for (int p = 0; p < o->nParts && !rc; p++) {
                if (p)
                    rc = silt_buf_putc(g, ',');
                rc = rc ? rc : put_ring(g, o, p);
            }
            rc = rc ? rc : silt_buf_puts(g, "],\"type\":\"MultiLineString\"}");
        }
        break;
    }
    case SHPT_POLYGON:
    case SHPT_POLYGONZ:
    case SHPT_POLYGONM: {
        if (o->nParts < 1)
            return 0;
        /* count polygons: a clockwise ring (negative signed area) is an outer
         * ring; a hole before any outer ring starts a polygon too */
        int npoly = 0;
        for (int p = 0; p < o->nParts; p++)
            if (ring_area2(o, p) < 0 || p == 0)
                npoly++;
        rc = silt_buf_puts(g, npoly > 1 ? "{\"coordinates\":[[" : "{\"coordinates\":[");
        for (int p = 0; p < o->nParts && !rc; p++) {
            bool outer = p == 0 || ring_area2(o, p) < 0;
            if (p && outer)
                rc = silt_buf_puts(g, npoly > 1 ? "],[" : ",");
            else if (p)
                rc = silt_buf_putc(g, ',');
            rc = rc ? rc : put_ring(g, o, p);
        }
        rc = rc ? rc : silt_buf_puts(g, npoly > 1 ? "]],\"type\":\"MultiPolygon\"}" : "],\"type\":\"Polygon\"}");
        break;
    }
    default:
        return silt_err(SILT_EUNSUPPORTED, "%s: record %d: unsupported shape type %d (%s)", display, rec + 1,
                        o->nSHPType, SHPTypeName(o->nSHPType));
    }
    if (rc == SILT_ECORRUPT)
        rc = silt_err(SILT_ECORRUPT, "%s: record %d: invalid part offsets", display, rec + 1);
    return rc;
}

/* ---- attributes --------------------------------------------------------- */

typedef struct dbf_col {
    char name[XBASE_FLDNAME_LEN_READ + 1];
    char native;
    int decimals;
    const char *type; /* DuckDB type */
    bool skip;
} dbf_col;

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

static int put_attr(silt_buf *b, DBFHandle dbf, int rec, int f, const dbf_col *c)
{
    if (DBFIsAttributeNULL(dbf, rec, f))
        return silt_buf_puts(b, "null");
    const char *raw = DBFReadStringAttribute(dbf, rec, f);
    if (!raw)
        return silt_buf_puts(b, "null");
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s", raw);
    char *v = trim(tmp);
    if (!strcmp(c->type, "BIGINT") || !strcmp(c->type, "DOUBLE")) {
        char *end;
        errno = 0;
        if (!strcmp(c->type, "BIGINT")) {
            long long x = strtoll(v, &end, 10);
            if (!*v || *end || errno)
                return silt_buf_puts(b, "null");
            return silt_buf_printf(b, "%lld", x);
        }
        double d = strtod(v, &end);
        if (!*v || *end)
            return silt_buf_puts(b, "null");
        return silt_read_json_number(b, d);
    }
    if (!strcmp(c->type, "BOOLEAN")) {
        char ch = (char)toupper((unsigned char)v[0]);
        return silt_buf_puts(b, ch == 'T' || ch == 'Y' ? "true" : ch == 'F' || ch == 'N' ? "false" : "null");
    }
    if (!strcmp(c->type, "DATE")) {
        if (strlen(v) != 8 || strspn(v, "0123456789") != 8)
            return silt_buf_puts(b, "null");
        return silt_buf_printf(b, "\"%.4s-%.2s-%.2s\"", v, v + 4, v + 6);
    }
    return put_json_str(b, raw); /* strings keep inner spacing; shapelib trims */
}

static void shp_quiet(const char *message) { (void)message; }

int silt_read_shp_to_ndjson(const char *path, const char *display, const char *sub_path, const char *tmpdir,
                            const char *ndjson_path, silt_buf *columns)
{
    char *shp = NULL;
    int rc = 0;
    unsigned char magic[4] = {0};
    FILE *mf = fopen(path, "rb");
    if (!mf)
        return silt_err(errno == ENOENT ? SILT_ENOTFOUND : SILT_EIO, "%s: %s", display, strerror(errno));
    size_t got = fread(magic, 1, 4, mf);
    fclose(mf);
    if (got == 4 && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4) {
        shp_list shps = {0};
        rc = extract_zip(path, display, tmpdir, &shps);
        rc = rc ? rc : choose_shp(display, tmpdir, sub_path, &shps, &shp);
        list_free(&shps);
    } else if (got == 4 && magic[0] == 0 && magic[1] == 0 && magic[2] == 0x27 && magic[3] == 0x0a) {
        if (!(shp = strdup(path)))
            rc = silt_err(SILT_ENOMEM, "out of memory");
    } else {
        rc = silt_err(SILT_EINVAL, "%s: not a shapefile (.shp) or a ZIP archive", display);
    }
    if (rc) {
        free(shp);
        return rc;
    }
    /* shapelib reports problems through SAHooks.Error (stderr by default):
     * keep the library quiet, our own messages say what failed */
    SAHooks hooks;
    SASetupDefaultHooks(&hooks);
    hooks.Error = shp_quiet;
    SHPHandle h = SHPOpenLL(shp, "rb", &hooks);
    DBFHandle dbf = h ? DBFOpenLL(shp, "rb", &hooks) : NULL;
    if (!h) {
        free(shp);
        return silt_err(SILT_EINVAL, "%s: cannot open the shapefile (missing .shx or corrupt .shp)", display);
    }
    int nent = 0, stype = 0;
    SHPGetInfo(h, &nent, &stype, NULL, NULL);
    int nf = dbf ? DBFGetFieldCount(dbf) : 0;
    int nrec = dbf ? DBFGetRecordCount(dbf) : 0;
    dbf_col *cols = calloc((size_t)(nf > 0 ? nf : 1), sizeof *cols);
    if (!cols)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    if (!rc && dbf && nrec != nent)
        rc = silt_err(SILT_ECORRUPT, "%s: the .shp has %d records but the .dbf has %d", display, nent, nrec);
    for (int i = 0; i < nf && !rc; i++) {
        int width = 0, dec = 0;
        DBFGetFieldInfo(dbf, i, cols[i].name, &width, &dec);
        cols[i].native = DBFGetNativeFieldType(dbf, i);
        cols[i].decimals = dec;
        switch (cols[i].native) {
        case 'N': cols[i].type = dec == 0 ? "BIGINT" : "DOUBLE"; break;
        case 'F': cols[i].type = "DOUBLE"; break;
        case 'L': cols[i].type = "BOOLEAN"; break;
        case 'D': cols[i].type = "DATE"; break;
        default: cols[i].type = "VARCHAR";
        }
        cols[i].skip = !strcasecmp(cols[i].name, "geometry");
        if (cols[i].skip)
            continue;
        char *k = NULL;
        if (!valid_utf8((const unsigned char *)cols[i].name)) {
            rc = silt_err(SILT_EINVAL, "%s: dbf field %d has a name that is not UTF-8", display, i + 1);
            break;
        }
        k = silt_sql_str(cols[i].name);
        if (!k)
            rc = SILT_ENOMEM;
        rc = rc ? rc : silt_buf_printf(columns, "%s: '%s', ", k, cols[i].type);
        free(k);
    }
    rc = rc ? rc : silt_buf_puts(columns, "'geometry': 'VARCHAR'");
    FILE *out = rc ? NULL : fopen(ndjson_path, "wb");
    if (!rc && !out)
        rc = silt_err(SILT_EIO, "%s: cannot create temp file: %s", display, strerror(errno));
    silt_buf line = SILT_BUF_INIT, g = SILT_BUF_INIT;
    for (int r = 0; r < nent && !rc; r++) {
        silt_buf_clear(&line);
        silt_buf_clear(&g);
        rc = silt_buf_putc(&line, '{');
        for (int i = 0; i < nf && !rc; i++) {
            if (cols[i].skip)
                continue;
            rc = put_json_str(&line, cols[i].name);
            rc = rc ? rc : silt_buf_putc(&line, ':');
            rc = rc ? rc : put_attr(&line, dbf, r, i, &cols[i]);
            rc = rc ? rc : silt_buf_putc(&line, ',');
        }
        SHPObject *o = rc ? NULL : SHPReadObject(h, r);
        if (!rc && !o)
            rc = silt_err(SILT_ECORRUPT, "%s: record %d: cannot read the shape", display, r + 1);
        rc = rc ? rc : shape_geojson(&g, o, display, r);
        if (o)
            SHPDestroyObject(o);
        rc = rc ? rc : silt_buf_puts(&line, "\"geometry\":");
        if (!rc && g.len) {
            rc = silt_buf_putc(&line, '"');
            for (size_t i = 0; i < g.len && !rc; i++)
                rc = g.data[i] == '"' ? silt_buf_puts(&line, "\\\"") : silt_buf_putc(&line, g.data[i]);
            rc = rc ? rc : silt_buf_putc(&line, '"');
        } else if (!rc) {
            rc = silt_buf_puts(&line, "null");
        }
        rc = rc ? rc : silt_buf_puts(&line, "}\n");
        if (!rc && fwrite(line.data, 1, line.len, out) != line.len)
            rc = silt_err(SILT_EIO, "%s: cannot write temp file", display);
    }
    if (out && fclose(out) != 0 && !rc)
        rc = silt_err(SILT_EIO, "%s: cannot write temp file", display);
    silt_buf_free(&line);
    silt_buf_free(&g);
    free(cols);
    if (dbf)
        DBFClose(dbf);
    SHPClose(h);
    free(shp);
    return rc;
}
